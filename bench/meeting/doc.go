// Package meeting generates a realistic bilingual meeting for lazymem's
// meeting-assistant tests and benchmarks: about 5,000 utterances over an
// hour and a half, Chinese-led with some English, with key moments written
// by hand and the questions a user asks about them, live and afterwards,
// each with its evidence.
//
// The meeting is a product launch review held on Tuesday 2026-12-01 from
// 14:00 Beijing time. Seven speakers take part: a host (王磊), two PMs
// (李娜, Alice), two engineers (张伟, 赵强) and two people from finance
// (陈静, Bob); Alice and Bob speak mostly English. Between the key moments
// the turns are filler made from seeded templates: back-channels ("嗯",
// "对", "OK"), screen-sharing and process talk, status chatter about
// modules and metrics with numbers, and distractors that share words with
// the key moments ("预算表在共享盘里", "上线流程文档在 wiki 上") so a search
// has to tell them apart. Turn-taking favours the host and avoids a speaker
// following themself; gaps are short for back-channels and scaled so the
// meeting lasts Config.Duration.
//
// Key moments (Moment, in meeting order): a budget issue raised by 陈静
// (finance), a launch-date decision (十二月十五号) that the host later
// revises (十二月二十二号), action items with owners and dates (赵强 notifies
// ops by 下周一下午两点, Alice updates the pricing page by Friday, 张伟
// delivers the load-test report 周五前), preferences, a budget decision and
// a closing summary. Their text is fixed; only their position moves a
// little with the seed. Questions (Question) come in Chinese and English;
// live ones carry the utterance after which they are asked, and every
// question lists the keys of the moments that answer it.
//
// Everything is a function of Config.Seed: the same seed gives the same
// meeting byte for byte.
package meeting
