package console

import (
	"encoding/json"
	"fmt"
	"html/template"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// diffPart is one run of a word diff: kept, inserted or deleted text.
type diffPart struct {
	Op   string // "=", "+", "-"
	Text string
}

// maxDiffCells bounds the diff's table (words × words): past it, the diff is the old
// text deleted and the new one inserted. Contents are at most 8000 characters.
const maxDiffCells = 4 << 20

// wordDiff diffs two texts word by word (longest common subsequence), keeping the
// spaces with the words so the parts concatenate back to the texts.
func wordDiff(a, b string) []diffPart {
	x, y := splitWords(a), splitWords(b)
	n, m := len(x), len(y)
	if n*m > maxDiffCells {
		return []diffPart{{"-", a}, {"+", b}}
	}
	// lcs[i][j]: length of the LCS of x[i:] and y[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffPart
	emit := func(op, s string) {
		if len(out) > 0 && out[len(out)-1].Op == op {
			out[len(out)-1].Text += s
			return
		}
		out = append(out, diffPart{op, s})
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case x[i] == y[j]:
			emit("=", x[i])
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			emit("-", x[i])
			i++
		default:
			emit("+", y[j])
			j++
		}
	}
	for ; i < n; i++ {
		emit("-", x[i])
	}
	for ; j < m; j++ {
		emit("+", y[j])
	}
	return out
}

// splitWords cuts s after each run of spaces: "a b  c" -> "a ", "b  ", "c".
func splitWords(s string) []string {
	var out []string
	start, inSpace := 0, false
	for i, r := range s {
		sp := r == ' ' || r == '\n' || r == '\t'
		if inSpace && !sp {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"when": func(t any) string {
			switch v := t.(type) {
			case time.Time:
				if v.IsZero() {
					return ""
				}
				return v.UTC().Format("2006-01-02 15:04:05Z")
			case *time.Time:
				if v == nil {
					return ""
				}
				return v.UTC().Format("2006-01-02 15:04:05Z")
			}
			return fmt.Sprint(t)
		},
		"short": func(s string, n int) string {
			if utf8.RuneCountInString(s) <= n {
				return s
			}
			r := []rune(s)
			return string(r[:n]) + "…"
		},
		"score":  func(f float64) string { return fmt.Sprintf("%.3f", f) },
		"hex":    func(b []byte) string { return fmt.Sprintf("%x", b) },
		"status": func(m map[string]int, s string) int { return m[s] },
		"json": func(v any) string {
			b, err := json.Marshal(v)
			if err != nil {
				return ""
			}
			return string(b)
		},
		"sortedCounts": func(m map[string]float64) []countItem {
			out := make([]countItem, 0, len(m))
			for k, v := range m {
				out = append(out, countItem{k, v})
			}
			sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
			return out
		},
		"headers": func(h map[string][]string) string {
			keys := make([]string, 0, len(h))
			for k := range h {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var b strings.Builder
			for _, k := range keys {
				fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(h[k], ", "))
			}
			return b.String()
		},
	}
}

type countItem struct {
	Name  string
	Value float64
}
