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

func checkSearch(req retriever.SearchRequest) error {
	if err := memory.CheckTexts(memory.Field{Name: "query", Value: req.Query, MaxBytes: retriever.MaxQueryBytes}, memory.Field{Name: "time_field", Value: req.TimeField},
		memory.Field{Name: "mode", Value: req.Mode}); err != nil {
		return err
	}
	for _, l := range req.Layers {
		if err := memory.CheckTexts(memory.Field{Name: "layers", Value: l}); err != nil {
			return err
		}
	}
	return memory.CheckIDs(memory.Field{Name: "user_id", Value: req.UserID}, memory.Field{Name: "agent_id", Value: req.AgentID},
		memory.Field{Name: "session_id", Value: req.SessionID})
}

func checkContext(req retriever.ContextRequest) error {
	if err := memory.CheckTexts(memory.Field{Name: "query", Value: req.Query, MaxBytes: retriever.MaxQueryBytes}); err != nil {
		return err
	}
	return memory.CheckIDs(memory.Field{Name: "user_id", Value: req.UserID}, memory.Field{Name: "agent_id", Value: req.AgentID},
		memory.Field{Name: "session_id", Value: req.SessionID}, memory.Field{Name: "task_id", Value: req.TaskID})
}
