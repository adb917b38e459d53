// Package redacttest builds the redaction corpus of internal/redact/testdata/corpus.json:
// secrets and personal identifiers of many kinds, in English and Chinese sentences,
// with generated values (valid checksums where the kind has one, never a real
// credential). The redactor's own tests and the pipeline test that scans every table
// and stream for them (cmd/engram) share it.
package redacttest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Case is one sentence of the corpus with the secrets in it.
type Case struct {
	Kind string
	// PII marks personal identifiers (phone, email, address) that Config.Keep may keep.
	PII  bool
	Text string
	// Secrets are the values that must not survive redaction, as they appear in Text.
	Secrets []string
}

type template struct {
	Kind string `json:"kind"`
	PII  bool   `json:"pii"`
	Text string `json:"text"`
}

// Corpus instantiates every template once per seed.
func Corpus(t testing.TB, seeds ...uint64) []Case {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("redacttest: cannot locate the corpus")
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "testdata", "corpus.json"))
	if err != nil {
		t.Fatalf("redacttest: %v", err)
	}
	var doc struct {
		Cases []template `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("redacttest: corpus.json: %v", err)
	}
	var out []Case
	for _, seed := range seeds {
		for i, tm := range doc.Cases {
			g := gen{rnd: rand.New(rand.NewPCG(seed, uint64(i)))}
			c, err := g.instantiate(tm)
			if err != nil {
				t.Fatalf("redacttest: case %d (%s): %v", i, tm.Kind, err)
			}
			out = append(out, c)
		}
	}
	return out
}

var (
	secretSpan = regexp.MustCompile(`\[\[(.*?)\]\]`)
	genRef     = regexp.MustCompile(`\{([A-Za-z0-9]+)(?::([A-Za-z0-9]+))?(?::([a-z]+))?\}`)
)

type gen struct{ rnd *rand.Rand }

func (g gen) instantiate(tm template) (Case, error) {
	c := Case{Kind: tm.Kind, PII: tm.PII}
	var ferr error
	c.Text = secretSpan.ReplaceAllStringFunc(tm.Text, func(span string) string {
		inner := span[2 : len(span)-2]
		v := genRef.ReplaceAllStringFunc(inner, func(ref string) string {
			m := genRef.FindStringSubmatch(ref)
			s, err := g.value(m[1], m[2], m[3])
			if err != nil && ferr == nil {
				ferr = err
			}
			return s
		})
		c.Secrets = append(c.Secrets, v)
		return v
	})
	if ferr == nil && len(c.Secrets) == 0 {
		ferr = fmt.Errorf("no [[secret]] in %q", tm.Text)
	}
	return c, ferr
}

const (
	upperSet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lowerSet = "abcdefghijklmnopqrstuvwxyz"
	digitSet = "0123456789"
	hexSet   = "0123456789abcdef"
)

func (g gen) value(name, arg, opt string) (string, error) {
	n, _ := strconv.Atoi(arg)
	switch name {
	case "UPPER":
		return g.mixed(n, upperSet+digitSet, upperSet, digitSet), nil
	case "alnum":
		return g.mixed(n, upperSet+lowerSet+digitSet, upperSet, lowerSet, digitSet), nil
	case "lower":
		return g.mixed(n, lowerSet, lowerSet), nil
	case "hex":
		return g.mixed(n, hexSet, "abcdef", digitSet), nil
	case "digits":
		return g.pick("123456789", 1) + g.pick(digitSet, n-1), nil
	case "b64":
		return g.edged(n, upperSet+lowerSet+digitSet+"+/"), nil
	case "b64url":
		return g.edged(n, upperSet+lowerSet+digitSet+"_-"), nil
	case "pw":
		return g.edged(n, upperSet+lowerSet+digitSet+"#$%*^~!?"), nil
	case "card":
		return g.card(arg, opt == "spaced")
	case "iban":
		return g.iban(arg, opt == "spaced")
	case "ssn":
		area := 1 + g.rnd.IntN(665)
		if area == 666 {
			area = 667
		}
		return fmt.Sprintf("%03d-%02d-%04d", area, 1+g.rnd.IntN(99), 1+g.rnd.IntN(9999)), nil
	case "cnid":
		return g.cnid(), nil
	case "ukni":
		first, second := "ABCEGHJKLMNOPRSTWXYZ", "ABCEGHJKLMNPRSTWXYZ"
		for {
			p := g.pick(first, 1) + g.pick(second, 1)
			switch p {
			case "BG", "GB", "KN", "NK", "NT", "TN", "ZZ":
				continue
			}
			return fmt.Sprintf("%s %s %s %s %s", p, g.pick(digitSet, 2), g.pick(digitSet, 2), g.pick(digitSet, 2), g.pick("ABCD", 1)), nil
		}
	case "e164":
		switch arg {
		case "44":
			return "+44 20 " + g.pick("123456789", 1) + g.pick(digitSet, 3) + " " + g.pick(digitSet, 4), nil
		case "86":
			return "+86 1" + g.pick("3456789", 1) + g.pick(digitSet, 1) + " " + g.pick(digitSet, 4) + " " + g.pick(digitSet, 4), nil
		}
		return "", fmt.Errorf("e164: unknown country %q", arg)
	case "usphone":
		return "(" + g.pick("23456789", 1) + g.pick(digitSet, 2) + ") " + g.pick("23456789", 1) + g.pick(digitSet, 2) + "-" + g.pick(digitSet, 4), nil
	case "cnmobile":
		return "1" + g.pick("3456789", 1) + g.pick(digitSet, 9), nil
	}
	return "", fmt.Errorf("unknown generator %q", name)
}

func (g gen) pick(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.rnd.IntN(len(set))]
	}
	return string(b)
}

// mixed is n characters of set with at least one of each of must, at random places.
func (g gen) mixed(n int, set string, must ...string) string {
	b := []byte(g.pick(set, n))
	for i, m := range g.rnd.Perm(n)[:min(n, len(must))] {
		b[m] = must[i][g.rnd.IntN(len(must[i]))]
	}
	return string(b)
}

// edged is mixed letters and digits with set's other characters inside only, so a
// pattern's trailing word boundary holds and no sentence punctuation is trimmed off.
func (g gen) edged(n int, set string) string {
	alnum := upperSet + lowerSet + digitSet
	inner := g.mixed(n-2, set, upperSet, lowerSet, digitSet)
	return g.pick(alnum, 1) + inner + g.pick(alnum, 1)
}

// card is a number with a valid Luhn check digit.
func (g gen) card(issuer string, spaced bool) (string, error) {
	var prefix string
	length := 16
	switch issuer {
	case "visa":
		prefix = "4"
	case "mc":
		prefix = "5" + g.pick("12345", 1)
	case "amex":
		prefix, length = "3"+g.pick("47", 1), 15
	default:
		return "", fmt.Errorf("card: unknown issuer %q", issuer)
	}
	body := prefix + g.pick(digitSet, length-1-len(prefix))
	num := body + strconv.Itoa(LuhnCheckDigit(body))
	if !spaced {
		return num, nil
	}
	var parts []string
	for i := 0; i < len(num); i += 4 {
		parts = append(parts, num[i:min(i+4, len(num))])
	}
	return strings.Join(parts, " "), nil
}

// LuhnCheckDigit is the digit that makes body+digit pass the Luhn check.
func LuhnCheckDigit(body string) int {
	sum := 0
	for i := 0; i < len(body); i++ {
		d := int(body[len(body)-1-i] - '0')
		if i%2 == 0 { // doubled: the check digit will sit to its right
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return (10 - sum%10) % 10
}

var ibanBBAN = map[string]func(g gen) string{
	"GB": func(g gen) string { return g.pick(upperSet, 4) + g.pick(digitSet, 14) },
	"DE": func(g gen) string { return g.pick(digitSet, 18) },
	"FR": func(g gen) string { return g.pick(digitSet, 23) },
}

// iban is an IBAN with valid ISO 7064 mod-97 check digits.
func (g gen) iban(country string, spaced bool) (string, error) {
	f, ok := ibanBBAN[country]
	if !ok {
		return "", fmt.Errorf("iban: unknown country %q", country)
	}
	bban := f(g)
	check := 98 - Mod97(bban+country+"00")
	v := fmt.Sprintf("%s%02d%s", country, check, bban)
	if !spaced {
		return v, nil
	}
	var parts []string
	for i := 0; i < len(v); i += 4 {
		parts = append(parts, v[i:min(i+4, len(v))])
	}
	return strings.Join(parts, " "), nil
}

// Mod97 is the remainder of s (digits and capital letters, A = 10 … Z = 35) mod 97.
func Mod97(s string) int {
	rem := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			rem = (rem*100 + int(c-'A') + 10) % 97
		} else {
			rem = (rem*10 + int(c-'0')) % 97
		}
	}
	return rem
}

// cnid is an 18-character Chinese resident identity number with its MOD 11-2 check.
func (g gen) cnid() string {
	regions := []string{"110105", "310104", "440305", "330106", "510107"}
	body := fmt.Sprintf("%s%04d%02d%02d%03d", regions[g.rnd.IntN(len(regions))],
		1960+g.rnd.IntN(45), 1+g.rnd.IntN(12), 1+g.rnd.IntN(28), g.rnd.IntN(1000))
	weights := [17]int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for i, w := range weights {
		sum += int(body[i]-'0') * w
	}
	return body + string("10X98765432"[sum%11])
}
