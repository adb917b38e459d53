package redact

import (
	"strings"
	"sync"
	"testing"
)

// Fake secrets are assembled from pieces so that secret scanners do not flag this
// file; none of them is a real credential.
var (
	mixed48    = "Xq7Lm2Pz9Rt4Vb8Nc3Kd6Hf1Jg5Ws0AeYuIoTrEwQzXcVbNm"[:48]
	openaiKey  = "sk-" + mixed48
	projKey    = "sk-" + "proj-" + mixed48 + "_Ab12"
	antKey     = "sk-" + "ant-api03-" + mixed48 + "-Zz9AA"
	hexKey     = "sk-" + "3f9a1c2b7d4e5f60718293a4b5c6d7e8"
	awsID      = "AKIA" + "IOSFODNN7EXAMPLE"
	awsSecret  = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	gcpKey     = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	ghToken    = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"
	ghPAT      = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF0123456789abcdefghijklmnop"
	slackTok   = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	stripeKey  = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"
	stripeRK   = "rk_" + "live_" + "51H8abcDEF123ghiJKL456mno"
	jwt        = "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	bearerTok  = "abc123def456ghi789jkl0mno"
	glToken    = "glpat-" + "xY9z8W7v6U5t4S3r2Q1p"
	hfToken    = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"
	gcpTok     = "ya29." + "a0AfH6SMBx3Yz9Kq2LmNoPqRsTuVwXy"
	slackHook  = "https://hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	privateKey = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aumXYZ\nq2LmNoPqRsTuVwXy\n-----END RSA PRIVATE KEY-----"
	pkcs8Key   = "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----"
)

