package extractor

import (
	"testing"
	"time"
)

// refMonday is Monday 2026-01-05 09:00 UTC, the reference time of the date tests.
var refMonday = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

func TestResolveTime(t *testing.T) {
	t.Parallel()
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		text string
		want time.Time
	}{
		{"today", refMonday}, // keeps the time of day
		{"I'm busy tonight", refMonday},
		{"yesterday the payment failed", day(2026, 1, 4)},
		{"Yesterday", day(2026, 1, 4)},
		{"tomorrow", day(2026, 1, 6)},
		{"last night", day(2026, 1, 4)},
		{"the day after tomorrow", day(2026, 1, 7)},
		{"the day before yesterday", day(2026, 1, 3)},
		{"next Monday", day(2026, 1, 12)},
		{"next Friday", day(2026, 1, 16)},
		{"this Friday", day(2026, 1, 9)},
		{"this Sunday", day(2026, 1, 11)},
		{"last Friday", day(2026, 1, 2)},
		{"last Monday", day(2025, 12, 29)},
		{"coming Monday", day(2026, 1, 12)},
		{"next week", day(2026, 1, 12)},
		{"last week", day(2025, 12, 29)},
		{"this week", day(2026, 1, 5)},
		{"next weekend", day(2026, 1, 17)},
		{"in 3 days", day(2026, 1, 8)},
		{"in a week", day(2026, 1, 12)},
		{"2 days ago", day(2026, 1, 3)},
		{"two weeks ago", day(2025, 12, 22)},
		// Months and years (ref is January 2026).
		{"in April", day(2026, 4, 1)},
		{"next January", day(2027, 1, 1)},
		{"last January", day(2025, 1, 1)},
		{"last March", day(2025, 3, 1)},
		{"next Sept", day(2026, 9, 1)},
		{"in three months", day(2026, 4, 1)},
		{"two years ago", day(2024, 1, 1)},
		{"last year", day(2025, 1, 1)},
		{"next year", day(2027, 1, 1)},
		{"去年", day(2025, 1, 1)},
		{"后年", day(2028, 1, 1)},
		{"next month", day(2026, 2, 1)},
		{"last month", day(2025, 12, 1)},
		{"until Friday", day(2026, 1, 9)},
		{"by Monday", day(2026, 1, 5)},
		{"今天", refMonday},
		{"昨天", day(2026, 1, 4)},
		{"前天", day(2026, 1, 3)},
		{"明天下午开会", day(2026, 1, 6)},
		{"后天", day(2026, 1, 7)},
		{"大后天", day(2026, 1, 8)},
		{"大前天", day(2026, 1, 2)},
		{"昨晚", day(2026, 1, 4)},
		{"下周一", day(2026, 1, 12)},
		{"下周五", day(2026, 1, 16)},
		{"下星期五", day(2026, 1, 16)},
		{"下礼拜五", day(2026, 1, 16)},
		{"下个周五", day(2026, 1, 16)},
		{"下周日", day(2026, 1, 18)},
		{"这周五", day(2026, 1, 9)},
		{"本周五", day(2026, 1, 9)},
		{"上周五", day(2026, 1, 2)},
		{"这周末", day(2026, 1, 10)},
		{"下周", day(2026, 1, 12)},
		{"上周", day(2025, 12, 29)},
		{"下个月", day(2026, 2, 1)},
		{"本月", day(2026, 1, 1)},
		{"3天后", day(2026, 1, 8)},
		{"三天后", day(2026, 1, 8)},
		{"十天后", day(2026, 1, 15)},
		{"5天前", day(2025, 12, 31)},
		{"两周后", day(2026, 1, 19)},
		{"直到周五", day(2026, 1, 9)},
		{"周三之前", day(2026, 1, 7)},
		// A day named alone: the tense picks the one before or the one ahead.
		{"the vet visit is on the 20th", day(2026, 1, 20)},
		{"we're meeting on the 3rd", day(2026, 2, 3)},
		{"I paid the deposit on the 2nd", day(2026, 1, 2)},
		{"we met on Saturday", day(2026, 1, 3)},
		{"the recital is on Saturday", day(2026, 1, 10)},
		{"I'm off on Monday", day(2026, 1, 5)},
		{"我12号去面试", day(2026, 1, 12)},
		{"我2号交了押金", day(2026, 1, 2)},
		{"I started the course in October", day(2025, 10, 1)},
		{"I joined the choir in March", day(2025, 3, 1)},
		{"we're moving in March", day(2026, 3, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			got, ok := ResolveTime(tt.text, refMonday)
			if !ok || !got.Equal(tt.want) {
				t.Fatalf("ResolveTime(%q) = %v, %v; want %v", tt.text, got, ok, tt.want)
			}
		})
	}
}

