package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/engramhq/engram/client"
)

// callModel stands for the agent's chat model (any chat API). This one answers from
// the first memory line of the context it was given and cites it, as the system
// prompt asks a real model to.
func callModel(_ context.Context, system, message string) (string, error) {
	for _, line := range strings.Split(system, "\n") {
		if strings.HasPrefix(line, "[memory_ref: ") && strings.Contains(message, "?") {
			ref := line[:strings.Index(line, "]")+1]
			return "Any weekday after 10am suits you, so Tuesday at 11:00. " + ref, nil
		}
	}
	return "Noted.", nil
}

// ExampleClient_agentLoop is an agent's turn with long-term memory: context before
// the model call, the turns after it, and the citations the reply carries. The
// README shows this body.
func ExampleClient_agentLoop() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	const system = "You are a scheduling assistant. When you rely on a memory, cite its [memory_ref: id]."

	turn := func(session, message string) string {
		// 1. Before the model call: what engram remembers that bears on this message.
		mem, err := c.Context(ctx, client.ContextRequest{UserID: "ana", SessionID: session,
			Query: message, BudgetTokens: 800})
		if err != nil {
			log.Fatal(err)
		}
		// 2. The model call, with the memory block (fenced as data, one cited line per
		//    memory) in the system prompt.
		reply, err := callModel(ctx, system+"\n\n"+mem.Text, message)
		if err != nil {
			log.Fatal(err)
		}
		// 3. After it: both turns go to engram. They are durable when AddTurns returns;
		//    memories are extracted from them asynchronously.
		if _, err := c.AddTurns(ctx,
			client.Turn{UserID: "ana", SessionID: session, Role: client.RoleUser, Content: message},
			client.Turn{UserID: "ana", SessionID: session, Role: client.RoleAssistant, Content: reply},
		); err != nil {
			log.Fatal(err)
		}
		return reply
	}

	turn("monday", "I prefer meetings after 10am.")
	// Extraction takes a moment (about half a second with the offline rules, plus the
	// model's latency with an LLM): a new session days later finds the memory.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		page, err := c.ListMemories(ctx, client.ListRequest{UserID: "ana"})
		if err != nil {
			log.Fatal(err)
		}
		if len(page.Memories) > 0 {
			break
		}
	}
	reply := turn("friday", "When should we schedule the design review?")

	// The reply cites the memories it used: show them (or link them in your UI).
	for _, m := range regexp.MustCompile(`memory_ref: ([0-9a-f-]{36})`).FindAllStringSubmatch(reply, -1) {
		d, err := c.Get(ctx, m[1])
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("cited:", d.Memory.Content)
	}
	// Output:
	// cited: The user prefers meetings after 10am
}