func newRedactor(t testing.TB) *Redactor {
	t.Helper()
	r, err := New(Config{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func TestRedactSecrets(t *testing.T) {
	t.Parallel()
	r := newRedactor(t)
	tests := []struct {
		name   string
		text   string // contains secret exactly once
		secret string
		kind   string
		keep   string // a label or context that must survive
	}{
		{"openai legacy", "use " + openaiKey + " for prod", openaiKey, kindOpenAIKey, "use "},
		{"openai project", "my key is " + projKey, projKey, kindOpenAIKey, "my key is "},
		{"anthropic", "ANTHROPIC_API_KEY " + antKey, antKey, kindAnthropicKey, "ANTHROPIC_API_KEY"},
		{"hex sk key", "deepseek key " + hexKey + ".", hexKey, kindOpenAIKey, "deepseek key"},
		{"aws access key id", "id=" + awsID + " region us-east-1", awsID, kindAWSAccessKey, "us-east-1"},
		{"aws secret labelled", "aws_secret_access_key=" + awsSecret, awsSecret, kindAWSSecretKey, "aws_secret_access_key="},
		{"gcp api key", "maps key: " + gcpKey, gcpKey, kindGCPKey, "maps"},
		{"label and value apart", "the courier API key, in case you need to test: qv_8Hd2mK4pLx71Tz", "qv_8Hd2mK4pLx71Tz", kindSecret, "courier API key"},
		{"gcp oauth token", "token " + gcpTok, gcpTok, kindGCPToken, "token "},
		{"github classic", "git clone https://" + ghToken + "@github.com/x/y", ghToken, kindGitHubToken, "@github.com/x/y"},
		{"github fine grained", "GH: " + ghPAT, ghPAT, kindGitHubToken, "GH: "},
		{"gitlab", "export GL=" + glToken, glToken, kindGitLabToken, "export GL="},
		{"slack bot token", "bot " + slackTok + " posts", slackTok, kindSlackToken, " posts"},
		{"slack webhook", "alerts go to " + slackHook, slackHook, kindSlackWebhook, "alerts go to "},
		{"stripe live", "charge with " + stripeKey, stripeKey, kindStripeKey, "charge with "},
		{"stripe restricted", stripeRK + " is read only", stripeRK, kindStripeKey, " is read only"},
		{"huggingface", "HF " + hfToken, hfToken, kindHuggingFace, "HF "},
		{"jwt", "session " + jwt + " expires", jwt, kindJWT, " expires"},
		{"authorization header", "Authorization: Bearer " + bearerTok, bearerTok, kindBearerToken, "Authorization: Bearer "},
		{"bearer lower", "curl -H 'bearer " + bearerTok + "9'", bearerTok + "9", kindBearerToken, "curl -H 'bearer "},
		{"basic auth", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", kindBasicAuth, "Basic "},
		{"pem rsa", "key:\n" + privateKey + "\nthanks", privateKey, kindPrivateKey, "thanks"},
		{"pem pkcs8 in json", `{"private_key": "` + pkcs8Key + `"}`, pkcs8Key, kindPrivateKey, `"private_key"`},
		{"password equals", "login with password=hunter2! today", "hunter2!", kindPassword, "password="},
		{"password json quoted", `{"user":"bob","password": "correct horse battery"}`, "correct horse battery", kindPassword, `"user":"bob"`},
		{"env password", "DB_PASSWORD=s3cr3t-Val", "s3cr3t-Val", kindPassword, "DB_PASSWORD="},
		{"pwd colon", "pwd: Tr0ub4dor&3", "Tr0ub4dor&3", kindPassword, "pwd: "},
		{"passwd", "passwd=letmein99", "letmein99", kindPassword, "passwd="},
		{"password prose", "my wifi password is hunter2.", "hunter2", kindPassword, "password is "},
		{"url credentials", "postgres://app:S3cretPass@db:5432/x", "S3cretPass", kindPassword, "@db:5432/x"},
		{"api_key equals", "api_key=abcd1234efgh", "abcd1234efgh", kindSecret, "api_key="},
		{"token colon", "token: 9f8e7d6c5b4a", "9f8e7d6c5b4a", kindSecret, "token: "},
		{"secret equals", "client_secret=Zx9-Yw8-Vu7", "Zx9-Yw8-Vu7", kindSecret, "client_secret="},
		{"x-api-key header", "X-Api-Key: q1w2e3r4t5y6", "q1w2e3r4t5y6", kindSecret, "X-Api-Key: "},
		{"密码是", "我的密码是abc123，记住了", "abc123", kindPassword, "，记住了"},
		{"密码：", "邮箱密码：Qwe!2345", "Qwe!2345", kindPassword, "邮箱密码："},
		{"密码为", "WiFi密码为 p@ssw0rd 。", "p@ssw0rd", kindPassword, "WiFi密码为"},
		{"密码 space", "保险柜密码 520817，别告诉别人", "520817", kindPassword, "，别告诉别人"},
		{"password no verb", "the router uses password tangerine77 now", "tangerine77", kindPassword, " now"},
		{"card number mistyped", "卡号 6228 4800 1122 3344，开户行在城西", "6228 4800 1122 3344", kindCardNumber, "，开户行在城西"},
		{"card number label", "card number: 5500-1111-2222-3333 expires soon", "5500-1111-2222-3333", kindCardNumber, " expires soon"},
		{"口令", "口令是 zx81spectrum", "zx81spectrum", kindPassword, "口令是"},
		{"密钥", "密钥=AbCdEf123456", "AbCdEf123456", kindSecret, "密钥="},
		{"visa spaced", "card 4111 1111 1111 1111 exp 12/29", "4111 1111 1111 1111", kindCardNumber, "exp 12/29"},
		{"mastercard dashed", "卡号5555-5555-5555-4444谢谢", "5555-5555-5555-4444", kindCardNumber, "谢谢"},
		{"amex", "amex 378282246310005", "378282246310005", kindCardNumber, "amex "},
		{"chinese id", "身份证号11010519491231002X", "11010519491231002X", kindIDNumber, "身份证号"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if seen[tt.secret] {
			t.Fatalf("duplicate secret in table: %s", tt.name)
		}
		seen[tt.secret] = true
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, findings := r.Redact(tt.text)
			if strings.Contains(out, tt.secret) {
				t.Fatalf("secret survived: %q", out)
			}
			if !strings.Contains(out, Placeholder(tt.kind)) {
				t.Fatalf("want placeholder %s in %q (findings %+v)", Placeholder(tt.kind), out, findings)
			}
			if !strings.Contains(out, tt.keep) {
				t.Fatalf("context %q lost: %q", tt.keep, out)
			}
			if len(findings) != 1 {
				t.Fatalf("want 1 finding, got %+v in %q", findings, out)
			}
			f := findings[0]
			if f.Kind != tt.kind || tt.text[f.Start:f.End] != tt.secret {
				t.Fatalf("finding %+v covers %q, want %s over %q", f, tt.text[f.Start:f.End], tt.kind, tt.secret)
			}
		})
	}
	if len(tests) < 20 {
		t.Fatalf("table too small: %d", len(tests))
	}
}

func TestRedactLookAlikes(t *testing.T) {
	t.Parallel()
	r := newRedactor(t)
	tests := []string{
		"sk-learn is a library",
		"we use scikit-learn and sk-learn-compatible-estimators daily",
		"task-12345 is done, see risk-assessment-template-v2",
		"order ORD-2024-88123 shipped",
		"card 4111 1111 1111 1112 is a typo", // fails Luhn
		"the password policy requires 12 characters",
		"the password manager sorts it out",
		"密码 忘了",
		"the password is required",
		"我忘记密码了怎么办",
		"密码是什么？",
		"fixed in commit 3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345",
		"a JWT starts with eyJ and that's it",
		"request 550e8400-e29b-41d4-a716-446655440000 failed",
		"Bearer of good news",
		"set max_tokens=4096 and temperature=0.2",
		"AKIA alone is not a key",
		"timestamp 1700000000000 ms",
		"ISBN 978-3-16-148410-0",
		"see https://example.com:8080/path@v2",
		"the secret to good bread is time",
		"use key: value pairs in YAML",
		"password: 12 characters minimum",
		"身份证号格式为18位",
		"the token budget, roughly: 4096 per call",
		"my password manager, for the record: Bitwarden",
	}
	for _, text := range tests {
		t.Run(text, func(t *testing.T) {
			t.Parallel()
			out, findings := r.Redact(text)
			if out != text || len(findings) != 0 {
				t.Fatalf("changed: %q -> %q (%+v)", text, out, findings)
			}
			if r.IsSecret(text) {
				t.Fatalf("IsSecret(%q) = true", text)
			}
		})
	}
}

func TestRedactSeveral(t *testing.T) {
	t.Parallel()
	r := newRedactor(t)
	in := "id " + awsID + " secret aws_secret_access_key=" + awsSecret + " and " + ghToken
	out, findings := r.Redact(in)
	want := "id [REDACTED:aws_access_key] secret aws_secret_access_key=[REDACTED:aws_secret_key] and [REDACTED:github_token]"
	if out != want {
		t.Fatalf("got  %q\nwant %q", out, want)
	}
	for i := 1; i < len(findings); i++ {
		if findings[i].Start < findings[i-1].End {
			t.Fatalf("overlapping findings %+v", findings)
		}
	}
}

func TestIsSecret(t *testing.T) {
	t.Parallel()
	r := newRedactor(t)
	tests := []struct {
		text string
		want bool
	}{
		{"my api key is " + projKey, true},
		{awsID, true},
		{"password=hunter2!", true},
		{"The user's GitHub token is " + ghToken, true},
		{"密码是abc123", true},
		{"用户的邮箱密码是abc123", true},
		{privateKey, true},
		{"Here is the private key: " + privateKey, true},
		{"user prefers dark mode in every editor; the staging key is " + projKey, false},
		{"用户喜欢周末去爬山，邮箱密码是abc123", false},
		{"Deploys go through the blue-green pipeline on Fridays after review, Bearer " + bearerTok, false},
		{"sk-learn is a library", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			if got := r.IsSecret(tt.text); got != tt.want {
				out, _ := r.Redact(tt.text)
				t.Fatalf("IsSecret = %v, want %v (redacted %q)", got, tt.want, out)
			}
		})
	}
}

func TestNewExtra(t *testing.T) {
	t.Parallel()
	r, err := New(Config{Extra: []string{`\bEMP-\d{6}\b`, `(?i)\bbadge=(?P<v>\d{4,6})\b`}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	out, findings := r.Redact("employee EMP-123456 uses badge=9876")
	if want := "employee [REDACTED:custom] uses badge=[REDACTED:custom]"; out != want {
		t.Fatalf("got %q want %q", out, want)
	}
	if len(findings) != 2 || findings[0].Kind != kindCustom {
		t.Fatalf("findings %+v", findings)
	}

	for _, tt := range []struct {
		extra []string
		want  string
	}{
		{[]string{`ok`, `(unclosed`}, "extra pattern 1"},
		{[]string{`a*`}, "matches the empty string"},
		{[]string{` `}, "extra pattern 0: empty"},
	} {
		if _, err := New(Config{Extra: tt.extra}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%q) error = %v, want containing %q", tt.extra, err, tt.want)
		}
	}
}

func TestRedactConcurrent(t *testing.T) {
	t.Parallel()
	r := newRedactor(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if out, _ := r.Redact("k " + ghToken); strings.Contains(out, ghToken) {
					t.Error("token survived")
				}
			}
		})
	}
	wg.Wait()
}

