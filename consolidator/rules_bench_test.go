package consolidator

import "testing"

// benchTexts are memories of the kinds the resolver sees most: statements of habits and
// places, in English and Chinese, few of them restrictions.
var benchTexts = []string{
	"The user orders noodles when visiting Porto with a colleague, usually at lunch on Fridays.",
	"The user plays chess at the club on Tuesdays.",
	"The user's sister lives in Leeds and works as a translator.",
	"The user no longer uses a spreadsheet for budgeting in the evening.",
	"用户喜欢和朋友在成都吃火锅，一般是周五晚上去",
	"用户每周三去图书馆，一般待两个小时左右",
	"用户的表哥住在西安，在一所中学当老师",
	"用户不再用笔记本记账了",
}

// BenchmarkRestricted is what reading a candidate's restriction costs (newRuling runs
// it for every candidate of a constraint or preference).
func BenchmarkRestricted(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		restricted(benchTexts[i%len(benchTexts)])
	}
}

// BenchmarkFeatures is what the rules read of a text (run for every neighbour of
// every candidate).
func BenchmarkFeatures(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		features(benchTexts[i%len(benchTexts)])
	}
}
