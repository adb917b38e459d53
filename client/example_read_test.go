package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/engramhq/engram/client"
)

// The examples run against the engram TestMain starts ($ENGRAM_URL, $ENGRAM_TOKEN),
// each with users of its own. Extraction and resolution are asynchronous, so an
// example that needs a memory waits for it (remembered, below).

// remembered states a memory and waits until the resolver has stored it.
func remembered(ctx context.Context, c *client.Client, user, content string, metadata map[string]any) client.Memory {
	if _, err := c.Remember(ctx, client.RememberRequest{UserID: user, Content: content, Metadata: metadata}); err != nil {
		log.Fatal(err)
	}
	var found client.Memory
	err := waitFor(ctx, func() bool {
		for m, err := range c.AllMemories(ctx, client.ListRequest{UserID: user}) {
			if err != nil {
				log.Fatal(err)
			}
			if m.Content == content {
				found = m
				return true
			}
		}
		return false
	})
	if err != nil {
		log.Fatal(err)
	}
	return found
}

func ExampleClient_Search() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	remembered(ctx, c, "search-u1", "The user's team deploys on Kubernetes", map[string]any{"project": "apollo"})
	remembered(ctx, c, "search-u1", "The user's side project deploys on a Raspberry Pi", map[string]any{"project": "hobby"})

	res, err := c.Search(ctx, client.SearchRequest{UserID: "search-u1", Query: "where do we deploy", TopK: 5})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(res.Results), "results")
	// Metadata filters are equality on keys (jsonb containment on the server).
	res, err = c.Search(ctx, client.SearchRequest{UserID: "search-u1", Query: "where do we deploy",
		Metadata: map[string]any{"project": "apollo"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res.Results {
		fmt.Println(r.Layer, r.Content, r.Metadata["project"])
	}
	// Output:
	// 2 results
	// memories The user's team deploys on Kubernetes apollo
}

func ExampleClient_Context() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	m := remembered(ctx, c, "context-u1", "The user prefers concise answers", nil)

	block, err := c.Context(ctx, client.ContextRequest{UserID: "context-u1", SessionID: "s2",
		Query: "explain the deploy pipeline", BudgetTokens: 800})
	if err != nil {
		log.Fatal(err)
	}
	// Put block.Text in the system prompt: every line cites [memory_ref: id].
	fmt.Println(strings.Contains(block.Text, "[memory_ref: "+m.ID+"]"), block.MemoryIDs[0] == m.ID, block.TokensUsed <= block.Budget)
	// Output:
	// true true true
}

func ExampleClient_Remember() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	// The id makes the call idempotent: retries remember it once.
	req := client.RememberRequest{ID: "pref-42", UserID: "remember-u1", Category: "preference",
		Content: "The user prefers tea to coffee", Metadata: map[string]any{"source": "onboarding"}}
	first, err := c.Remember(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	again, err := c.Remember(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.CandidateID == again.CandidateID, first.Duplicate, again.Duplicate)
	// Output:
	// true false true
}

func ExampleClient_ListMemories() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	for _, s := range []string{"The user lives in Porto", "The user plays the cello", "The user is vegetarian"} {
		remembered(ctx, c, "list-u1", s, map[string]any{"source": "profile-form"})
	}

	// One page at a time: NextCursor continues the listing with the same filters.
	page, err := c.ListMemories(ctx, client.ListRequest{UserID: "list-u1", Limit: 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(page.Memories), page.NextCursor != "")
	page, err = c.ListMemories(ctx, client.ListRequest{UserID: "list-u1", Limit: 2, Cursor: page.NextCursor})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(page.Memories), page.NextCursor != "")

	// Or every page through the iterator, here filtered on metadata.
	n := 0
	for m, err := range c.AllMemories(ctx, client.ListRequest{UserID: "list-u1", Metadata: map[string]string{"source": "profile-form"}}) {
		if err != nil {
			log.Fatal(err)
		}
		n++
		_ = m
	}
	fmt.Println(n, "memories from the profile form")
	// Output:
	// 2 true
	// 1 false
	// 3 memories from the profile form
}

func ExampleClient_AllMemories() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	for _, s := range []string{"The user has a dog named Rex", "The user walks the dog at 7am"} {
		remembered(ctx, c, "all-u1", s, nil)
	}

	// Every memory of the listing, page after page (here pages of one).
	for m, err := range c.AllMemories(ctx, client.ListRequest{UserID: "all-u1", Statuses: []string{"active"}, Limit: 1}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(m.Content)
	}
	// Output:
	// The user has a dog named Rex
	// The user walks the dog at 7am
}

func ExampleClient_Get() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	m := remembered(ctx, c, "get-u1", "The user works night shifts", nil)

	d, err := c.Get(ctx, m.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Memory.Content, d.Memory.Status, len(d.Versions), d.Versions[0].Change)
	// Output:
	// The user works night shifts active 1 add
}

