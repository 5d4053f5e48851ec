package workload

import "strings"

// The vocabulary is written by hand, roughly in order of how often the words
// turn up in engineering chat, because the rank is what the Zipf draw uses:
// the first words are the frequent ones. Verbs are regular so that the
// inflected forms built below are real English; they feed the stemmer.

var nounList = strings.Fields(`
time issue problem thing way day team data user question idea update change
work code test service request error job result plan file version system
project doc meeting week people note log query server release feature fix
call point task report value part list number message bug config table case
page model build step name morning cache client branch review account memory
status ticket deploy minute hour price cost process reason detail option
schema index field record event queue worker thread limit size timeout retry
connection pool database backend frontend endpoint route payload response
latency throughput metric alert dashboard incident outage rollback migration
script container cluster node region zone disk volume network packet socket
token session cookie header secret key certificate permission role policy
customer vendor contract invoice budget deadline milestone roadmap sprint
standup demo customer document spreadsheet slide design sketch
draft comment thread channel email inbox calendar lunch coffee weekend trip
vacation family kid dog cat car flight hotel train weather movie book game
music song concert dinner friend party gift garden kitchen house
apartment office desk chair laptop phone screen keyboard monitor printer
battery charger cable router backup snapshot archive bucket object blob
tenant agent prompt embedding vector search ranking relevance recall
precision benchmark baseline experiment dataset sample label feedback score
summary context window batch stream pipeline stage operator scheduler cron
trigger webhook plugin library package module dependency import interface
struct method function variable constant pointer slice map channel goroutine
mutex lock deadlock race panic stack trace profile heap allocation garbage
compiler linter formatter editor terminal shell command flag argument path
directory folder repo commit patch diff merge conflict rebase tag pipeline
runner artifact image registry manifest chart template variable secret
quota usage bill discount refund payment order cart product catalog stock
warehouse shipment delivery address country city street weather forecast
holiday summer winter spring autumn evening night afternoon noon month year
doctor appointment school class lesson homework exam teacher student course
recipe pasta pizza salad soup bread cheese fruit apple banana orange tea
beer wine water bike run walk hike swim gym yoga match season player coach
fan stadium museum gallery painting photo camera video podcast episode
article blog post newsletter headline story joke meme reaction emoji sticker
habit goal mood energy sleep stress health break focus priority blocker risk
assumption constraint requirement estimate guess tradeoff decision approval
owner reviewer author maintainer contributor intern manager director lead
engineer designer analyst researcher support operator admin guest visitor

approach architecture attachment audience backlog bandwidth banner bottleneck
boundary bucket buffer bundle button calculation campaign candidate capacity
category change checklist checkpoint chunk citation claim column committee
compression concern conclusion condition conference consensus consumer
contact content conversation copy counter coverage credential criteria
cursor cycle database date deadline default definition delay delta demand
deployment description detail device dialog difference dimension discussion
domain download driver duration effort element encoding entry environment
estimate evaluation evidence example exception expectation expense export
extension factor failure fallback figure filter firmware flow folder footer
fork fragment framework gap gateway generation goal grant graph guide handler
hash header highlight history host hotfix identity impact implementation
improvement input insight instance integration interval inventory issue item
iteration journey kernel keyword layer layout leader lesson level license
lifecycle link load location logic lookup loop machine mailbox maintenance
mapping market measure mechanism mention merge message migration minimum
mistake mode monitor motivation namespace negotiation notebook notice
notification number objective offset onboarding opinion opportunity option
outcome output overhead owner package parameter partition partner password
pattern peak performance phase picture pilot placeholder platform portal
position preference presentation preview principle procedure producer
program progress prompt property proposal protocol prototype provider proxy
purpose quality quarter question queue range rate ratio reader recipe
recommendation reference regression relationship reminder replica replica
repository request reservation resource response retention revenue revision
rollout rotation rule runtime sandbox scenario scope screen section segment
selection sequence setting setup shard shortcut signal signature skill slot
solution source spec speed spike sponsor staging standard statement storage
strategy structure subscription suggestion supplier survey switch symptom
syntax target tax technique tenant terminal territory theme threshold
timeline timestamp tool topic traffic training transaction transfer
translation trend trial tutorial type upload usage user utility validation
variant vendor version view visibility volume vote warning webinar widget
wiki wizard workaround workflow workload workshop writer
airport apartment backpack bakery beach breakfast cafe candle carpet
concert cousin dentist dessert dinner festival fridge grandma haircut hobby
jacket lake laundry mountain neighbor nephew niece painting parcel picnic
pillow plant puzzle rain receipt restaurant river sandwich shoes snack snow
sofa sunset tennis ticket traffic umbrella uncle village wallet wedding
`)

