package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestNodeServesConsole: the real wiring mounts the console at /console/.
func TestNodeServesConsole(t *testing.T) {
	n, _, _ := testNode(t)
	resp, err := http.Get(n.URL + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	// /console/ sends a signed-out browser on to the sign-in form.
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `name="token"`) ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /console/: %d %q\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}
