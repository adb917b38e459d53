package streams_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/engramhq/engram/streams"
)

func TestEncodeTokenRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"acme", "acme"},
		{"Acme-42", "Acme-42"},
		{"a.b", "a_2Eb"},
		{"under_score", "under_5Fscore"},
		{"user@example.com", "user_40example_2Ecom"},
		{"ns:id", "ns_3Aid"},
		{"_", "_5F"},
		{"..", "_2E_2E"},
		{"é", "_C3_A9"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got := streams.EncodeToken(tt.in)
			if got != tt.want {
				t.Fatalf("EncodeToken(%q) = %q, want %q", tt.in, got, tt.want)
			}
			back, err := streams.DecodeToken(got)
			if err != nil || back != tt.in {
				t.Fatalf("DecodeToken(%q) = %q, %v; want %q", got, back, err, tt.in)
			}
		})
	}
}

func TestDecodeTokenRejects(t *testing.T) {
	t.Parallel()
	for _, tok := range []string{"", "a.b", "a_", "a_4", "a_zz", "a_2e", "_41", "a*", ">", "a b"} {
		t.Run(tok, func(t *testing.T) {
			t.Parallel()
			if got, err := streams.DecodeToken(tok); !errors.Is(err, streams.ErrBadToken) {
				t.Fatalf("DecodeToken(%q) = %q, %v; want ErrBadToken", tok, got, err)
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 129)
	tests := []struct {
		name    string
		fn      func(a, b string) (string, error)
		a, b    string
		want    string
		wantErr string // substring naming the field
	}{
		{"turn", streams.TurnSubject, "acme", "u.1", "engram.turns.acme.u_2E1", ""},
		{"candidate", streams.CandidateSubject, "t:1", "bob@x", "engram.candidates.t_3A1.bob_40x", ""},
		{"dlq", streams.DLQSubject, "extractor", "acme", "engram.dlq.extractor.acme", ""},
		{"max length", streams.TurnSubject, strings.Repeat("a", 128), "u", "engram.turns." + strings.Repeat("a", 128) + ".u", ""},
		{"empty tenant", streams.TurnSubject, "", "u", "", "tenant"},
		{"empty user", streams.TurnSubject, "t", "", "", "user"},
		{"wildcard star", streams.TurnSubject, "t*", "u", "", "tenant"},
		{"wildcard gt", streams.CandidateSubject, "t", ">", "", "user"},
		{"whitespace", streams.TurnSubject, "a b", "u", "", "tenant"},
		{"tab", streams.TurnSubject, "t", "u\t", "", "user"},
		{"too long", streams.TurnSubject, long, "u", "", "tenant"},
		{"slash", streams.TurnSubject, "t", "a/b", "", "user"},
		{"stage bad", streams.DLQSubject, "ex tractor", "t", "", "stage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.fn(tt.a, tt.b)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr+":") {
					t.Fatalf("got %q, %v; want error naming %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
			tenant, err := streams.TenantFromSubject(got)
			wantTenant := tt.a
			if tt.name == "dlq" {
				wantTenant = tt.b
			}
			if err != nil || tenant != wantTenant {
				t.Fatalf("TenantFromSubject(%q) = %q, %v; want %q", got, tenant, err, wantTenant)
			}
		})
	}
}

func TestTenantFromSubjectRejects(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "engram.turns.a", "engram.memories.a.b", "other.turns.a.b", "engram.turns.a_zz.b", "engram.turns.a.b.c"} {
		if got, err := streams.TenantFromSubject(s); err == nil {
			t.Errorf("TenantFromSubject(%q) = %q, want error", s, got)
		}
	}
}

func FuzzEncodeToken(f *testing.F) {
	for _, s := range []string{"", "acme", "a.b", "_", "_5F", "user@example.com", "*", ">", " ", "\x00", "é", "a_2Eb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok := streams.EncodeToken(s)
		if strings.ContainsAny(tok, ".*> \t\r\n") {
			t.Fatalf("EncodeToken(%q) = %q is not a safe subject token", s, tok)
		}
		if s == "" {
			return
		}
		back, err := streams.DecodeToken(tok)
		if err != nil || back != s {
			t.Fatalf("DecodeToken(EncodeToken(%q)) = %q, %v", s, back, err)
		}
		// Decoding is a bijection: anything DecodeToken accepts re-encodes to itself.
		if dec, err := streams.DecodeToken(s); err == nil && streams.EncodeToken(dec) != s {
			t.Fatalf("EncodeToken(DecodeToken(%q)) = %q", s, streams.EncodeToken(dec))
		}
	})
}
