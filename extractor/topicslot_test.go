package extractor

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/memory"
)

// TestTopicSlots: two sentences holding values of one thing of the speaker's meet in one
// slot, however differently each is worded; sentences about different things do not.
func TestTopicSlots(t *testing.T) {
	t.Parallel()
	keyOf := func(t *testing.T, text string) string {
		t.Helper()
		for _, c := range extractOne(t, memory.Turn{Content: text}) {
			if strings.HasPrefix(c.Key, "user.attr.") || strings.HasPrefix(c.Key, "user.provider.") || strings.HasPrefix(c.Key, "plan.") || c.Key == "habit.买菜" || c.Key == "language.preference" {
				return c.Key
			}
		}
		return ""
	}
	same := []struct{ name, old, new string }{
		{"possessed then changed", "My regular pharmacy is the one on Elm Street.", "The pharmacy is the one by the station now."},
		{"kept then moved", "I keep my pension with Aviva.", "Transferred my pension over to Vanguard in March."},
		{"schedule then moved", "Our choir practice meets on Thursdays.", "Choir practice is on Mondays now."},
		{"amount then raised", "My budget for the wedding is 15k.", "Budget for the wedding went up to 20k."},
		{"bought at then from", "We do our weekly shopping at Tesco.", "We get our weekly shopping from Asda these days."},
		{"kind of shift", "I work the night shift at the depot.", "They moved me to the day shift."},
		{"kind of place", "I'm a member at CityGym.", "These days I go to a bouldering gym."},
		{"schedule zh", "我们瑜伽课每周四晚上。", "瑜伽课改到周日上午了。"},
		{"amount zh", "我的房租每月三千。", "房租涨到三千五了。"},
		{"shift zh", "我上白班。", "下个月开始调成夜班。"},
		{"habit place zh", "我平时在永辉买菜。", "现在都在菜市场买菜了。"},
		{"reply language", "Please answer me in French.", "其实还是用中文回复我吧。"},
	}
	for _, tt := range same {
		t.Run(tt.name, func(t *testing.T) {
			a, b := keyOf(t, tt.old), keyOf(t, tt.new)
			if a == "" || a != b {
				t.Errorf("%q → %q, %q → %q: want one slot", tt.old, a, tt.new, b)
			}
		})
	}
	apart := []struct{ name, a, b string }{
		{"two things", "My commute is forty minutes.", "My rent is 900 a month."},
		{"a relation is not a topic", "My sister is a dentist.", "My sister is a pilot now."},
	}
	for _, tt := range apart {
		t.Run(tt.name, func(t *testing.T) {
			if a, b := keyOf(t, tt.a), keyOf(t, tt.b); a != "" && a == b {
				t.Errorf("%q and %q share the slot %s", tt.a, tt.b, a)
			}
		})
	}
	// A change dated once keeps its date; one without a date holds from now on.
	for _, tt := range []struct {
		text   string
		expire bool
	}{{"瑜伽课改到周日上午了。", false}, {"明天的瑜伽课改到周日上午了。", true}} {
		for _, c := range extractOne(t, memory.Turn{Content: tt.text}) {
			if strings.HasPrefix(c.Key, "user.attr.") && (c.ExpireAt != nil) != tt.expire {
				t.Errorf("%q: expiry %v, want %v", tt.text, c.ExpireAt, tt.expire)
			}
		}
	}
}