func ExampleClient_AsOf() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	m := remembered(ctx, c, "asof-u1", "The user drives a blue car", nil)
	content := "The user drives a red car"
	if _, err := c.Update(ctx, m.ID, client.UpdateRequest{Content: &content, Reason: "repainted"}); err != nil {
		log.Fatal(err)
	}
	// What was believed just after the memory was first recorded.
	v, err := c.AsOf(ctx, m.ID, m.RecordedAt.Add(time.Microsecond))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.Version.Version, v.Version.Content)
	// Output:
	// 1 The user drives a blue car
}

func ExampleClient_History() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	m := remembered(ctx, c, "history-u1", "The user's office is on floor 3", nil)
	content := "The user's office is on floor 5"
	if _, err := c.Update(ctx, m.ID, client.UpdateRequest{Content: &content, Reason: "moved desks"}); err != nil {
		log.Fatal(err)
	}

	versions, err := c.History(ctx, m.ID)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range versions {
		fmt.Println(v.Version, v.Change, v.Content)
	}
	// Output:
	// 1 add The user's office is on floor 3
	// 2 correct The user's office is on floor 5
}

func ExampleClient_Update() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	m := remembered(ctx, c, "update-u1", "The user has two cats", nil)

	content, category := "The user has three cats", "fact"
	updated, err := c.Update(ctx, m.ID, client.UpdateRequest{Content: &content, Category: &category,
		Reason: "a kitten arrived", ExpectVersion: m.Version})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(updated.Version, updated.Content, updated.Confidence)
	// ExpectVersion refuses an edit made on a stale read.
	_, err = c.Update(ctx, m.ID, client.UpdateRequest{Content: &content, ExpectVersion: m.Version})
	var apiErr *client.APIError
	fmt.Println(errors.As(err, &apiErr), apiErr.Status, apiErr.Code)
	// Output:
	// 2 The user has three cats 1
	// true 409 version_mismatch
}

func ExampleClient_Deprecate() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	m := remembered(ctx, c, "deprecate-u1", "The user is learning Rust", nil)

	d, err := c.Deprecate(ctx, m.ID, "no longer true")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Status, d.Version)
	// Output:
	// deprecated 2
}

func ExampleClient_Rollback() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	m := remembered(ctx, c, "rollback-u1", "The user's favourite editor is Vim", nil)
	content := "The user's favourite editor is Emacs"
	if _, err := c.Update(ctx, m.ID, client.UpdateRequest{Content: &content, Reason: "a mistaken edit"}); err != nil {
		log.Fatal(err)
	}

	back, err := c.Rollback(ctx, m.ID, 1, "undo the mistaken edit")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.Version, back.Content)
	// Output:
	// 3 The user's favourite editor is Vim
}

func ExampleClient_Restore() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	m := remembered(ctx, c, "restore-u1", "The user keeps bees", nil)

	// Restore brings back a memory that nightly forgetting archived; an active one
	// answers 409 not_archived.
	_, err := c.Restore(ctx, m.ID)
	var apiErr *client.APIError
	fmt.Println(errors.As(err, &apiErr), apiErr.Status, apiErr.Code)
	// Output:
	// true 409 not_archived
}

func ExampleClient_Forget() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	m := remembered(ctx, c, "forget-u1", "The user's locker code is on a sticky note", nil)

	fmt.Println(c.Forget(ctx, m.ID))
	_, err := c.Get(ctx, m.ID)
	var apiErr *client.APIError
	fmt.Println(errors.As(err, &apiErr), apiErr.Status)
	// Output:
	// <nil>
	// true 404
}

func ExampleClient_DeleteMemory() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	m := remembered(ctx, c, "delete-u1", "The user once lived in Oslo", nil)

	d, err := c.DeleteMemory(ctx, m.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.MemoryID == m.ID, d.Versions, d.Embeddings)
	// Output:
	// true 1 1
}

func ExampleClient_DeleteUserMemories() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	remembered(ctx, c, "forgetall-u1", "The user likes jazz", nil)
	remembered(ctx, c, "forgetall-u1", "The user runs on Sundays", nil)

	// The memories go; the turns stay (pass true to delete them too).
	d, err := c.DeleteUserMemories(ctx, "forgetall-u1", false)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Memories, d.TurnsKept)
	// Output:
	// 2 true
}

func ExampleClient_DeleteUser() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	if _, err := c.AddTurns(ctx, client.Turn{UserID: "erase-u1", SessionID: "s1", Role: client.RoleUser,
		Content: "I prefer window seats on flights."}); err != nil {
		log.Fatal(err)
	}
	if err := waitFor(ctx, func() bool {
		p, err := c.ListMemories(ctx, client.ListRequest{UserID: "erase-u1"})
		return err == nil && len(p.Memories) == 1
	}); err != nil {
		log.Fatal(err)
	}

	d, err := c.DeleteUser(ctx, "erase-u1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Memories, d.Turns)
	// Output:
	// 1 1
}

