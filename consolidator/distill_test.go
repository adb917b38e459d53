package consolidator

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

// clusterSet is the labelled set the ClusterSim default was chosen on: each group
// holds episodes that share a pattern; "noise" episodes share none.
var clusterSet = map[string][]string{
	"pay-zh": {"昨天支付失败，因为余额不足", "今天支付失败，因为接口超时", "上午支付失败，提示网络错误",
		"晚上支付失败，因为验证码过期", "周末支付失败，银行卡被冻结"},
	"pay-en": {"Payment failed yesterday because of insufficient balance", "Payment failed today due to an API timeout",
		"Payment failed again because the card was frozen", "The payment failed this morning with a network error"},
	"deploy-en": {"The deploy to staging failed because the migration timed out",
		"The staging deploy failed again: migration lock timeout", "Deploy to staging failed, the database migration hung"},
	"meeting-zh": {"用户把周五下午的会议改到了周一", "用户又把周五下午的会推到下周", "周五下午的会议用户再次取消"},
	"noise": {"用户周末去爬山", "用户买了一台新电脑", "The user had coffee with Alice", "The user booked a flight to Tokyo",
		"用户的女儿今天生日", "The user fixed a bug in the billing service", "用户下午开会讨论预算"},
}

func clusterInput(t *testing.T) ([]episode, []string) {
	t.Helper()
	emb, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	var eps []episode
	var labels []string
	names := make([]string, 0, len(clusterSet))
	for n := range clusterSet {
		names = append(names, n)
	}
	sort.Strings(names)
	// Interleave the groups, as episodes arrive over time.
	for i := 0; ; i++ {
		added := false
		for _, n := range names {
			if i < len(clusterSet[n]) {
				vs, err := emb.Embed(context.Background(), []string{clusterSet[n][i]})
				if err != nil {
					t.Fatal(err)
				}
				eps = append(eps, episode{id: uuid.New(), content: clusterSet[n][i], category: memory.CatEvent, vec: unit(vs[0])})
				labels = append(labels, n)
				added = true
			}
		}
		if !added {
			return eps, labels
		}
	}
}

// TestClusterThreshold checks the default ClusterSim on the labelled set: every group
// is one cluster, no noise episode joins a group. -v prints the margins: the lowest
// average cosine of a member to its group's other members, and the highest of a noise
// episode to any group.
func TestClusterThreshold(t *testing.T) {
	t.Parallel()
	eps, labels := clusterInput(t)
	var lowIn, highOut = math.Inf(1), math.Inf(-1)
	for i := range eps {
		for _, g := range []string{"pay-zh", "pay-en", "deploy-en", "meeting-zh"} {
			s, n := 0.0, 0
			for j := range eps {
				if j != i && labels[j] == g {
					s += dot(eps[i].vec, eps[j].vec)
					n++
				}
			}
			switch {
			case labels[i] == g:
				lowIn = math.Min(lowIn, s/float64(n))
			case labels[i] == "noise":
				highOut = math.Max(highOut, s/float64(n))
			}
		}
	}
	t.Logf("average cosine to the own group ≥ %.2f; noise to any group ≤ %.2f; ClusterSim %.2f",
		lowIn, highOut, DefaultNightlyConfig().ClusterSim)

	cases := []struct {
		threshold float64
		exact     bool // every group exactly one cluster of its own
	}{
		{DefaultNightlyConfig().ClusterSim, true},
		{0.9, false}, // too strict: groups fall apart
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.threshold), func(t *testing.T) {
			var got []string
			for _, cl := range clusterEpisodes(eps, tc.threshold) {
				if len(cl) < 3 {
					continue
				}
				var ls []string
				for _, i := range cl {
					ls = append(ls, labels[i])
				}
				slices.Sort(ls)
				got = append(got, strings.Join(slices.Compact(ls), "+")+fmt.Sprintf("×%d", len(cl)))
			}
			slices.Sort(got)
			want := []string{"deploy-en×3", "meeting-zh×3", "pay-en×4", "pay-zh×5"}
			if exact := slices.Equal(got, want); exact != tc.exact {
				t.Fatalf("clusters %v (want exactly %v: %v)", got, want, tc.exact)
			}
		})
	}
}

func TestClusterKeysAndCategories(t *testing.T) {
	t.Parallel()
	v := func(x float32) []float32 { return unit([]float32{x, 1 - x, 0}) }
	eps := []episode{
		{category: memory.CatEvent, key: "k", vec: v(1)},
		{category: memory.CatEvent, key: "k", vec: v(0)}, // orthogonal, but shares the key
		{category: memory.CatEvent, vec: v(1)},
		{category: memory.CatSkill, vec: v(1)}, // same vector, other category
	}
	got := clusterEpisodes(eps, 0.5)
	want := [][]int{{0, 1, 2}, {3}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("clusters %v, want %v", got, want)
	}
}

func TestExtractiveStatement(t *testing.T) {
	t.Parallel()
	d := func(day int) time.Time { return time.Date(2026, 1, day, 9, 0, 0, 0, time.UTC) }
	cases := []struct {
		name    string
		members []episode
		want    string
	}{
		{"zh range", []episode{{content: "支付失败", validFrom: d(3), vec: []float32{1, 0}}, {content: "支付又失败", validFrom: d(9), vec: []float32{1, 0}},
			{content: "爬山", validFrom: d(5), vec: []float32{0, 1}}}, "反复出现（3 次，2026-01-03 至 2026-01-09）：支付失败"},
		{"en one day", []episode{{content: "Build broke", validFrom: d(4), vec: []float32{1, 0}}, {content: "Build broke again", validFrom: d(4), vec: []float32{1, 0}}},
			"Recurring (2 times on 2026-01-04): Build broke"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c memory.Candidate
			extractive(&c, tc.members)
			if c.Content != tc.want {
				t.Fatalf("got %q, want %q", c.Content, tc.want)
			}
		})
	}
}

func TestDistillIDIsOrderFree(t *testing.T) {
	t.Parallel()
	a, b := episode{id: uuid.New()}, episode{id: uuid.New()}
	if distillID([]episode{a, b}) != distillID([]episode{b, a}) || distillID([]episode{a}) == distillID([]episode{b}) {
		t.Fatal("distillID depends on order or ignores ids")
	}
}
