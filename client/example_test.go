package client_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/engramhq/engram/client"
)

func ExampleClient_AddTurns() {
	ctx := context.Background()
	c := client.New(os.Getenv("ENGRAM_URL"), os.Getenv("ENGRAM_TOKEN"))
	res, err := c.AddTurns(ctx,
		client.Turn{UserID: "alice", SessionID: "s1", Role: client.RoleUser, Content: "I prefer meetings after 10am."},
		client.Turn{UserID: "alice", SessionID: "s1", Role: client.RoleAssistant, Content: "Noted: meetings after 10am."},
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("accepted %d, duplicates %d\n", res.Accepted, res.Duplicates)

	// Sending the same turns again (same ids) stores nothing twice.
	again := []client.Turn{
		{TurnID: res.Results[0].TurnID, UserID: "alice", SessionID: "s1", Role: client.RoleUser, Content: "I prefer meetings after 10am."},
	}
	res, err = c.AddTurns(ctx, again...)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("accepted %d, duplicates %d\n", res.Accepted, res.Duplicates)
	// Output:
	// accepted 2, duplicates 0
	// accepted 0, duplicates 1
}
