package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Conversation is one LoCoMo conversation (an entry of locomo10.json). The
// dialogue and the questions are read, and the observations for scoring
// extraction only: they and the summaries are pre-digested memory and must not
// be fed to a system under test (Turns never includes them).
type Conversation struct {
	ID           string // sample_id, e.g. "conv-26"
	SpeakerA     string
	SpeakerB     string
	Sessions     []LoCoMoSession
	QA           []QA
	Observations []Observation
}

// LoCoMoSession is one dated session of a conversation.
type LoCoMoSession struct {
	Number      int
	DateTimeRaw string    // as written: "1:56 pm on 8 May, 2023"
	DateTime    time.Time // the same, read as UTC (the data has no time zone)
	Turns       []Dialog
}

// Dialog is one turn of a LoCoMo session.
type Dialog struct {
	DiaID       string // "D<session>:<k>"
	Speaker     string
	Text        string
	BlipCaption string // a caption of the image the speaker shared, if any
}

// QA is one question of a conversation.
type QA struct {
	Question          string
	Answer            string // integers in the data are rendered as text
	AdversarialAnswer string // category 5: a tempting wrong answer
	Category          int    // 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial
	// Evidence are the gold dia_ids, cleaned: malformed strings ("D8:6; D9:17",
	// "D30:05", "D:11:26") are repaired where the intent is clear, and ids that
	// do not exist in the conversation are dropped. RawEvidence is as written.
	Evidence    []string
	RawEvidence []string
}

// locomoDateLayout is the layout of session_<N>_date_time.
const locomoDateLayout = "3:04 pm on 2 January, 2006"

// parseLoCoMoDate reads a LoCoMo session time such as "1:56 pm on 8 May, 2023",
// as UTC.
func parseLoCoMoDate(s string) (time.Time, error) {
	s = strings.Join(strings.Fields(s), " ")
	for _, layout := range []string{locomoDateLayout, "3:04 PM on 2 January, 2006", "3:04 pm on 2 Jan, 2006"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("LoCoMo date %q: want the shape %q", s, locomoDateLayout)
}

type rawLoCoMo struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []struct {
		Question          string          `json:"question"`
		Answer            json.RawMessage `json:"answer"`
		AdversarialAnswer json.RawMessage `json:"adversarial_answer"`
		Evidence          []string        `json:"evidence"`
		Category          int             `json:"category"`
	} `json:"qa"`
	Observation map[string]map[string][][]any `json:"observation"`
}

