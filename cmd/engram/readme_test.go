package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/httpapi"
)

// readmeBlock is a fenced block of README.md marked with <!-- readme-test[: kind] -->.
type readmeBlock struct {
	kind, body string
	line       int
}

var readmeMarker = regexp.MustCompile("(?m)^<!-- readme-test(?:: ([^>]*?))? -->\n```[a-z]*\n")

func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	var out []readmeBlock
	for _, m := range readmeMarker.FindAllStringSubmatchIndex(text, -1) {
		start := m[1]
		end := strings.Index(text[start:], "\n```\n")
		if end < 0 {
			t.Fatalf("README.md: the block at byte %d is not closed", start)
		}
		kind := ""
		if m[2] >= 0 {
			kind = text[m[2]:m[3]]
		}
		out = append(out, readmeBlock{kind: kind, body: text[start : start+end+1], line: strings.Count(text[:start], "\n") + 1})
	}
	if len(out) < 8 {
		t.Fatalf("found %d marked blocks in README.md", len(out))
	}
	return out
}

// TestREADMEShellRunsAsWritten runs every shell block marked for testing, in order, in
// one bash (set -euo pipefail) against a real engram, with `engram` on the PATH, and
// checks what they printed and configured.
func TestREADMEShellRunsAsWritten(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed (the README's curl examples use it)")
	}
	tok, err := httpapi.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: "readme", Name: "docs", SHA256: httpapi.HashToken(tok)}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := startNode(context.Background(), testApp(t), tokens, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\n%s=1 exec %q \"$@\"\n", runMainEnv, self) // TestMain runs main
	if err := os.WriteFile(filepath.Join(bin, "engram"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for _, b := range readmeBlocks(t) {
		if b.kind == "" {
			fmt.Fprintf(&script, "echo '--- README.md:%d' >&2\n%s", b.line, b.body)
		}
	}
	// What the token block configured, for the checks below.
	script.WriteString("echo \"TOKENS=$ENGRAM_TOKENS\"\necho \"TOKENS_FILE=$ENGRAM_TOKENS_FILE\"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "ENGRAM_URL="+n.URL, "ENGRAM_TOKEN="+tok,
		"ENGRAM_TOKENS=", "ENGRAM_TOKENS_FILE=")
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("the README's shell blocks failed: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	got := string(out)
	for _, want := range []string{
		"[memory_ref: ",                         // the context block cites
		"The user prefers meetings after 10am",  // the cited memory, read back
		"The team deploys on Kubernetes apollo", // metadata in search results
		`"tokens_used"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the README's output lacks %q:\n%s", want, got)
		}
	}
	// The token the README created authenticates through both forms of configuration.
	var token, spec, file string
	for _, l := range strings.Split(got, "\n") {
		switch {
		case strings.HasPrefix(l, "egm_"):
			token = l
		case strings.HasPrefix(l, "TOKENS="):
			spec = strings.TrimPrefix(l, "TOKENS=")
		case strings.HasPrefix(l, "TOKENS_FILE="):
			file = strings.TrimPrefix(l, "TOKENS_FILE=")
		}
	}
	fromSpec, err := httpapi.ParseTokens(spec)
	if err != nil {
		t.Fatalf("ENGRAM_TOKENS=%q: %v", spec, err)
	}
	fromFile, err := httpapi.LoadTokenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range []*httpapi.Tokens{fromSpec, fromFile} {
		if p, ok := ts.Authenticate(token); !ok || p.Tenant != "acme" || p.Name != "support-bot" {
			t.Errorf("token %q: %+v %v, want acme/support-bot", token, p, ok)
		}
	}
}

// TestREADMEModelConfigurations loads each provider's block through engram's
// configuration: the variable names exist and the values are accepted.
func TestREADMEModelConfigurations(t *testing.T) {
	t.Parallel()
	n := 0
	for _, b := range readmeBlocks(t) {
		if b.kind != "config" {
			continue
		}
		n++
		env := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(b.body), "\n") {
			k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "=")
			if !strings.HasPrefix(l, "export ENGRAM_") || !ok {
				t.Fatalf("README.md:%d: %q is not an export of an ENGRAM_ variable", b.line, l)
			}
			if !knownVar(k) {
				t.Errorf("README.md:%d: engram has no variable %s", b.line, k)
			}
			env[k] = v
		}
		c, err := LoadConfig(envMap(env))
		if err != nil {
			t.Errorf("README.md:%d: %v", b.line, err)
			continue
		}
		if c.LLMBaseURL == "" || c.LLMModel == "" {
			t.Errorf("README.md:%d: no chat model configured", b.line)
		}
		if env["ENGRAM_EMBED_BASE_URL"] != "" && (c.EmbedBaseURL == "" || c.EmbedModel == "") {
			t.Errorf("README.md:%d: the embedding model is not configured", b.line)
		}
	}
	if n != 5 {
		t.Errorf("%d model configurations in README.md, want OpenAI, DeepSeek, Qwen, Ollama and vLLM", n)
	}
}

func knownVar(name string) bool {
	for _, v := range envVars {
		if v.name == name {
			return true
		}
	}
	return false
}

// TestREADMEGoLoopIsTheExample: the README's Go agent loop is the body of the executed
// Example it names, character for character (less one level of indentation).
func TestREADMEGoLoopIsTheExample(t *testing.T) {
	t.Parallel()
	found := false
	for _, b := range readmeBlocks(t) {
		f := strings.Fields(b.kind)
		if len(f) != 3 || f[0] != "go" {
			continue
		}
		found = true
		src, err := os.ReadFile(filepath.Join("..", "..", f[1]))
		if err != nil {
			t.Fatal(err)
		}
		text := string(src)
		head := "func " + f[2] + "() {\n"
		i := strings.Index(text, head)
		if i < 0 {
			t.Fatalf("%s has no %s", f[1], f[2])
		}
		body := text[i+len(head):]
		body = body[:strings.Index(body, "\n}\n")+1]
		if j := strings.Index(body, "\t// Output:"); j >= 0 {
			body = body[:j]
		}
		lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
		for k, l := range lines {
			lines[k] = strings.TrimPrefix(l, "\t")
		}
		if want := strings.Join(lines, "\n") + "\n"; b.body != want {
			t.Errorf("README.md:%d differs from the body of %s in %s; copy it again.\nREADME:\n%s\nexample:\n%s", b.line, f[2], f[1], b.body, want)
		}
	}
	if !found {
		t.Fatal("README.md has no Go block marked as an example's body")
	}
}
