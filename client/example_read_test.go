package client_test

import (
	"context"
	"fmt"

	"github.com/engramhq/engram/client"
)

// These examples need a running engram (`make dev` prints the token); they compile as
// documentation. cmd/engram's end-to-end tests run the same calls against the real
// pipeline.

func ExampleClient_Search() {
	c := client.New("http://localhost:8080", "egm_…")
	res, err := c.Search(context.Background(), client.SearchRequest{UserID: "u1", Query: "会议室", TopK: 5})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Results {
		fmt.Printf("%.2f %s %s\n", r.Score, r.ID, r.Content)
	}
}

func ExampleClient_Context() {
	c := client.New("http://localhost:8080", "egm_…")
	block, err := c.Context(context.Background(), client.ContextRequest{
		UserID: "u1", SessionID: "s2", Query: "帮我安排下一次产品评审会", BudgetTokens: 800,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Put block.Text in the system prompt: every line cites [memory_ref: id].
	fmt.Println(block.Text, block.TokensUsed)
}

func ExampleClient_Remember() {
	c := client.New("http://localhost:8080", "egm_…")
	// The id makes the call idempotent: retries remember it once.
	_, err := c.Remember(context.Background(), client.RememberRequest{
		ID: "pref-42", UserID: "u1", Category: "preference", Content: "The user prefers concise answers",
	})
	fmt.Println(err)
}

func ExampleClient_Forget() {
	c := client.New("http://localhost:8080", "egm_…")
	fmt.Println(c.Forget(context.Background(), "01a227ac-5446-703f-9854-2b16a40d613c"))
}

func ExampleClient_History() {
	c := client.New("http://localhost:8080", "egm_…")
	versions, err := c.History(context.Background(), "01a227ac-5446-703f-9854-2b16a40d613c")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range versions {
		fmt.Println(v.Version, v.Change, v.Status, v.Content)
	}
}

func ExampleClient_TaskState() {
	c := client.New("http://localhost:8080", "egm_…")
	ctx := context.Background()
	if _, err := c.PutTaskState(ctx, "trip-42", map[string]any{"step": "booking", "city": "Berlin"}); err != nil {
		fmt.Println(err)
		return
	}
	st, err := c.TaskState(ctx, "trip-42")
	fmt.Println(string(st.State), err)
}
