package extractor

import "testing"

func TestRestoreSubjectZH(t *testing.T) {
	cases := []struct{ in, want string }{
		{"打算明年春天去云南徒步。", "我打算明年春天去云南徒步。"},
		{"姐姐在银行上班，住在青岛。", "我姐姐在银行上班，住在青岛。"},
		{"家里有两只兔子。", "我家有两只兔子。"},
		{"累得不行，后天要去北京面试。", "累得不行，我后天要去北京面试。"},
		{"他下周要去上海。", "他下周要去上海。"},
		{"会议不是周二，是周四。", "会议不是周二，是周四。"},
		{"去年夏天很热。", "去年夏天很热。"},
		{"天气真好。", "天气真好。"},
		{"I moved last week.", "I moved last week."},
	}
	for _, c := range cases {
		if got := restoreSubjectZH(c.in); got != c.want {
			t.Errorf("restoreSubjectZH(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
