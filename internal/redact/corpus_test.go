package redact

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/redact/redacttest"
)

// TestCorpus: every secret and personal identifier of the corpus (two generated
// values per sentence) is redacted; with Keep, the personal identifiers stay and the
// secrets still go.
func TestCorpus(t *testing.T) {
	t.Parallel()
	cases := redacttest.Corpus(t, 1, 2)
	kinds := map[string]bool{}
	secrets := 0
	for _, c := range cases {
		kinds[c.Kind] = true
		secrets += len(c.Secrets)
	}
	if secrets < 100 || len(kinds) < 40 {
		t.Fatalf("corpus has %d secrets of %d kinds, want at least 100 of 40", secrets, len(kinds))
	}
	all := newRedactor(t)
	keep, err := New(Config{Keep: []string{"phone", " Email", "address"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		out, _ := all.Redact(c.Text)
		kept, _ := keep.Redact(c.Text)
		for _, s := range c.Secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s: %q survives in %q", c.Kind, s, out)
			}
			if c.PII && !strings.Contains(kept, s) {
				t.Errorf("%s with Keep: %q was redacted: %q", c.Kind, s, kept)
			}
			if !c.PII && strings.Contains(kept, s) {
				t.Errorf("%s with Keep: the secret %q survives in %q", c.Kind, s, kept)
			}
		}
	}
}

func TestKeepRefusesSecrets(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"password", "openai_key", "card_number", "us_ssn", "nonsense"} {
		if _, err := New(Config{Keep: []string{k}}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("Keep %q: %v, want an error naming it", k, err)
		}
	}
}