func TestResolveTimeNone(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"", "hello", "每周五前交周报", "I like Fridays", "我们下次再聊", "every Friday",
		"no calls on Sundays please", "never book me on Friday", "坐3号线过去", "on the 14th of June", "I'm free on Saturday mornings", "I get paid on the 25th", "it lapses in June 2027", "瑜伽课挪到周日了"} {
		if got, ok := ResolveTime(text, refMonday); ok {
			t.Errorf("ResolveTime(%q) = %v, want no match", text, got)
		}
	}
}

func TestResolveTimeKeepsLocation(t *testing.T) {
	t.Parallel()
	sh := time.FixedZone("CST", 8*3600)
	ref := time.Date(2026, 1, 5, 23, 30, 0, 0, sh)
	got, ok := ResolveTime("明天", ref)
	want := time.Date(2026, 1, 6, 0, 0, 0, 0, sh)
	if !ok || !got.Equal(want) || got.Location() != sh {
		t.Fatalf("ResolveTime(明天) = %v, want %v in CST", got, want)
	}
}

func TestFindUntil(t *testing.T) {
	t.Parallel()
	tp := NewTemporal()
	tests := []struct {
		text  string
		until time.Time
		unit  TimeUnit
	}{
		{"this week", time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC), UnitWeek},
		{"today", time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC), UnitDay},
		{"这周末", time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC), UnitWeekend},
		{"下个月", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), UnitMonth},
		{"in May", time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), UnitMonth},
		{"in July", time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), UnitMonth},
		{"this year", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), UnitYear},
	}
	for _, tt := range tests {
		ms := tp.Find(tt.text, refMonday)
		if len(ms) != 1 || !ms[0].Until.Equal(tt.until) || ms[0].Unit != tt.unit {
			t.Errorf("Find(%q) = %+v, want until %v unit %v", tt.text, ms, tt.until, tt.unit)
		}
	}
}

func TestRewriteRelative(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"明天下午开会", "明天(2026-01-06)下午开会"},
		{"yesterday the payment failed", "yesterday (2026-01-04) the payment failed"},
		{"下周开会", "下周(2026-01-12至2026-01-18)开会"},
		{"next week we ship", "next week (2026-01-12 to 2026-01-18) we ship"},
		{"下个月去东京", "下个月(2026-02)去东京"},
		{"we married last year", "we married last year (2025)"},
		{"the trip in November was long", "the trip in November (2025-11) was long"},
		{"I may call March", "I may call March"},
		{"明年搬家", "明年(2027)搬家"},
		{"下周五交报告，明天先写大纲", "下周五(2026-01-16)交报告，明天(2026-01-06)先写大纲"},
		{"I'm off until Friday", "I'm off until Friday (2026-01-09)"},
		{"3天后复查", "3天后(2026-01-08)复查"},
		{"in 2 days and 3 days ago", "in 2 days (2026-01-07) and 3 days ago (2026-01-02)"},
		{"每周五前交周报", "每周五前交周报"},
		{"no dates here", "no dates here"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got := RewriteRelative(tt.in, refMonday)
			if got != tt.want {
				t.Fatalf("RewriteRelative(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := RewriteRelative(got, refMonday); again != got {
				t.Fatalf("not idempotent: %q → %q", got, again)
			}
		})
	}
}
