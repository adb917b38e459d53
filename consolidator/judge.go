package consolidator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

// Judge decides how a candidate relates to the owner's close memories, in place of
// the rules. The resolver validates every verdict and falls back to the rules when
// it is unusable, so a Judge may be wrong but cannot write anything by itself.
type Judge interface {
	Judge(ctx context.Context, in JudgeInput) (Verdict, error)
}

// JudgeInput is one candidate and the neighbours that pass the similarity floor (or
// share its key), most similar first.
type JudgeInput struct {
	Candidate  memory.Candidate
	Neighbours []JudgeNeighbour
}

// JudgeNeighbour is a memory shown to the judge under a short reference ("m1" …):
// models copy short tokens more reliably than UUIDs.
type JudgeNeighbour struct {
	Ref        string
	Memory     memory.Memory
	Similarity float64
}

// Verdict decisions.
const (
	VerdictAdd       = "add"
	VerdictConfirm   = "confirm"
	VerdictUpdate    = "update"
	VerdictSupersede = "supersede"
	VerdictNoop      = "noop"
)

// Verdict is a judge's answer.
type Verdict struct {
	Decision      string `json:"decision"`       // add | confirm | update | supersede | noop
	Target        string `json:"target_id"`      // a neighbour's Ref; empty for add and noop
	MergedContent string `json:"merged_content"` // the merged memory, for update
	Reason        string `json:"reason"`
}

// ErrInvalidVerdict marks a verdict the resolver cannot use.
var ErrInvalidVerdict = errors.New("invalid judge verdict")

// judged is a validated verdict, tied to the neighbour set it was made on.
type judged struct {
	fingerprint string
	rel         relation
	noop        bool
	target      uuid.UUID
	merged      string
	mergedVec   []float32
	reason      string
}

// judgeable are the neighbours the judge decides among: those at or above the floor
// and those sharing the candidate's key.
func (r *Resolver) judgeable(ns []scored) []scored {
	var out []scored
	for _, n := range ns {
		if n.sim >= r.cfg.NeighbourFloor || n.sameKey {
			out = append(out, n)
		}
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		switch {
		case a.sim > b.sim:
			return -1
		case a.sim < b.sim:
			return 1
		}
		return 0
	})
	return out
}

