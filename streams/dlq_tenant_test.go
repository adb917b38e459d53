package streams

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestDeadLetterTenantFromSubject: a dead letter is filed under the tenant of its
// original subject, whatever its Engram-Tenant header says; the header counts only when
// the subject is not an engram turn or candidate subject at all.
func TestDeadLetterTenantFromSubject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, subject, header, want string
	}{
		{"header names another tenant", "engram.turns.acme.u1", "evil", "engram.dlq.extractor.acme"},
		{"candidate subject wins too", "engram.candidates.acme._", "evil", "engram.dlq.extractor.acme"},
		{"header agrees", "engram.turns.a_2Eb.u1", "a.b", "engram.dlq.extractor.a_2Eb"},
		{"no header", "engram.turns.acme.u1", "", "engram.dlq.extractor.acme"},
		{"subject tells nothing: header", "elsewhere", "acme", "engram.dlq.extractor.acme"},
		{"engram subject with an undecodable tenant: not the header", "engram.turns.a_zz.u1", "acme", "engram.dlq.extractor._"},
		{"neither", "elsewhere", "", "engram.dlq.extractor._"},
		{"invalid header", "elsewhere", "a*b", "engram.dlq.extractor._"},
	} {
		d := letter("extractor", "acme", 7)
		d.Subject = tc.subject
		d.Headers.Del(HeaderTenant)
		if tc.header != "" {
			d.Headers.Set(HeaderTenant, tc.header)
		}
		m, err := d.message()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if m.Subject != tc.want {
			t.Errorf("%s: dead letter on %s, want %s", tc.name, m.Subject, tc.want)
		}
	}
}

// TestDLQEntryTenantFromSubject: an entry's tenant (what the console filters on) is
// the original subject's, then the DLQ subject's; never a header's over a subject's.
func TestDLQEntryTenantFromSubject(t *testing.T) {
	t.Parallel()
	ts := time.Now()
	for _, tc := range []struct {
		name, dlqSubject, original, header, want string
	}{
		{"header names another tenant", "engram.dlq.extractor.acme", "engram.turns.acme.u1", "evil", "acme"},
		{"filed under the header's tenant before", "engram.dlq.extractor.evil", "engram.turns.acme.u1", "evil", "acme"},
		{"original subject tells nothing", "engram.dlq.extractor.acme", "elsewhere", "evil", "acme"},
		{"no original subject", "engram.dlq.extractor.acme", "", "evil", "acme"},
		{"nothing tells", "engram.dlq.extractor._", "elsewhere", "evil", ""},
	} {
		h := nats.Header{}
		h.Set(HeaderDLQStage, "extractor")
		if tc.original != "" {
			h.Set(HeaderDLQSubject, tc.original)
		}
		h.Set(HeaderTenant, tc.header)
		if e := entryFrom(1, tc.dlqSubject, ts, h, nil); e.Tenant != tc.want {
			t.Errorf("%s: tenant %q, want %q", tc.name, e.Tenant, tc.want)
		}
	}
	// End to end: a dead letter with a lying header lists under its subject's tenant.
	js, ctx := dlqSetup(t)
	d := letter("extractor", "acme", 1)
	d.Headers.Set(HeaderTenant, "evil")
	if err := publishDeadLetter(ctx, js, d); err != nil {
		t.Fatal(err)
	}
	es, err := NewDLQ(js).List(ctx, DLQFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Tenant != "acme" {
		t.Fatalf("entries %+v: want one of tenant acme", es)
	}
}