type rawDialog struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// LoadLoCoMo reads a LoCoMo file (the official locomo10.json layout: a list of
// conversations). Read it from where the user keeps it; the data is CC BY-NC 4.0
// and is never copied into this repository.
func LoadLoCoMo(path string) ([]Conversation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading LoCoMo: %w", err)
	}
	var raws []rawLoCoMo
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("parsing LoCoMo %s: %w", path, err)
	}
	out := make([]Conversation, 0, len(raws))
	for i, r := range raws {
		c, err := convertLoCoMo(r)
		if err != nil {
			return nil, fmt.Errorf("LoCoMo %s: conversation %d (%s): %w", path, i, r.SampleID, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func convertLoCoMo(r rawLoCoMo) (Conversation, error) {
	c := Conversation{ID: r.SampleID}
	if c.ID == "" {
		return c, fmt.Errorf("sample_id is missing")
	}
	str := func(key string) string {
		var s string
		_ = json.Unmarshal(r.Conversation[key], &s)
		return s
	}
	c.SpeakerA, c.SpeakerB = str("speaker_a"), str("speaker_b")
	// Sessions come from the session_<N> keys: conv-26 has date_time keys with no
	// session behind them.
	for key, raw := range r.Conversation {
		m := sessionKey.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		var dialogs []rawDialog
		if err := json.Unmarshal(raw, &dialogs); err != nil {
			return c, fmt.Errorf("%s: %w", key, err)
		}
		if len(dialogs) == 0 {
			continue
		}
		s := LoCoMoSession{Number: n, DateTimeRaw: str(key + "_date_time")}
		at, err := parseLoCoMoDate(s.DateTimeRaw)
		if err != nil {
			return c, fmt.Errorf("%s_date_time: %w", key, err)
		}
		s.DateTime = at
		for _, d := range dialogs {
			s.Turns = append(s.Turns, Dialog{DiaID: d.DiaID, Speaker: d.Speaker, Text: d.Text,
				BlipCaption: strings.TrimSpace(d.BlipCaption)})
		}
		c.Sessions = append(c.Sessions, s)
	}
	sort.Slice(c.Sessions, func(i, j int) bool { return c.Sessions[i].Number < c.Sessions[j].Number })
	known := map[string]bool{}
	for _, s := range c.Sessions {
		for _, d := range s.Turns {
			known[d.DiaID] = true
		}
	}
	obs, err := parseObservations(r.Observation, known)
	if err != nil {
		return c, err
	}
	c.Observations = obs
	for _, q := range r.QA {
		c.QA = append(c.QA, QA{
			Question:          q.Question,
			Answer:            rawText(q.Answer),
			AdversarialAnswer: rawText(q.AdversarialAnswer),
			Category:          q.Category,
			Evidence:          cleanEvidence(q.Evidence, known),
			RawEvidence:       q.Evidence,
		})
	}
	return c, nil
}

// rawText renders a JSON string or number as text; null or absent is "".
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}

var diaPart = regexp.MustCompile(`^D:?(\d+):(\d+)$`)

// cleanEvidence splits joined ids, repairs "D:11:26" and "D30:05", and keeps the
// ids the conversation has, each once.
func cleanEvidence(raw []string, known map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range raw {
		for _, part := range strings.FieldsFunc(r, func(c rune) bool { return c == ';' || c == ',' || c == ' ' }) {
			m := diaPart.FindStringSubmatch(strings.TrimSpace(part))
			if m == nil {
				continue
			}
			s, _ := strconv.Atoi(m[1])
			k, _ := strconv.Atoi(m[2])
			id := fmt.Sprintf("D%d:%d", s, k)
			if known[id] && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// locomoTurnID is the engram turn id of a dialog: "<conversation>:<dia_id>",
// e.g. "conv-26:D1:3".
func locomoTurnID(convID, diaID string) string { return convID + ":" + diaID }

// turns maps the conversation onto engram turns, one slice per session, in order.
//
// Both speakers are one engram user (user_id = the conversation id) with role
// "user": retrieval is per user, questions are about either speaker, and engram
// extracts facts from user turns. Each content is prefixed with the speaker's
// name ("Caroline: …") so extracted facts say who said them. A shared image's
// BLIP caption is appended as the official LoCoMo code does ("[shares <caption>]").
// Turn i (0-based) of a session occurs at the session's date plus i minutes.
func (c Conversation) turns() [][]Turn {
	out := make([][]Turn, 0, len(c.Sessions))
	for _, s := range c.Sessions {
		turns := make([]Turn, 0, len(s.Turns))
		for i, d := range s.Turns {
			content := d.Speaker + ": " + d.Text
			if d.BlipCaption != "" {
				content += " [shares " + d.BlipCaption + "]"
			}
			turns = append(turns, Turn{
				TurnID:     locomoTurnID(c.ID, d.DiaID),
				UserID:     c.ID,
				SessionID:  fmt.Sprintf("%s-s%d", c.ID, s.Number),
				Role:       "user",
				Content:    content,
				OccurredAt: s.DateTime.Add(time.Duration(i) * turnGap),
				Metadata:   map[string]any{"speaker": d.Speaker, "dia_id": d.DiaID},
			})
		}
		out = append(out, turns)
	}
	return out
}

// fullText is the whole conversation as a model would read it without memory:
// each session's date, then its turns as ingested.
func (c Conversation) fullText() string {
	var b strings.Builder
	sessions := c.turns()
	for i, s := range c.Sessions {
		fmt.Fprintf(&b, "DATE: %s\n", s.DateTimeRaw)
		for _, t := range sessions[i] {
			b.WriteString(t.Content)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// turnCount is the number of dialog turns.
func (c Conversation) turnCount() int {
	n := 0
	for _, s := range c.Sessions {
		n += len(s.Turns)
	}
	return n
}