func TestValidators(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		fn   func(string) bool
		in   string
		want bool
	}{
		{"luhn visa", validCard, "4111111111111111", true},
		{"luhn bad", validCard, "4111111111111112", false},
		{"luhn short", validCard, "411111111111", false},
		{"luhn 20 digits", validCard, "41111111111111111111", false},
		{"id ok", validChineseID, "110101199003074514", true},
		{"id lower x", validChineseID, "11010519491231002x", true},
		{"id bad check", validChineseID, "110101199003074515", false},
		{"random mixed", looksRandom, mixed48, true},
		{"random words", looksRandom, "learn-compatible-estimators", false},
		{"loose word", looksRandomLoose, "required", false},
		{"loose digit", looksRandomLoose, "hunter2", true},
	} {
		if got := tt.fn(tt.in); got != tt.want {
			t.Errorf("%s(%q) = %v, want %v", tt.name, tt.in, got, tt.want)
		}
	}
}

// benchText is about 1 KB of ordinary conversation with two secrets in it.
func benchText() string {
	var b strings.Builder
	for b.Len() < 900 {
		b.WriteString("The user prefers meetings after 10am and wants replies in Chinese. 用户喜欢简洁的回答。 ")
	}
	b.WriteString("Use token=" + ghToken + " and card 4111 1111 1111 1111.")
	return b.String()
}