var verbList = strings.Fields(`
check look want need work call try start help ask show fix add update
change use move open close load save test deploy push pull merge review
plan finish wait print clean handle return create delete remove insert
restart reboot install upgrade configure enable disable allow block debug
trace profile measure monitor alert page escalate assign track report
schedule book cancel confirm approve reject suggest recommend prefer
decide agree consider compare explain mention remember forget learn share
send reply forward attach mark flag tag label filter sort search index
cache store fetch stream batch retry throttle limit scale shard replicate
restore migrate rename refactor document comment annotate verify
validate parse render format compile benchmark optimize tune patch release
revert ship announce demo present discuss clarify answer
order pay bill refund deliver collect count rank score embed recall
join leave visit travel cook bake walk jog play watch listen enjoy miss
visit celebrate invite thank greet laugh smile worry relax rest stay

accept access adjust align analyze apply archive arrange automate avoid
backfill balance bump capture chase clone combine complain complete compress
connect contact convert copy correct crash decode decrypt delay deprecate
describe detect download draft drain edit encode encrypt ensure estimate
evaluate expect expire explore export extend extract fail follow force
generate group guess highlight ignore implement import improve include
inspect integrate investigate iterate kick label load lock log manage map
match mention mock notice notify observe offer onboard own pair pause
poll populate predict prepare prevent prioritize process promote propose
protect provide publish purge queue reach read rebuild receive record
reduce register reload remind repair repeat replace reproduce request
require reset resize resolve respond rotate route sample sanitize scan
select serve sign simplify skip snooze solve split squash stage stub submit
summarize support suspend swap sync toggle transfer translate trigger trim
unblock unlock upload vote wrap
`)

var adjList = strings.Fields(`
new good small big quick slow old great important simple clear ready
stable flaky broken healthy busy free full empty large tiny high low
fast late early recent current previous next final main default custom
internal external public private shared local remote global primary
secondary critical minor major urgent blocking optional required valid
invalid empty stale fresh warm cold hot noisy quiet weird strange nice
awesome terrible fine happy sad tired excited curious careful safe risky
expensive cheap cheaper faster slower better worse cleaner simpler lazy
eager manual automatic weekly daily monthly hourly quarterly annual

accurate active aggressive available average basic brief broken bulk
careful central clean clever closed common complete complex concurrent
consistent constant correct crazy creative dangerous dedicated deep
detailed different difficult dirty distributed duplicate dynamic easy
efficient elastic empty encrypted endless entire exact excellent experimental
extra fair familiar famous flexible fragile friendly funny generic gentle
hidden huge idle immutable incremental initial interesting legacy light
limited live long loose lucky massive messy missing modern mutable narrow
native neat nervous normal obvious odd offline online open orphaned partial
pending perfect persistent plain pleasant polite popular possible powerful
precise pretty proper random rare raw readonly real reasonable reliable
remote repeated responsive rough round scary secure serious sharp short
silent similar smart smooth soft solid sparse special specific stable
standard steady sticky strict strong stuck sudden sunny sweet synthetic
temporary tight tricky typical unclear unknown unusual useful vague visible
wide wild wise wrong young
`)

// Function words and chat fillers: drawn with their own Zipf so the glue
// between content words looks like chat rather than a word salad.
var glueList = strings.Fields(`
the a to and of in is it that for on with this we be i you
not are have so but as at can if or was just do will all
about there what from they my me your by our up out when one
also maybe then now still really actually probably already again
here too very only even though because since until while after before
`)

var firstNames = strings.Fields(`
Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia
Peggy Rupert Sybil Trent Victor Walter Yara Zoe Aaron Bella Chen Diego
Elena Farah Gustavo Hana Igor Jamal Kenji Leila Marta Nikolai Omar Priya
Quinn Rosa Sanjay Tomas Uma Vera Wei Xavier Yusuf Zainab Ahmed Bianca
Carlos Daria Emeka Fatima Goran Hiro Ines Jonas Kofi Lucia Mateo Nadia
Oskar Paula Ravi Sofia Tariq Ulla Vikram Wanda Ximena Yuki Zeynep Anya
Boris Chloe Dmitri Esther Felix Gemma Hugo Isla Jasper Kira Liam Mina
`)

var serviceParts1 = strings.Fields(`
billing auth payments search ingest notify report checkout profile inventory
gateway catalog ledger session media export import scheduler metrics audit
`)

var serviceParts2 = strings.Fields(`api service worker gateway svc daemon proxy job`)

var projectNames = strings.Fields(`
Falcon Atlas Orion Nimbus Phoenix Aurora Zephyr Cobalt Helix Quartz Nova
Vega Lumen Apex Summit Harbor Beacon Cascade Meridian Polaris Sequoia Tundra
Borealis Comet Drift Ember Fjord Glacier Horizon Ion Juniper Kestrel Lotus
Mosaic Nebula Onyx Prism Quill Raven Sierra Tango Umbra Vertex Willow
`)

