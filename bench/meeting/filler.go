package meeting

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// backChannels are the short acknowledgements that make up a good part of
// any real meeting transcript.
var backChannels = []string{
	"嗯", "嗯嗯", "对", "对对", "好的", "好", "是的", "明白", "收到", "可以", "没问题", "行", "了解", "哦", "嗯，对",
	"OK", "right", "got it", "sure", "yeah", "mm-hmm", "makes sense",
}

var (
	modulesZH  = []string{"登录模块", "支付接口", "推荐系统", "数据看板", "消息队列", "搜索服务", "订单系统", "用户中心", "网关", "日志平台"}
	modulesEN  = []string{"login service", "payment API", "recommendation engine", "dashboard", "message queue", "search service", "order service", "gateway"}
	metricsZH  = []string{"延迟", "错误率", "转化率", "留存", "QPS", "CPU 使用率", "内存占用", "超时率"}
	metricsEN  = []string{"latency", "error rate", "conversion", "retention", "QPS", "CPU usage", "timeout rate"}
	peopleZH   = []string{"王磊", "李娜", "张伟", "赵强", "陈静"}
	weekdaysZH = []string{"周一", "周二", "周三", "周四", "周五"}
)

// templatesZH and templatesEN are filler sentences; {m} is a module, {x} a
// metric, {n} a number, {p} a person, {d} a weekday. Some share words with
// the key moments (预算, 上线, 运维, pricing) without carrying their content:
// distractors a search has to rank below the real moment.
var templatesZH = []string{
	"我这边看一下{m}的数据。",
	"{m}的{x}这周基本持平。",
	"{m}上周的{x}大概是{n}，比之前好一点。",
	"屏幕能看到吗？",
	"稍等，我共享一下屏幕。",
	"这个我们会后再细聊。",
	"我补充一点，{m}那边还有几个小问题。",
	"{p}刚才那个图能再放一下吗？",
	"声音有点卡，我重新连一下。",
	"这个数字我回头再核对一下。",
	"{m}的{x}在高峰期会涨到{n}左右。",
	"我记得{m}上个月也出过类似的情况。",
	"这块的文档在 wiki 上，大家可以看看。",
	"上线流程文档在 wiki 上，有需要可以看。",
	"预算表在共享盘里，大家有空看一下。",
	"运维群里昨天有人问{m}的监控。",
	"{d}的周会材料我已经放到群里了。",
	"我们先过下一个议题吧。",
	"这个问题之前讨论过，结论还在文档里。",
	"{m}那边的告警有点多，{x}偶尔抖一下。",
	"大概有{n}个用户反馈了{m}的问题。",
	"我理解的是{m}先不动。",
	"等一下，我找一下链接。",
	"前面那页再翻回去一下。",
	"这个我没意见。",
	"{p}你那边有补充吗？",
	"测试环境现在有{n}台机器。",
	"{m}的改动已经提了代码，还在评审。",
	"日志里能看到{m}偶尔超时。",
	"我们组这周主要在做{m}的优化。",
}

var templatesEN = []string{
	"Let me pull up the {m} numbers.",
	"The {m} {x} looks flat this week.",
	"Can everyone see my screen?",
	"Sorry, you cut out for a second.",
	"I think {m} had something similar last month.",
	"We can take that offline.",
	"The {x} on the {m} peaked around {n} yesterday.",
	"Quick question on the {m}, is that the new version?",
	"The pricing spreadsheet is in the shared drive.",
	"I'll drop the link in the chat.",
	"Let's move on to the next item.",
	"That matches what I saw in the dashboard.",
	"Just to clarify, this is the staging number, right?",
	"I need to double check that figure.",
}

type filler struct {
	r         *rand.Rand
	total     float64
	cumWeight []float64
}

func newFiller(r *rand.Rand) *filler {
	f := &filler{r: r}
	for _, s := range Speakers {
		f.total += s.weight
		f.cumWeight = append(f.cumWeight, f.total)
	}
	return f
}

// turn returns a filler utterance; prev is the previous speaker, who
// rarely speaks twice in a row.
func (f *filler) turn(prev string) Utterance {
	sp := f.speaker()
	for tries := 0; sp.Name == prev && tries < 3; tries++ {
		sp = f.speaker()
	}
	var text string
	switch x := f.r.Float64(); {
	case x < 0.32:
		text = backChannels[f.r.IntN(len(backChannels))]
		if sp.English < 0.5 && isASCII(text) && f.r.Float64() < 0.7 {
			text = backChannels[f.r.IntN(15)] // mostly Chinese back-channels from Chinese speakers
		}
	case f.r.Float64() < sp.English:
		text = f.fill(templatesEN[f.r.IntN(len(templatesEN))], true)
	default:
		text = f.fill(templatesZH[f.r.IntN(len(templatesZH))], false)
	}
	return Utterance{Speaker: sp.Name, Role: sp.Role, Text: text}
}

func (f *filler) speaker() Speaker {
	x := f.r.Float64() * f.total
	for i, c := range f.cumWeight {
		if x < c {
			return Speakers[i]
		}
	}
	return Speakers[len(Speakers)-1]
}

func (f *filler) fill(t string, en bool) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 || i+2 >= len(t) {
			b.WriteString(t)
			return b.String()
		}
		b.WriteString(t[:i])
		switch t[i+1] {
		case 'm':
			if en {
				b.WriteString(modulesEN[f.r.IntN(len(modulesEN))])
			} else {
				b.WriteString(modulesZH[f.r.IntN(len(modulesZH))])
			}
		case 'x':
			if en {
				b.WriteString(metricsEN[f.r.IntN(len(metricsEN))])
			} else {
				b.WriteString(metricsZH[f.r.IntN(len(metricsZH))])
			}
		case 'n':
			fmt.Fprintf(&b, "%d", 5+f.r.IntN(995))
		case 'p':
			b.WriteString(peopleZH[f.r.IntN(len(peopleZH))])
		case 'd':
			b.WriteString(weekdaysZH[f.r.IntN(len(weekdaysZH))])
		}
		t = t[i+3:]
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
