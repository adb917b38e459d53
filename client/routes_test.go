package client_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/engramhq/engram/client"
)

// sdk names the Client methods that call each route of internal/httpapi/routes.go.
var sdk = map[string][]string{
	"GET /healthz":                        {"Live"},
	"GET /readyz":                         {"Ready"},
	"GET /metrics":                        {"Metrics"},
	"POST /v1/turns":                      {"AddTurns"},
	"POST /v1/memories":                   {"Remember"},
	"GET /v1/memories":                    {"ListMemories", "AllMemories"},
	"GET /v1/memories/{id}":               {"Get", "AsOf"},
	"GET /v1/memories/{id}/history":       {"History"},
	"PATCH /v1/memories/{id}":             {"Update"},
	"POST /v1/memories/{id}/deprecate":    {"Deprecate"},
	"POST /v1/memories/{id}/rollback":     {"Rollback"},
	"DELETE /v1/memories/{id}":            {"DeleteMemory", "Forget"},
	"POST /v1/memories/{id}/restore":      {"Restore"},
	"DELETE /v1/users/{user_id}":          {"DeleteUser"},
	"DELETE /v1/users/{user_id}/memories": {"DeleteUserMemories"},
	"GET /v1/users/{user_id}/export":      {"ExportUser"},
	"POST /v1/users/{user_id}/import":     {"ImportUser"},
	"POST /v1/search":                     {"Search"},
	"POST /v1/context":                    {"Context"},
	"GET /v1/retrievals/{id}":             {"GetRetrieval"},
	"PUT /v1/tasks/{task_id}/state":       {"PutTaskState"},
	"GET /v1/tasks/{task_id}/state":       {"TaskState"},
	"DELETE /v1/tasks/{task_id}/state":    {"DeleteTaskState"},
}

// notSDK are routes a Go SDK does not wrap: HTML pages, and protocols with clients
// of their own.
var notSDK = map[string]string{
	" /console/":        "the console's HTML pages",
	"POST /mcp":         "MCP: use an MCP client",
	"GET /mcp":          "MCP: use an MCP client",
	"DELETE /mcp":       "MCP: use an MCP client",
	" /mcp":             "MCP: use an MCP client",
	"GET /openapi.json": "the API's description, for generated clients",
}

var routeLine = regexp.MustCompile(`\{(?:method: "([A-Z]+)", )?pattern: "([^"]+)"`)

// TestEveryRouteHasAnSDKMethod: every route of the server's table has a Client
// method, and each method an executed Example (ExampleClient_<Method>) for one of
// them at least.
func TestEveryRouteHasAnSDKMethod(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("..", "internal", "httpapi", "routes.go"))
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]bool{}
	files, _ := filepath.Glob("*_test.go")
	exampleFunc := regexp.MustCompile(`(?m)^func ExampleClient_([A-Za-z]+)\(\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range exampleFunc.FindAllStringSubmatch(string(b), -1) {
			examples[m[1]] = true
		}
	}
	ct := reflect.TypeOf(&client.Client{})
	seen := map[string]bool{}
	for _, m := range routeLine.FindAllStringSubmatch(string(src), -1) {
		route := m[1] + " " + m[2]
		seen[route] = true
		if _, ok := notSDK[route]; ok {
			continue
		}
		methods, ok := sdk[route]
		if !ok {
			t.Errorf("route %q has no SDK method: add one (and its Example) and list it here", route)
			continue
		}
		example := false
		for _, name := range methods {
			if _, ok := ct.MethodByName(name); !ok {
				t.Errorf("route %q: Client has no method %s", route, name)
			}
			example = example || examples[name]
		}
		if !example {
			t.Errorf("route %q: none of %v has an ExampleClient_ function", route, methods)
		}
	}
	if len(seen) < 20 {
		t.Fatalf("read only %d routes from routes.go: has its format changed?", len(seen))
	}
	for route := range sdk {
		if !seen[route] {
			t.Errorf("route %q is not in routes.go any more", route)
		}
	}
}
