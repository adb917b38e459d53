package eval

import (
	"bytes"
	"strings"
	"testing"
)

func TestLightStemAndContentWords(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"hobbies": "hobby", "painting": "paint", "painted": "paint",
		"paints": "paint", "boxes": "box", "glass": "glass", "sing": "sing", "red": "red", "bus": "bus"} {
		if got := lightStem(in); got != want {
			t.Errorf("lightStem(%q) = %q, want %q", in, got, want)
		}
	}
	stop := newObservationAcc(0).stop
	got := contentWords("Nadia has been painting landscapes since she retired.", stop)
	for _, w := range []string{"nadia", "paint", "landscap", "since", "retir"} {
		if !got[w] {
			t.Errorf("content words %v lack %q", got, w)
		}
	}
	if got["has"] || got["been"] || got["she"] {
		t.Errorf("stopwords kept: %v", got)
	}
}

func TestObservationMatch(t *testing.T) {
	t.Parallel()
	stop := newObservationAcc(0).stop
	obs := contentWords("Omar adopted two rescue cats last spring.", stop) // omar adopt two rescue cat last spring
	for mem, want := range map[string]bool{
		"Omar adopted rescue cats.":             true,  // 4 of 7
		"The user adopted cats.":                false, // 2 of 7
		"Omar adopts two cats from a rescue":    true,  // 5 of 7
		"Spring is Omar's favourite season":     false, // 2 of 7
		"omar ADOPTED two rescue CATS, finally": true,
	} {
		if got := observationMatch(obs, contentWords(mem, stop)); got != want {
			t.Errorf("match(%q) = %v, want %v", mem, got, want)
		}
	}
	if observationMatch(map[string]bool{}, map[string]bool{"x": true}) {
		t.Error("an observation without content words matched")
	}
}

func TestObservationCoverage(t *testing.T) {
	t.Parallel()
	conv := Conversation{ID: "c1", Sessions: []LoCoMoSession{{Number: 1, Turns: []Dialog{
		{DiaID: "D1:1", Speaker: "Lena", Text: "I finally got my pilot licence last week!"},
		{DiaID: "D1:2", Speaker: "Tom", Text: "Wow. I just repainted my kitchen yellow."},
		{DiaID: "D1:3", Speaker: "Lena", Text: "Nice, send me a photo.", BlipCaption: "a yellow kitchen"},
		{DiaID: "D1:4", Speaker: "Tom", Text: "Sure thing."},
	}}}, Observations: []Observation{
		{Session: 1, Speaker: "Lena", Text: "Lena got her pilot licence last week.", Evidence: []string{"D1:1"}},
		{Session: 1, Speaker: "Tom", Text: "Tom repainted his kitchen yellow.", Evidence: []string{"D1:2"}},
		{Session: 1, Speaker: "Tom", Text: "Tom agreed to send a photo.", Evidence: []string{"D1:4"}},
	}}
	mems := []StoredMemory{
		// matches observation 1 and comes from its turn
		{ID: "m1", Content: "Lena got a pilot licence.", TurnIDs: []string{"c1:D1:1"}},
		// the right words, from the wrong turn: no match
		{ID: "m2", Content: "Tom repainted the kitchen yellow.", TurnIDs: []string{"c1:D1:3"}},
		// from observation 2's turn, but about something else
		{ID: "m3", Content: "The user said wow.", TurnIDs: []string{"c1:D1:2"}},
		// another conversation's memory is not counted
		{ID: "m4", Content: "Lena got her pilot licence last week.", TurnIDs: []string{"c2:D1:1"}},
	}
	acc := newObservationAcc(5)
	acc.add(conv, mems)
	r := acc.report()
	if r.Observations != 3 || r.Covered != 1 || r.Memories != 3 || r.MatchingMemories != 1 || r.Turns != 4 {
		t.Fatalf("report = %+v", r)
	}
	if r.MemoriesPer100Turns != 75 || r.Coverage != 1.0/3 || r.Precision != 1.0/3 {
		t.Errorf("rates = %v %v %v", r.Coverage, r.Precision, r.MemoriesPer100Turns)
	}
	if len(r.Misses) != 2 || r.Misses[0].Observation != "Tom repainted his kitchen yellow." ||
		strings.Join(r.Misses[0].Memories, "|") != "The user said wow." ||
		r.Misses[0].TurnTexts[0] != "Tom: Wow. I just repainted my kitchen yellow." || len(r.Misses[1].Memories) != 0 {
		t.Errorf("misses = %+v", r.Misses)
	}
	// The memories that count against precision: m2 and m3, not m4 (another conversation's).
	if len(r.Unmatched) != 2 || r.Unmatched[0].Memory != "Tom repainted the kitchen yellow." ||
		r.Unmatched[0].TurnTexts[0] != "Lena: Nice, send me a photo. a yellow kitchen" || r.Unmatched[1].Memory != "The user said wow." {
		t.Errorf("unmatched = %+v", r.Unmatched)
	}
	var b bytes.Buffer
	tw := newTable(&b)
	writeObservations(tw, r)
	if err := tw.flush(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"observation coverage", "33.3% (1/3)", "memories per 100 turns", "75.0",
		"missed observations", "memories from these turns: none", "memory: The user said wow.",
		"memories that match no observation", "- c1 Tom repainted the kitchen yellow."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	// Without explain no miss is kept.
	quiet := newObservationAcc(0)
	quiet.add(conv, mems)
	if qr := quiet.report(); len(qr.Misses) != 0 || len(qr.Unmatched) != 0 {
		t.Error("misses or unmatched memories kept without explain")
	}
}

func TestParseObservations(t *testing.T) {
	t.Parallel()
	known := map[string]bool{"D1:1": true, "D1:2": true, "D2:5": true}
	raw := map[string]map[string][][]any{
		"session_2_observation": {"Ann": {{"Ann moved.", "D2:5"}}},
		"session_1_observation": {"Bob": {{"Bob sings.", []any{"D1:2", "D1:1"}}, {"", "D1:1"}, {"Bob hums.", "D9:9"}}},
	}
	got, err := parseObservations(raw, known)
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by session, then first evidence turn; evidence that does not exist is dropped.
	if len(got) != 3 || got[0].Text != "Bob sings." || strings.Join(got[0].Evidence, ",") != "D1:2,D1:1" ||
		got[1].Text != "Bob hums." || len(got[1].Evidence) != 0 || got[2].Session != 2 || got[2].Speaker != "Ann" {
		t.Errorf("observations = %+v", got)
	}
	if _, err := parseObservations(map[string]map[string][][]any{"summary": {}}, known); err == nil {
		t.Error("a malformed key must be an error")
	}
}
