package retriever

import (
	"math"
	"testing"
)

// cl100kSamples are texts written for this test with their exact cl100k_base token
// counts, produced with the gpt-tokenizer npm package 4.0.0
// (import { encode } from 'gpt-tokenizer/encoding/cl100k_base'; encode(text).length).
var cl100kSamples = []struct {
	lang   string
	tokens int
	text   string
}{
	{"en", 35, "The user prefers vegetarian food and dislikes meetings before 10am. She usually works from home on Fridays and asks that reminders arrive the evening before, not on the morning itself."},
	{"en", 39, "When deploying to production, run the migrations first, then restart the workers one at a time. If a worker fails its health check twice, roll back the release and page the on-call engineer."},
	{"en", 50, "Order ORD-2024-88123 was shipped on March 3rd via DHL with tracking number 4471-9920-1134. The customer asked for the invoice to be sent to billing@example.com instead of the personal address."},
	{"en", 34, "I'm allergic to peanuts, so please never suggest Thai satay or peanut butter recipes. Tree nuts are fine, and I really like almonds and cashews in salads."},
	{"en", 38, "Remember: the quarterly report is due on the last Friday of every quarter. Bob reviews the numbers, Alice writes the summary, and the finance team signs off before it goes to the board."},
	{"en", 43, "She said the API returned HTTP 429 (Too Many Requests) after roughly 3,000 calls per minute, so we added exponential backoff with jitter and a token bucket limited to 40 requests per second."},
	{"en", 31, "Our team decided to move the weekly sync from Monday morning to Tuesday afternoon, because Monday mornings are spent clearing tickets and emails that piled up over the weekend."},
	{"en", 32, "My daughter started violin lessons last September. Her teacher recommends thirty minutes of practice every day, and the spring recital is scheduled for the second Saturday of May."},
	{"en", 35, "The migration plan has three phases: copy the historical data in nightly batches, dual-write new records for two weeks while comparing results, and finally switch reads to the new cluster."},
	{"en", 41, "I usually fly with the same airline because of the loyalty program. I prefer an aisle seat near the front, no red-eye flights, and I always check one bag when travelling for more than four days."},
	{"zh", 62, "我叫李华，今年三十二岁，在杭州的一家电商公司做产品经理。平时喜欢跑步和看书，周末经常带女儿去西湖边散步。"},
	{"zh", 64, "上周五我们团队开了一个复盘会，主要讨论了双十一期间服务器扩容的问题。大家一致认为应该提前两周做压力测试，而不是等到最后一天。"},
	{"zh", 70, "我对海鲜过敏，吃虾会起疹子，所以以后推荐餐厅的时候请避开海鲜为主的店。另外我不太能吃辣，微辣就可以了。"},
	{"zh", 49, "明天早上九点要去医院复查，下午两点有一个客户电话会议，晚上七点和老同学在公司附近吃饭。"},
	{"zh", 54, "这个项目的截止日期是下个月十五号，目前前端页面已经完成了百分之八十，后端接口还剩下支付和退款两个模块没有联调。"},
	{"zh", 50, "我更喜欢用邮件沟通重要的事情，因为有记录可以查。即时消息只适合简单的确认，比如开会时间或者文件已经收到。"},
	{"zh", 57, "去年冬天我们全家去了哈尔滨看冰雕，天气特别冷，最低温度零下二十八度，但是孩子们玩得非常开心。"},
	{"zh", 54, "数据库迁移之前一定要先备份，然后在测试环境跑一遍，确认没有问题再上线。上次因为没有备份，差点丢了一整天的订单数据。"},
	{"zh", 54, "她说新版本的应用启动速度明显变快了，但是在老款手机上偶尔会闪退，希望开发团队尽快修复这个问题。"},
	{"zh", 63, "我每天早上六点半起床，先喝一杯温水，然后做二十分钟的瑜伽，七点半出门坐地铁去上班，大概需要四十分钟。"},
	{"zh", 55, "请帮我记住：我的护照号码不要保存在任何地方，信用卡信息也不要记录。涉及隐私的内容一律不要写进长期记忆。"},
	{"zh", 61, "关于年终奖的发放方案，人事部门建议按照绩效等级分成三档，第一档发四个月工资，第二档发两个月，第三档发一个月。"},
	{"zh", 63, "我的猫叫小白，是一只三岁的英国短毛猫，最喜欢吃鸡肉味的猫粮，每年春天需要打一次疫苗。"},
	{"zh", 44, "如果用户连续三次输入错误的密码，系统应该锁定账户十五分钟，并且给绑定的手机号发送一条提醒短信。"},
	{"zh", 50, "我们决定把每周的例会从周一上午改到周二下午，因为周一上午大家通常都在处理周末积压的邮件和工单。"},
	{"mixed", 37, "用户喜欢用 Go 写后端代码，但是 prefers Python for data analysis，周末会用 Jupyter 做一些个人项目。"},
	{"mixed", 32, "My name is 王小明 and I live in 北京, working at 字节跳动 as a product manager since 2021."},
	{"mixed", 41, "下周一 (Monday) 的 standup 改到 9:30，地点在 3 楼会议室 B，记得带上 Q3 的 roadmap。"},
	{"mixed", 33, "The password policy: 至少 12 个字符, must include digits and symbols, 并且每 90 天更换一次。"},
	{"mixed", 36, "请记住我的订单号是 ORD-2024-88123，预计下周三 (Wednesday) 送达，快递是 SF Express。"},
	{"mixed", 33, "We had dinner at 海底捞 last Friday; the 番茄锅底 was great but the wait was almost an hour."},
	{"mixed", 32, "我在学习 Kubernetes，目前卡在 StatefulSet 和 PersistentVolume 的配置上，需要一些 step-by-step 的例子。"},
	{"mixed", 25, "客户说 the new dashboard is much faster，但是导出 CSV 的按钮在 Safari 上不起作用。"},
}

