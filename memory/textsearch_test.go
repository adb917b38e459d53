package memory

import "testing"

func TestSearchText(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"以后安排会议", "以后 后安 安排 排会 会议"},
		{"I prefer 三楼 rooms", "I prefer 三楼 rooms"},
		{"订单ORD-2024-88123已发货", "订单 ORD-2024-88123 已发 发货"},
		{"好", "好"},
		{"会议，周五", "会议 周五"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := SearchText(tt.in); got != tt.want {
			t.Errorf("SearchText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