func ExampleClient_ExportUser() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	remembered(ctx, c, "export-u1", "The user speaks Portuguese and German", nil)

	var buf bytes.Buffer // a file in real use
	exp, err := c.ExportUser(ctx, "export-u1", &buf)
	if err != nil {
		log.Fatal(err)
	}
	first, _, _ := strings.Cut(buf.String(), ",")
	fmt.Println(exp.Memories, exp.Turns, first)
	// Output:
	// 1 0 {"kind":"header"
}

func ExampleClient_ImportUser() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	remembered(ctx, c, "import-u1", "The user collects vinyl records", nil)
	var buf bytes.Buffer
	if _, err := c.ExportUser(ctx, "import-u1", &buf); err != nil {
		log.Fatal(err)
	}
	if _, err := c.DeleteUser(ctx, "import-u1"); err != nil {
		log.Fatal(err)
	}

	// The export brings the user back; a second import changes nothing.
	imp, err := c.ImportUser(ctx, "import-u1", bytes.NewReader(buf.Bytes()))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(imp.Memories, imp.MemoriesSkipped)
	imp, err = c.ImportUser(ctx, "import-u1", bytes.NewReader(buf.Bytes()))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(imp.Memories, imp.MemoriesSkipped)
	// Output:
	// 1 0
	// 0 1
}

func ExampleClient_GetRetrieval() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	m := remembered(ctx, c, "retrieval-u1", "The user is allergic to peanuts", nil)
	res, err := c.Search(ctx, client.SearchRequest{UserID: "retrieval-u1", Query: "peanuts"})
	if err != nil {
		log.Fatal(err)
	}

	// Why did the agent see this? The record keeps what was returned and its score.
	rec, err := c.GetRetrieval(ctx, res.RetrievalID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rec.Kind, rec.MemoryIDs[0] == m.ID, *rec.MemoryScores[0] == res.Results[0].Score)
	// Output:
	// search true true
}

func ExampleClient_PutTaskState() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	// Working memory: the task's current state, replaced whole, expiring without writes.
	st, err := c.PutTaskState(ctx, "trip-41", map[string]any{"step": "search", "city": "Berlin"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.TaskID, string(st.State))
	// Output:
	// trip-41 {"city":"Berlin","step":"search"}
}

func ExampleClient_TaskState() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	if _, err := c.PutTaskState(ctx, "trip-42", map[string]any{"step": "booking", "city": "Berlin"}); err != nil {
		log.Fatal(err)
	}
	st, err := c.TaskState(ctx, "trip-42")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(st.State), st.Revision > 0)
	// Output:
	// {"city":"Berlin","step":"booking"} true
}

func ExampleClient_DeleteTaskState() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	if _, err := c.PutTaskState(ctx, "trip-43", map[string]any{"step": "done"}); err != nil {
		log.Fatal(err)
	}
	if err := c.DeleteTaskState(ctx, "trip-43"); err != nil {
		log.Fatal(err)
	}
	_, err := c.TaskState(ctx, "trip-43")
	var apiErr *client.APIError
	fmt.Println(errors.As(err, &apiErr), apiErr.Status)
	// Output:
	// true 404
}

func ExampleClient_Live() {
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	fmt.Println(c.Live(context.Background()))
	// Output:
	// <nil>
}

func ExampleClient_Ready() {
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	r, err := c.Ready(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status, r.Checks["postgres"], r.Checks["nats"])
	// Output:
	// ok ok ok
}

func ExampleClient_Metrics() {
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	metrics, err := c.Metrics(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Contains(metrics, "# TYPE engram_http_requests_total counter"))
	// Output:
	// true
}

func ExampleClient_PutUserTaskState() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	// A task of one user: erased with the user, and the only kind a token limited to
	// users may touch. The tenant's task of the same id is another task.
	if _, err := c.PutUserTaskState(ctx, "ana", "trip-44", map[string]any{"step": "search"}); err != nil {
		log.Fatal(err)
	}
	st, err := c.UserTaskState(ctx, "ana", "trip-44")
	if err != nil {
		log.Fatal(err)
	}
	_, tenantErr := c.TaskState(ctx, "trip-44")
	var apiErr *client.APIError
	fmt.Println(st.UserID, string(st.State), errors.As(tenantErr, &apiErr) && apiErr.Status == 404)
	if err := c.DeleteUserTaskState(ctx, "ana", "trip-44"); err != nil {
		log.Fatal(err)
	}
	_, err = c.UserTaskState(ctx, "ana", "trip-44")
	fmt.Println(errors.As(err, &apiErr), apiErr.Status)
	// Output:
	// ana {"step":"search"} true
	// true 404
}
