package httpapi

import (
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// The edge checks what it decodes against the store's rules (memory.CheckText,
// memory.CheckID) before calling a service, so that a NUL byte or invalid UTF-8 in
// a query, a correction or a reason is a 400 naming the field, not a 500 from
// PostgreSQL. Ingest and the stream consumers apply the same functions to turns and
// explicit memories.

// textField is one decoded string and the bound on it (0: only storability).
type textField struct {
	name     string
	v        string
	maxBytes int
}

// checkTexts returns the first field that cannot be stored.
func checkTexts(fields ...textField) error {
	for _, f := range fields {
		if fe := memory.CheckText(f.name, f.v, f.maxBytes); fe != nil {
			return fe
		}
	}
	return nil
}

// checkIDs returns the first id that is set and not a valid id.
func checkIDs(ids ...textField) error {
	for _, f := range ids {
		if f.v == "" {
			continue
		}
		if fe := memory.CheckID(f.name, f.v, memory.MaxIDLength); fe != nil {
			fe.Code = memory.CodeInvalidField
			return fe
		}
	}
	return nil
}

// maxQueryBytes bounds a search or context query (the retriever's own bound).
const maxQueryBytes = 4000

func checkSearch(req retriever.SearchRequest) error {
	if err := checkTexts(textField{"query", req.Query, maxQueryBytes}, textField{"time_field", req.TimeField, 0},
		textField{"mode", req.Mode, 0}); err != nil {
		return err
	}
	for _, l := range req.Layers {
		if err := checkTexts(textField{"layers", l, 0}); err != nil {
			return err
		}
	}
	return checkIDs(textField{name: "user_id", v: req.UserID}, textField{name: "agent_id", v: req.AgentID},
		textField{name: "session_id", v: req.SessionID})
}

func checkContext(req retriever.ContextRequest) error {
	if err := checkTexts(textField{"query", req.Query, maxQueryBytes}); err != nil {
		return err
	}
	return checkIDs(textField{name: "user_id", v: req.UserID}, textField{name: "agent_id", v: req.AgentID},
		textField{name: "session_id", v: req.SessionID}, textField{name: "task_id", v: req.TaskID})
}