// fingerprint identifies a neighbour set by ids and versions, to tell whether the
// set a verdict was made on is still the one under the lock.
func fingerprint(ns []scored) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("%s:%d:%s", n.mem.ID, n.mem.Version, n.mem.Status)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// consultJudge reads the neighbours without the owner lock and asks the judge, so no
// model call happens while a transaction holds the lock. It returns the recorded
// decision if the candidate was already applied, nil (rules decide) when no neighbour
// passes the floor or the judge's answer is unusable, and an error only for database
// failures.
func (r *Resolver) consultJudge(ctx context.Context, c memory.Candidate, vec []float32) (*judged, *Decision, error) {
	var ns []scored
	var rec Decision
	var applied bool
	err := r.store.InTx(ctx, c.Tenant, func(tx *memory.Tx) error {
		var err error
		if rec, applied, err = recordedDecision(ctx, tx, c.ID); err != nil || applied {
			return err
		}
		ns, err = r.neighbours(ctx, tx, c, vec)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if applied {
		return nil, &rec, nil
	}
	j, err := r.askJudge(ctx, c, vec, ns)
	return j, nil, err
}

// askJudge asks the judge about c and the neighbours ns; nil (rules decide) when none
// passes the floor or the answer is unusable, an error only when ctx ended.
func (r *Resolver) askJudge(ctx context.Context, c memory.Candidate, vec []float32, ns []scored) (*judged, error) {
	near := r.judgeable(ns)
	if len(near) == 0 {
		return nil, nil
	}
	in := JudgeInput{Candidate: c}
	refs := map[string]scored{}
	for i, n := range near {
		ref := fmt.Sprintf("m%d", i+1)
		refs[ref] = n
		in.Neighbours = append(in.Neighbours, JudgeNeighbour{Ref: ref, Memory: n.mem, Similarity: n.sim})
	}
	v, err := r.judge.Judge(ctx, in)
	if err == nil {
		var j *judged
		if j, err = r.validVerdict(ctx, c, vec, v, refs); err == nil {
			j.fingerprint = fingerprint(near)
			return j, nil
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	r.log.Warn("judge unusable; the rules decide", "candidate", c.ID, "err", err)
	return nil, nil
}

// validVerdict checks a verdict against the neighbours it was given and embeds the
// merged content of an update.
func (r *Resolver) validVerdict(ctx context.Context, c memory.Candidate, vec []float32, v Verdict, refs map[string]scored) (*judged, error) {
	j := &judged{reason: strings.TrimSpace(v.Reason)}
	needTarget := true
	switch strings.ToLower(strings.TrimSpace(v.Decision)) {
	case VerdictAdd:
		j.rel, needTarget = relUnrelated, false
	case VerdictNoop:
		j.noop, needTarget = true, false
	case VerdictConfirm:
		j.rel = relDuplicate
	case VerdictUpdate:
		j.rel = relRefinement
	case VerdictSupersede:
		j.rel = relContradiction
	default:
		return nil, fmt.Errorf("%w: decision %q", ErrInvalidVerdict, v.Decision)
	}
	if needTarget {
		n, ok := refs[strings.TrimSpace(v.Target)]
		if !ok {
			return nil, fmt.Errorf("%w: target %q is not one of the neighbours", ErrInvalidVerdict, v.Target)
		}
		j.target = n.mem.ID
	}
	if j.rel == relRefinement {
		j.merged = strings.TrimSpace(v.MergedContent)
		if j.merged == "" || utf8.RuneCountInString(j.merged) > 8000 {
			return nil, fmt.Errorf("%w: update without usable merged content", ErrInvalidVerdict)
		}
		j.mergedVec = vec
		if j.merged != c.Content {
			mv, err := r.embed(ctx, j.merged)
			if err != nil {
				return nil, fmt.Errorf("embedding the merged content: %w", err)
			}
			j.mergedVec = mv
		}
	}
	return j, nil
}

// LLMJudge asks a chat model, with one JSON-schema call per candidate.
type LLMJudge struct {
	chat *llm.ChatClient
}

// NewLLMJudge makes a judge on a chat client.
func NewLLMJudge(chat *llm.ChatClient) *LLMJudge { return &LLMJudge{chat: chat} }

const judgeSystem = `You maintain a user's long-term memory. A new candidate memory was extracted from a conversation; compare it with the user's existing memories listed (each has an id such as "m1") and choose exactly one decision:
- "confirm": the candidate says the same as one memory and adds nothing; target_id is that memory.
- "update": the candidate is the same fact as one memory with more or corrected detail; target_id is that memory and merged_content is one self-contained sentence holding the information of both, in the memory's language.
- "supersede": the candidate contradicts one memory or replaces its value (a preference or fact changed, e.g. liked → dislikes, lives in A → moved to B, avoid Friday → Friday is fine now); target_id is that memory.
- "add": the candidate is a different fact (possibly on the same topic, e.g. likes tea vs likes coffee); target_id is "".
- "noop": the candidate is not worth remembering; target_id is "".
Memories that share a key are the same slot: a different value there means supersede. Events that happened at different times are different facts. Texts may be Chinese or English. Use merged_content only for update (else ""), and give a short reason.`

var judgeSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"decision":       map[string]any{"type": "string", "enum": []string{VerdictAdd, VerdictConfirm, VerdictUpdate, VerdictSupersede, VerdictNoop}},
		"target_id":      map[string]any{"type": "string"},
		"merged_content": map[string]any{"type": "string"},
		"reason":         map[string]any{"type": "string"},
	},
	"required":             []string{"decision", "target_id", "merged_content", "reason"},
	"additionalProperties": false,
}

type judgeMemory struct {
	ID         string  `json:"id"`
	Content    string  `json:"content"`
	Key        string  `json:"key,omitempty"`
	Category   string  `json:"category"`
	Type       string  `json:"type"`
	Status     string  `json:"status"`
	ValidFrom  string  `json:"valid_from"`
	Similarity float64 `json:"similarity"`
}

type judgeRequest struct {
	Candidate struct {
		Content   string `json:"content"`
		Key       string `json:"key,omitempty"`
		Category  string `json:"category"`
		Type      string `json:"type"`
		Source    string `json:"source"`
		ValidFrom string `json:"valid_from,omitempty"`
	} `json:"candidate"`
	Memories []judgeMemory `json:"memories"`
}

// Judge implements Judge.
func (j *LLMJudge) Judge(ctx context.Context, in JudgeInput) (Verdict, error) {
	var req judgeRequest
	c := in.Candidate
	req.Candidate.Content, req.Candidate.Key, req.Candidate.Category = c.Content, c.Key, string(c.Category)
	req.Candidate.Type, req.Candidate.Source = string(c.Type), string(c.Source)
	if !c.ValidFrom.IsZero() {
		req.Candidate.ValidFrom = c.ValidFrom.UTC().Format(time.RFC3339)
	}
	for _, n := range in.Neighbours {
		m := n.Memory
		req.Memories = append(req.Memories, judgeMemory{ID: n.Ref, Content: m.Content, Key: m.Key,
			Category: string(m.Category), Type: string(m.Type), Status: string(m.Status),
			ValidFrom: m.ValidFrom.UTC().Format(time.RFC3339), Similarity: float64(int(n.Similarity*100)) / 100})
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Verdict{}, fmt.Errorf("encoding the judge request: %w", err)
	}
	resp, err := j.chat.Complete(ctx, llm.ChatRequest{
		System:   judgeSystem,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: string(body)}},
		Schema:   &llm.JSONSchema{Name: "memory_resolution", Schema: judgeSchema},
	})
	if err != nil {
		return Verdict{}, fmt.Errorf("asking the judge: %w", err)
	}
	var v Verdict
	if err := json.Unmarshal([]byte(strings.TrimSpace(resp.Content)), &v); err != nil {
		return Verdict{}, fmt.Errorf("%w: decoding %q: %v", ErrInvalidVerdict, clip(resp.Content, 200), err)
	}
	return v, nil
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
