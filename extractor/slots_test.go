package extractor

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/memory"
)

// TestSlotsOfEverydayPhrasings: where the speaker lives, their clock, their car or
// device, an attribute of theirs, each told as people tell it, lands in the slot a later
// value replaces; and what only resembles one does not. The sentences were written for
// this test.
func TestSlotsOfEverydayPhrasings(t *testing.T) {
	tests := []struct {
		name, text, key, holds string // key "" with holds "": no candidate may have keyOf
		keyOf                  string
	}{
		{"live with a particle", "We live out in Bendigo, so the drive in is long.", "user.location", "Bendigo", ""},
		{"based out of", "I'm based out of Tallinn these days.", "user.location", "Tallinn", ""},
		{"home named by place", "Our flat in Porto gets the afternoon sun.", "user.location", "Porto", ""},
		{"here for good", "We're in Halifax for good now.", "user.location", "Halifax", ""},
		{"a visit is no home", "I'm in Lyon for a conference.", "", "", "user.location"},
		{"settled zh", "我们现在在厦门定居了。", "user.location", "厦门", ""},
		{"moved with particles", "We sold the house and moved out to Galt last spring.", "user.location", "Galt", ""},
		{"zone abbreviation", "I'm on AEST now that I'm back.", "user.timezone", "AEST", ""},
		{"zone offset", "Our team works on UTC-3.", "user.timezone", "UTC-3", ""},
		{"zone word with a time", "Calls at 7 Mountain suit me best.", "user.timezone", "Mountain", ""},
		{"zone by city", "Please keep everything on Madrid time for me.", "user.timezone", "Madrid", ""},
		{"zone zh", "以后时间都按悉尼那边算吧。", "user.timezone", "悉尼", ""},
		{"no zone in a park", "We had lunch in Central Park with my cousins.", "", "", "user.timezone"},
		{"car by what cars do", "My old Skoda Octavia needs new tyres before winter.", "user.vehicle", "Skoda Octavia", ""},
		{"driving a new car", "I'm driving a Volvo XC40 now.", "user.vehicle", "Volvo XC40", ""},
		{"car zh", "我那辆老宝来开了八年了，油耗越来越高。", "user.vehicle", "宝来", ""},
		{"device replaced zh", "换了台联想拯救者，屏幕大多了。", "user.device.computer", "拯救者", ""},
		{"phone zh", "我换了部一加12，充电很快。", "user.device.phone", "一加12", ""},
		{"attribute", "My badge number is Q-5521.", "user.attr.badge_number", "Q-5521", ""},
		{"attribute zh", "我的储物柜号是 C17。", "user.attr.储物柜号", "C17", ""},
		{"relation's attribute", "My husband's shoe size is 44.", "relation.husband.shoe_size", "44", ""},
		{"relation's birthday", "My nephew Jonas turns eleven next Saturday.", "relation.nephew.birthday", "Jonas", ""},
		{"an appointment is no taste", "Keep my Thursdays clear, I have choir.", "", "", "taste.choir"},
		{"a relation is no attribute", "My older brother is moving to Perth.", "", "", "user.attr.older_brother"},
		{"plural attribute has none", "My cousins are Lena and Omar.", "", "", "user.attr.cousins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cands := extractOne(t, memory.Turn{Content: tt.text})
			keys := byKey(cands)
			if tt.keyOf != "" {
				if c, ok := keys[tt.keyOf]; ok {
					t.Fatalf("%q has a %s candidate: %q", tt.text, tt.keyOf, c.Content)
				}
				return
			}
			c, ok := keys[tt.key]
			if !ok {
				t.Fatalf("%q: no %s candidate in %+v", tt.text, tt.key, cands)
			}
			if !strings.Contains(c.Content, tt.holds) {
				t.Errorf("%q: %s candidate %q lacks %q", tt.text, tt.key, c.Content, tt.holds)
			}
		})
	}
}