var dbNames = []string{
	"Postgres 16", "Postgres 15", "MySQL 8", "SQLite", "CockroachDB", "Cassandra",
	"ClickHouse", "DynamoDB", "MongoDB 7", "Redis 7", "ScyllaDB", "TiDB",
	"FoundationDB", "Pebble", "BadgerDB", "DuckDB",
}

var langNames = []string{
	"Go", "Rust", "Python", "TypeScript", "Kotlin", "Java", "Elixir", "Zig", "C++", "Swift",
}

var techTerms = strings.Fields(`
HikariCP pgbouncer Kafka Redis Postgres Kubernetes Helm Terraform Grafana
Prometheus Loki Jaeger OpenTelemetry nginx Envoy gRPC protobuf GraphQL
Docker systemd Ansible Vault Consul etcd NATS RabbitMQ Celery Sidekiq
Webpack Vite React Svelte Tailwind Django Flask FastAPI Gin Echo Fiber
pprof Sentry Datadog PagerDuty Jenkins Buildkite ArgoCD Istio Linkerd
Elasticsearch OpenSearch Meilisearch Qdrant FAISS pgvector Chroma Pinecone
S3 GCS Lambda CloudRun Fargate Snowflake BigQuery dbt Airflow Spark Flink
`)

var weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}

var monthNames = []string{
	"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December",
}

var topicTags = strings.Fields(`
database performance deploy incident planning billing auth search frontend
backend infra testing security hiring oncall budget design docs personal
travel food health release migration observability
`)

var taskTypes = []string{
	"debugging", "planning", "coding", "research", "ops", "review", "smalltalk", "support",
}

// Chinese vocabulary: short common words, so CJK bigram tokenisation and
// mixed-script text are exercised.
var zhNouns = strings.Fields(`
服务 数据库 连接池 缓存 接口 日志 配置 版本 问题 方案 测试 部署 上线 会议
项目 需求 文档 用户 客户 性能 延迟 内存 磁盘 网络 集群 节点 队列 任务
报警 监控 指标 代码 分支 合并 发布 回滚 预算 计划 周报 同事 经理 周末
`)

var zhVerbs = strings.Fields(`
检查 修复 更新 讨论 确认 安排 优化 重启 迁移 调整 评审 提交 测试 部署
跟进 记录 分析 排查 处理 整理
`)

var zhAdjs = strings.Fields(`重要 紧急 稳定 缓慢 简单 复杂 新的 旧的 正常 异常`)

// inflect builds the regular inflected forms of the verbs so the vocabulary
// holds a few thousand surface forms with realistic morphology.
func inflect(v string) (s, ed, ing string) {
	if f, ok := irregular[v]; ok {
		return f[0], f[1], f[2]
	}
	last := v[len(v)-1]
	switch {
	case doubled[v]:
		s, ed, ing = v+"s", v+string(last)+"ed", v+string(last)+"ing"
	case strings.HasSuffix(v, "e"):
		s, ed, ing = v+"s", v+"d", v[:len(v)-1]+"ing"
	case last == 'y' && !strings.ContainsRune("aeiou", rune(v[len(v)-2])):
		s, ed, ing = v[:len(v)-1]+"ies", v[:len(v)-1]+"ied", v+"ing"
	case strings.HasSuffix(v, "sh") || strings.HasSuffix(v, "ch") || last == 's' || last == 'x':
		s, ed, ing = v+"es", v+"ed", v+"ing"
	default:
		s, ed, ing = v+"s", v+"ed", v+"ing"
	}
	return s, ed, ing
}

var irregular = map[string][3]string{
	"forget": {"forgets", "forgot", "forgetting"},
	"send":   {"sends", "sent", "sending"},
	"pay":    {"pays", "paid", "paying"},
	"leave":  {"leaves", "left", "leaving"},
	"agree":  {"agrees", "agreed", "agreeing"},
	"read":   {"reads", "read", "reading"},
}

// doubled holds the verbs whose final consonant doubles: plan, planned.
var doubled = map[string]bool{
	"plan": true, "ship": true, "tag": true, "flag": true, "jog": true,
	"debug": true, "embed": true, "prefer": true, "format": true,
	"swap": true, "skip": true, "log": true, "map": true, "drop": true,
	"stop": true, "submit": true, "scan": true, "wrap": true, "stub": true,
	"trim": true,
}

func plural(n string) string {
	last := n[len(n)-1]
	switch {
	case last == 'y' && !strings.ContainsRune("aeiou", rune(n[len(n)-2])):
		return n[:len(n)-1] + "ies"
	case strings.HasSuffix(n, "sh") || strings.HasSuffix(n, "ch") || last == 's' || last == 'x':
		return n + "es"
	default:
		return n + "s"
	}
}