func TestEstimateTokensAgainstCl100k(t *testing.T) {
	t.Parallel()
	real, est := map[string]int{}, map[string]int{}
	for _, s := range cl100kSamples {
		got := EstimateTokens(s.text)
		real[s.lang] += s.tokens
		est[s.lang] += got
		// Single paragraphs vary with which characters cl100k happens to merge; the
		// bound is looser than for whole texts.
		if e := relErr(got, s.tokens); e > 0.20 {
			t.Errorf("%s: estimate %d, cl100k %d (%.0f%%): %q", s.lang, got, s.tokens, e*100, s.text)
		}
	}
	for lang, r := range real {
		if e := relErr(est[lang], r); e > 0.15 {
			t.Errorf("%s overall: estimate %d, cl100k %d (%.0f%%)", lang, est[lang], r, e*100)
		}
		t.Logf("%s: estimate %d, cl100k %d", lang, est[lang], r)
	}
}

func relErr(got, want int) float64 { return math.Abs(float64(got-want)) / float64(want) }

func TestEstimateTokensSmall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"ok", 1},
		{"Hello, world!", 4}, // cl100k: 4
		{"我们明天下午三点开会。", 11}, // cl100k: 10
	}
	for _, tc := range tests {
		if got := EstimateTokens(tc.in); got != tc.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestEstimateTokensConcatenation checks what budget enforcement relies on: joining
// lines with newlines costs at most the sum of the parts plus one per newline.
func TestEstimateTokensConcatenation(t *testing.T) {
	t.Parallel()
	var all string
	sum := 0
	for i, s := range cl100kSamples {
		if i > 0 {
			all += "\n"
			sum++
		}
		all += s.text
		sum += EstimateTokens(s.text)
	}
	if got := EstimateTokens(all); got > sum {
		t.Errorf("joined estimate %d exceeds the sum of parts %d", got, sum)
	}
}
