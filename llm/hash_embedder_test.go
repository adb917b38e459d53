package llm_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/engramhq/engram/llm"
)

func hashEmbed(t testing.TB, e *llm.HashEmbedder, texts ...string) [][]float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	return v
}

func TestHashEmbedderParaphraseBeatsUnrelated(t *testing.T) {
	t.Parallel()
	e, err := llm.NewHashEmbedder(0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, anchor, paraphrase, unrelated string
	}{
		{"chinese", "以后安排会议尽量避开每周五下午", "周五下午不要安排会议", "我喜欢吃川菜"},
		{"english", "Please avoid scheduling meetings on Friday afternoons", "Don't schedule a meeting Friday afternoon", "I love spicy Sichuan food"},
		{"english inflections", "I prefer morning meetings", "She preferred meeting in the morning", "The build failed on CI"},
		{"japanese", "毎週金曜日の午後は会議を避けてください", "金曜日の午後に会議を入れないで", "辛い料理が好きです"},
		{"korean", "금요일 오후에는 회의를 피해주세요", "금요일 오후 회의는 안 돼요", "매운 음식을 좋아해요"},
		{"mixed", "我用Python写数据处理脚本", "用 Python 写脚本", "明天去北京出差"},
		{"fullwidth", "ＰＯＳＴＧＲＥＳ数据库", "postgres 数据库", "前端样式"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := hashEmbed(t, e, tt.anchor, tt.paraphrase, tt.unrelated)
			para, unrel := llm.Cosine(v[0], v[1]), llm.Cosine(v[0], v[2])
			if para <= unrel || para < 0.2 {
				t.Fatalf("cos(paraphrase) = %.3f, cos(unrelated) = %.3f", para, unrel)
			}
			t.Logf("paraphrase %.3f, unrelated %.3f", para, unrel)
		})
	}
}

func TestHashEmbedderDeterministicUnitNorm(t *testing.T) {
	t.Parallel()
	texts := []string{
		"I prefer dark mode in every editor.", "以后安排会议尽量避开每周五下午", "a", "x y z",
		strings.Repeat("memory ", 500), "日本語のテキスト and English", "emoji 🎉 ok",
	}
	for _, dims := range []int{16, 384, 1024} {
		e1, err := llm.NewHashEmbedder(dims)
		if err != nil {
			t.Fatal(err)
		}
		e2, _ := llm.NewHashEmbedder(dims)
		a := hashEmbed(t, e1, texts...)
		b := hashEmbed(t, e1, texts...) // same instance: scratch reuse must not leak state
		c := hashEmbed(t, e2, texts[2], texts[0])
		for i := range texts {
			if len(a[i]) != dims {
				t.Fatalf("dims = %d, want %d", len(a[i]), dims)
			}
			var norm float64
			for j, x := range a[i] {
				norm += float64(x) * float64(x)
				if x != b[i][j] {
					t.Fatalf("text %d not deterministic", i)
				}
			}
			if math.Abs(norm-1) > 1e-5 {
				t.Fatalf("text %d: norm = %v", i, norm)
			}
		}
		if llm.Cosine(a[0], c[1]) < 0.99999 || llm.Cosine(a[2], c[0]) < 0.99999 {
			t.Fatal("different instances or batch positions disagree")
		}
	}
}

func TestHashEmbedderEmptyText(t *testing.T) {
	t.Parallel()
	e, _ := llm.NewHashEmbedder(0)
	v := hashEmbed(t, e, "", "   \n\t", "!!! 。，", "hello world")
	if v[0][0] != 1 || llm.Cosine(v[0], v[1]) != 1 || llm.Cosine(v[0], v[2]) != 1 {
		t.Fatal("featureless texts should share the reserved unit vector")
	}
	if got := llm.Cosine(v[0], v[3]); got != 0 {
		t.Fatalf("cos(empty, text) = %v, want 0", got)
	}
	if v[3][0] != 0 {
		t.Fatal("a feature landed on the reserved dimension")
	}
}

func TestHashEmbedderConfig(t *testing.T) {
	t.Parallel()
	e, err := llm.NewHashEmbedder(0)
	if err != nil || e.Dims() != llm.DefaultHashDims || e.Model() != "engram-hash-v1" {
		t.Fatalf("defaults: %v %d %s", err, e.Dims(), e.Model())
	}
	if _, err := llm.NewHashEmbedder(8); err == nil {
		t.Fatal("8 dims accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"x"}); err == nil {
		t.Fatal("cancelled context ignored")
	}
}

func TestCosine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b []float32
		want float32
	}{
		{[]float32{1, 0}, []float32{1, 0}, 1},
		{[]float32{1, 0}, []float32{0, 2}, 0},
		{[]float32{1, 1}, []float32{-1, -1}, -1},
		{[]float32{1}, []float32{1, 0}, 0},
		{[]float32{0, 0}, []float32{1, 0}, 0},
		{nil, nil, 0},
	}
	for _, tt := range tests {
		if got := llm.Cosine(tt.a, tt.b); math.Abs(float64(got-tt.want)) > 1e-6 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// benchText is about 200 characters of each kind.
var benchTexts = map[string]string{
	"english": "The user prefers meetings in the morning and asked the assistant to avoid scheduling anything " +
		"on Friday afternoons; they also mentioned that the quarterly report is due next Tuesday at noon.",
	"chinese": "用户希望以后安排会议时尽量避开每周五下午，因为那段时间通常要处理客户的紧急需求。另外，季度报告需要在下周二中午之前提交，" +
		"请提前一天提醒。用户喜欢简洁的回答，不喜欢太长的解释，偏好使用中文交流，技术术语可以保留英文。最近在学习分布式系统，" +
		"尤其关注消息队列和一致性协议，希望推荐一些实践性强的资料。周末一般不处理工作相关的事情，紧急情况除外。" +
		"用户所在时区是东八区，习惯早上九点开始工作。",
}

func BenchmarkHashEmbedder(b *testing.B) {
	e, _ := llm.NewHashEmbedder(0)
	ctx := context.Background()
	for name, text := range benchTexts {
		text = string([]rune(text)[:min(200, len([]rune(text)))])
		b.Run(name, func(b *testing.B) {
			in := []string{text}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if _, err := e.Embed(ctx, in); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "embeddings/s")
		})
	}
}