func BenchmarkRedact(b *testing.B) {
	r := newRedactor(b)
	text := benchText()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		r.Redact(text)
	}
}

func BenchmarkRedactClean(b *testing.B) {
	r := newRedactor(b)
	text := strings.Repeat("The user prefers meetings after 10am and short answers. ", 18)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		r.Redact(text)
	}
}

// FuzzRedact checks the invariants every caller relies on: findings are in
// bounds, sorted, non-overlapping, and the output is the input with exactly those
// spans replaced.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"", "password=hunter2!", "密码是abc123", "4111 1111 1111 1111",
		"Authorization: Bearer " + bearerTok, privateKey, "sk-learn", "x" + ghToken, "\xff\xfe" + awsID} {
		f.Add(s)
	}
	r := newRedactor(f)
	f.Fuzz(func(t *testing.T, s string) {
		out, findings := r.Redact(s)
		var b strings.Builder
		last := 0
		for _, fd := range findings {
			if fd.Start < last || fd.End <= fd.Start || fd.End > len(s) {
				t.Fatalf("bad finding %+v (last end %d, len %d)", fd, last, len(s))
			}
			b.WriteString(s[last:fd.Start] + Placeholder(fd.Kind))
			last = fd.End
		}
		b.WriteString(s[last:])
		if b.String() != out {
			t.Fatalf("output %q does not match findings %+v", out, findings)
		}
		_ = r.IsSecret(s)
	})
}

func TestHintsAreLowerCase(t *testing.T) {
	t.Parallel()
	for _, s := range builtinSpecs() {
		for _, h := range append(append([]string{}, s.hints...), s.also...) {
			if h != strings.ToLower(h) {
				t.Errorf("%s: hint %q is not lower-case; the prefilter compares with lower-cased text", s.kind, h)
			}
		}
	}
}

func TestRedactValue(t *testing.T) {
	t.Parallel()
	r := newRedactor(t)
	in := map[string]any{"note": "key " + ghToken, "n": 3.0, "nested": map[string]any{"list": []any{"x", openaiKey, true}},
		"password=" + "hunter2!": "k"}
	out, kinds := r.RedactValue(in)
	m := out.(map[string]any)
	if m["note"] != "key [REDACTED:github_token]" || m["n"] != 3.0 ||
		m["nested"].(map[string]any)["list"].([]any)[1] != "[REDACTED:openai_key]" || m["password=[REDACTED:password]"] != "k" {
		t.Fatalf("RedactValue = %#v", out)
	}
	if len(kinds) != 3 {
		t.Fatalf("kinds %v", kinds)
	}
	if in["note"] != "key "+ghToken {
		t.Fatal("RedactValue wrote through its input")
	}
}
