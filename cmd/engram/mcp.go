package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engramhq/engram/internal/mcpserver"
)

// runMCP serves engram's MCP tools over stdio for a desktop client (Claude Desktop,
// Cursor) that spawns `engram mcp`. It talks to a running engram over HTTP with an
// API token, so the client's machine holds a token, never database credentials, and
// the tenant is the token's.
func runMCP(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "mcp", "mcp [--url http://localhost:8080]\n\n"+
		"Serves the MCP tools remember, add_turns, search_memory, get_context, forget, memory_history,\n"+
		"task_state_get and task_state_set over stdio, calling the engram at --url (ENGRAM_URL) with the\n"+
		"API token in ENGRAM_TOKEN; the tenant is the token's. For streamable HTTP, `engram serve` serves\n"+
		"the same tools at /mcp.")
	url := fs.String("url", env.Config.URL, "engram's base URL (ENGRAM_URL)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if u, err := neturl.Parse(*url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--url %q (ENGRAM_URL): want http://host:port or https://host", *url)
	}
	token := env.Config.Token
	if token == "" {
		return usagef("ENGRAM_TOKEN is not set: give the API token of the tenant (create one with `engram token --tenant NAME`)")
	}
	// stdout carries the protocol; logs go to stderr (env.Logger).
	srv := mcpserver.New(mcpserver.Config{API: mcpserver.Remote(*url, token), Version: buildVersion(), Logger: env.Logger})
	err := srv.Run(ctx, &mcp.StdioTransport{})
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return fmt.Errorf("serving MCP over stdio: %w", err)
	}
	return nil
}

// mcp builds the handler of /mcp over the edge api.
func (p *pipeline) mcp(api http.Handler) http.Handler {
	return mcpserver.NewHTTPHandler(api, buildVersion(), p.app.Logger)
}

// buildVersion is the module version the binary was built from ("dev" from a work tree).
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
