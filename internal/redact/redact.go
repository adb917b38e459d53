// Package redact finds secrets (API keys, tokens, passwords, private keys, card
// numbers …) in free text and replaces them with typed placeholders such as
// "[REDACTED:openai_key]". Ingest uses it before a turn is stored and the extractor
// before a candidate memory is published, so a secret an agent or a user typed never
// becomes a long-term memory.
//
// A Redactor is immutable after New and safe for concurrent use.
package redact

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Kinds of findings; the placeholder for kind k is "[REDACTED:k]".
const (
	kindOpenAIKey    = "openai_key"
	kindAnthropicKey = "anthropic_key"
	kindAWSAccessKey = "aws_access_key"
	kindAWSSecretKey = "aws_secret_key"
	kindGCPKey       = "gcp_key"
	kindGCPToken     = "gcp_token"
	kindGitHubToken  = "github_token"
	kindGitLabToken  = "gitlab_token"
	kindSlackToken   = "slack_token"
	kindSlackWebhook = "slack_webhook"
	kindStripeKey    = "stripe_key"
	kindNPMToken     = "npm_token"
	kindHuggingFace  = "huggingface_token"
	kindJWT          = "jwt"
	kindBearerToken  = "bearer_token"
	kindBasicAuth    = "basic_auth"
	kindPrivateKey   = "private_key"
	kindPassword     = "password"
	kindSecret       = "secret"
	kindCardNumber   = "card_number"
	kindIDNumber     = "id_number"
	kindCustom       = "custom"

	// Cloud, VCS, registry, chat, payment and mail providers' credentials.
	kindAzureKey      = "azure_key"
	kindAzureSAS      = "azure_sas"
	kindAliyunKey     = "aliyun_access_key"
	kindTencentKey    = "tencent_secret_id"
	kindBaiduKey      = "baidu_access_key"
	kindCloudKey      = "cloud_access_key" // labelled AK/SK pairs (Huawei, Baidu, …) without a prefix
	kindAtlassian     = "atlassian_token"  // Bitbucket app passwords, Atlassian API tokens
	kindPyPIToken     = "pypi_token"
	kindDockerToken   = "docker_token"
	kindDiscordToken  = "discord_token"
	kindDiscordHook   = "discord_webhook"
	kindTelegramToken = "telegram_token"
	kindSendGridKey   = "sendgrid_key"
	kindTwilioKey     = "twilio_key"
	kindMailgunKey    = "mailgun_key"
	kindEngramToken   = "engram_token"
	kindIBAN          = "iban"
	kindSSN           = "us_ssn"
	kindUKNI          = "uk_ni"

	// Personal identifiers: redacted unless Config.Keep names them.
	KindPhone         = "phone"
	KindEmail         = "email"
	KindAddress       = "address"
	placeholderPrefix = "[REDACTED:"
	placeholderSuffix = "]"
	valueGroupPrefix  = "v" // named groups v1, v2 … mark the part to replace
)

// Placeholder returns the text that replaces a secret of the given kind.
func Placeholder(kind string) string { return placeholderPrefix + kind + placeholderSuffix }

// Config tunes a Redactor.
type Config struct {
	// Extra are additional regular expressions (RE2 syntax); every match is
	// replaced by [REDACTED:custom]. A named group whose name starts with "v"
	// limits the replacement to that group, to keep a label such as "pin=".
	Extra []string
	// Keep lists personal identifiers to leave in place (some agents need a user's
	// phone number or email): KindPhone, KindEmail, KindAddress. Secrets, card and
	// account numbers and national identity numbers are always redacted; naming one
	// is an error.
	Keep []string
}

// Keepable lists the kinds Config.Keep may name.
func Keepable() []string { return []string{KindPhone, KindEmail, KindAddress} }

// Finding is one redacted span. Start and End are byte offsets in the input.
type Finding struct {
	Kind       string
	Start, End int
}

// Redactor replaces secrets in text. Build it with New.
type Redactor struct {
	rules []rule
	// filler and cjkFiller are read-only after New; IsSecret ignores these words.
	filler    map[string]bool
	cjkFiller *strings.Replacer
	// placeholders matches any Placeholder, so a second pass leaves them be
	// (outsidePlaceholders).
	placeholders *regexp.Regexp
}

type rule struct {
	kind string
	re   *regexp.Regexp
	// hints: the rule can only match when the lower-cased input contains one of
	// them; this skips most regexps on ordinary text, which is most of the cost.
	hints []string
	// label: a hint only counts when a ':' or '=' follows it (after the rest of
	// the label word), so prose full of "tokens" and "keys" skips the rule.
	label bool
	// also: when set, the input must contain one of these too.
	also []string
	// minDigits: the rule can only match when the input has a number with at least
	// that many digits (single spaces or dashes allowed between them).
	minDigits int
	// wordStart: the match must not continue a word. Checked here rather than
	// with a leading \b, which would hide the literal prefix the regexp engine
	// uses to skip ahead.
	wordStart bool
	// valueGroups are the submatch indices whose span is replaced (first one that
	// took part in the match); empty means the whole match.
	valueGroups []int
	// validate rejects matches that have the shape but not the substance of a
	// secret (a Luhn-failing number, an English word after "bearer").
	validate func(v string) bool
	// trimPunct drops trailing sentence punctuation from the value ("is hunter2.").
	trimPunct bool
	// notUserinfo: the match must not follow "//" or ':' (the user part of a URL,
	// https://token@host, is no email address).
	notUserinfo bool
	// pre, when set, is a cheap scan that must find the pattern's anchor in the input
	// (rules without a literal prefix are slow to run over text that lacks it).
	pre func(s string) bool
}

type ruleSpec struct {
	kind        string
	pattern     string
	hints       []string
	label       bool
	also        []string
	minDigits   int
	wordStart   bool
	validate    func(string) bool
	trimPunct   bool
	notUserinfo bool
	pre         func(string) bool
}

// Pieces shared by the "label: value" rules. The value is either quoted (and may
// then contain spaces) or runs to the next space, quote, comma or semicolon.
const (
	labelSep   = `["']?[ \t]*(?:=>|:=|[:=])[ \t]*`
	labelValue = `(?:"(?P<v1>[^"\r\n]{1,200})"|'(?P<v2>[^'\r\n]{1,200})'|(?P<v3>[^\s"'` + "`" + `,;]+))`

	// cjkValue stops at Han characters and CJK punctuation, which never belong to
	// a password someone types but usually follow it ("密码是abc123，记住了").
	cjkValue = `(?P<v1>[^\s\p{Han}，。；、！？：“”‘’（）《》【】,;"'<>]+)`
)

// builtinSpecs lists the rules in priority order: when two findings cover the same
// span, the earlier (more specific) kind wins.
func builtinSpecs() []ruleSpec {
	return []ruleSpec{
		{kind: kindPrivateKey,
			// An unterminated block (a truncated paste) is redacted to the end of the text.
			pattern: `(?s)-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\z)`,
			hints:   []string{"private key-----"}},
		{kind: kindAnthropicKey,
			pattern: `sk-ant-(?:[a-z]+\d\d-)?[A-Za-z0-9_-]{20,}`,
			hints:   []string{"sk-ant-"}, validate: looksRandom, wordStart: true},
		{kind: kindOpenAIKey,
			pattern: `sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`,
			hints:   []string{"sk-"}, validate: looksRandom, wordStart: true},
		{kind: kindAWSAccessKey,
			pattern: `(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`,
			hints:   []string{"akia", "asia", "abia", "acca"}, wordStart: true},
		{kind: kindAWSSecretKey,
			pattern: `(?i)(?:aws[_-]?secret(?:[_-]?access)?[_-]?key|secret[_-]?access[_-]?key)` + labelSep + `["']?(?P<v1>[A-Za-z0-9/+=]{40})\b`,
			hints:   []string{"secret"}, label: true},
		{kind: kindGCPKey,
			pattern: `AIza[0-9A-Za-z_-]{35}`,
			hints:   []string{"aiza"}, wordStart: true},
		{kind: kindGCPKey,
			pattern: `GOCSPX-[0-9A-Za-z_-]{28}`,
			hints:   []string{"gocspx-"}, wordStart: true},
		{kind: kindGCPToken,
			pattern: `ya29\.[0-9A-Za-z_-]{20,}`,
			hints:   []string{"ya29."}, wordStart: true},
		{kind: kindGitHubToken,
			pattern: `(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})`,
			hints:   []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, wordStart: true},
		{kind: kindGitLabToken,
			pattern: `glpat-[A-Za-z0-9_-]{20,}`,
			hints:   []string{"glpat-"}, wordStart: true},
		{kind: kindSlackWebhook,
			pattern: `https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+`,
			hints:   []string{"hooks.slack.com"}},
		{kind: kindSlackToken,
			pattern: `xox[abposre]-[A-Za-z0-9-]{10,}`,
			hints:   []string{"xox"}, wordStart: true},
		{kind: kindStripeKey,
			pattern: `\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}`,
			hints:   []string{"_live_", "_test_"}},
		{kind: kindNPMToken,
			pattern: `npm_[A-Za-z0-9]{36}\b`,
			hints:   []string{"npm_"}, wordStart: true},
		{kind: kindHuggingFace,
			pattern: `hf_[A-Za-z0-9]{30,}\b`,
			hints:   []string{"hf_"}, validate: looksRandom, wordStart: true},
		{kind: kindAzureKey,
			// Storage account keys (88 base64 characters) and Service Bus / Event Hubs
			// shared access keys in connection strings.
			pattern: `(?i)(?:AccountKey|SharedAccessKey|AccessKey)=(?P<v1>[A-Za-z0-9+/]{30,}={0,2})`,
			hints:   []string{"accountkey=", "sharedaccesskey=", "accesskey="}},
		{kind: kindAzureSAS,
			// A shared access signature's signature parameter, URL-encoded base64.
			pattern: `(?i)[?&;]sig=(?P<v1>[A-Za-z0-9%+/=]{20,})`,
			hints:   []string{"sig="}},
		{kind: kindAliyunKey,
			pattern: `LTAI[0-9A-Za-z]{12,24}\b`,
			hints:   []string{"ltai"}, wordStart: true},
		{kind: kindTencentKey,
			pattern: `AKID[0-9A-Za-z]{13,40}\b`,
			hints:   []string{"akid"}, wordStart: true},
		{kind: kindBaiduKey,
			pattern: `ALTAK[0-9A-Za-z]{10,40}\b`,
			hints:   []string{"altak"}, wordStart: true},
		{kind: kindCloudKey,
			// AK/SK pairs without a recognisable prefix (Huawei Cloud's 20-character AK
			// and 40-character SK, Baidu's 32-character SK), under their usual labels.
			pattern: `(?i)(?:huaweicloud[_-]sdk[_-](?:ak|sk)|hw[_-]?(?:ak|sk)|obs[_-](?:ak|sk)|bce[_-](?:ak|sk)|\b(?:ak|sk))` + labelSep + labelValue,
			hints:   []string{"ak", "sk"}, label: true, validate: keyLike},
		{kind: kindAtlassian,
			pattern: `AT(?:BB|ATT3|CTT3)[A-Za-z0-9_=.-]{24,}`,
			hints:   []string{"atbb", "atatt3", "atctt3"}, wordStart: true},
		{kind: kindPyPIToken,
			pattern: `pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{40,}`,
			hints:   []string{"pypi-ageichlwas5vcmc"}, wordStart: true},
		{kind: kindDockerToken,
			pattern: `dckr_pat_[A-Za-z0-9_-]{20,}`,
			hints:   []string{"dckr_pat_"}, wordStart: true},
		{kind: kindDiscordHook,
			pattern: `https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,}`,
			hints:   []string{"discord"}},
		{kind: kindDiscordToken,
			// user id (base64) . timestamp . HMAC
			pattern: `[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}`,
			pre:     dotSixDot, wordStart: true, validate: looksRandom},
		{kind: kindTelegramToken,
			pattern: `\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b`,
			hints:   []string{":aa"}},
		{kind: kindSendGridKey,
			pattern: `SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`,
			hints:   []string{"sg."}, wordStart: true},
		{kind: kindTwilioKey,
			// API key SIDs; auth tokens are labelled and caught by the secret rules.
			pattern: `SK[0-9a-f]{32}\b`,
			hints:   []string{"sk"}, wordStart: true},
		{kind: kindMailgunKey,
			pattern: `key-[0-9a-f]{32}\b`,
			hints:   []string{"key-"}, wordStart: true},
		{kind: kindMailgunKey,
			pattern: `\b[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}\b`,
			pre:     func(s string) bool { return hexRun(s) >= 32 }},
		{kind: kindEngramToken,
			pattern: `egm_[A-Za-z0-9]{32,64}\b`,
			hints:   []string{"egm_"}, wordStart: true},
		{kind: kindJWT,
			pattern: `eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`,
			hints:   []string{"eyj"}, wordStart: true},
		{kind: kindBearerToken,
			pattern: `(?i)\bbearer[ \t]+(?P<v1>[A-Za-z0-9._~+/=-]{16,})`,
			hints:   []string{"bearer"}, validate: looksRandomLoose},
		{kind: kindBasicAuth,
			pattern: `(?i)\bauthorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+(?P<v1>[A-Za-z0-9+/=]{8,})`,
			hints:   []string{"authorization"}},
		{kind: kindPassword,
			// Credentials in a URL: scheme://user:password@host (the user may be empty,
			// as in redis://:password@host).
			pattern: `://[^\s:/@]*:(?P<v1>[^\s/@]+)@`,
			hints:   []string{"://"}},
		{kind: kindPassword,
			pattern: `(?i)(?:password|passwd|pwd|passphrase|passcode)\b` + labelSep + labelValue,
			hints:   []string{"pass", "pwd"}, validate: minLen3, label: true},
		{kind: kindPassword,
			// Prose: "my wifi password is hunter2". Only secret-looking values, so that
			// "the password is required" stays.
			pattern: `(?i)\b(?:password|passwd|passcode|pin code|pin)[ \t]+(?:is|was)[ \t]+(?:"(?P<v1>[^"\r\n]{1,200})"|(?P<v2>\S+))`,
			hints:   []string{"pass", "pin"}, also: []string{" is ", " was "},
			validate: looksRandomLoose, trimPunct: true},
		{kind: kindPassword,
			pattern: `(?i)\bpin(?:[ _-]?code)?\b` + labelSep + labelValue,
			hints:   []string{"pin"}, validate: hasDigit, label: true},
		{kind: kindSecret,
			pattern: `(?i)(?:secret|secret[_-]?(?:key|id)|api[_-]?key|apikey|access[_-]?key(?:[_-]?(?:id|secret))?|private[_-]?key|token|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret)\b` + labelSep + labelValue,
			hints:   []string{"secret", "key", "token"}, validate: minLen3, label: true},
		{kind: kindSecret,
			// Prose: "the twilio auth token is 5f2…". Only key-like values.
			pattern: `(?i)\b(?:token|key|secret)[ \t]+(?:is|was)[ \t]+(?P<v1>\S+)`,
			hints:   []string{"token", "key", "secret"}, also: []string{" is ", " was "},
			validate: keyLike, trimPunct: true},
		{kind: kindSecret,
			// The label and its value apart: "the staging API key, if you want to try it: qv_8H…",
			// "the token, in case you need it = ab12…". Only key-like values.
			pattern:  `(?i)\b(?:api[ _-]?key|token|secret|credentials?|passphrase|password)\b[^.:：=\r\n]{1,60}[:：=][ \t]*(?P<v1>\S+)`,
			hints:    []string{"key", "token", "secret", "credential", "passphrase", "password"},
			validate: keyLike, trimPunct: true},
		{kind: kindPassword,
			pattern: `(?i)(?:密码|口令|验证码|pin[ \t]*码)(?:[ \t]*(?:是|为|[:：=]))+[ \t]*` + cjkValue,
			hints:   []string{"密码", "口令", "验证码", "码"}},
		{kind: kindPassword,
			// Typed after the label with only a space ("密码 918273", "取款密码 8812"): a
			// value with a digit, so that "密码 忘了" stays.
			pattern: `(?:密码|口令|验证码)[ \t]+` + cjkValue,
			hints:   []string{"密码", "口令", "验证码"}, validate: hasDigit},
		{kind: kindPassword,
			// Prose without a verb: "password hunter2hunter2", "passcode 4471". Only a value
			// with a digit, so that "password manager" stays.
			pattern: `(?i)\b(?:password|passwd|passcode|pin)[ \t]+(?P<v1>[^\s,;]*\d[^\s,;]*)`,
			hints:   []string{"pass", "pin"}, validate: hasDigit, trimPunct: true},
		{kind: kindCardNumber,
			// A number told as a card or account number is one whether or not its check
			// digit is right (people mistype them, and a wrong one still names the card).
			pattern:   `(?i)(?:卡号|card number|card no\.?|card #|account number|账号)[ \t]*(?:是|为|[:：=#])?[ \t]*(?P<v1>\d(?:[ -]?\d){11,18})`,
			hints:     []string{"卡号", "card", "account", "账号"},
			minDigits: 12},
		{kind: kindSecret,
			pattern: `(?:密钥|秘钥)(?:[ \t]*(?:是|为|[:：=]))+[ \t]*` + cjkValue,
			hints:   []string{"密钥", "秘钥"}},
		{kind: kindIDNumber,
			// Chinese resident ID: region, birth date, sequence, checksum.
			pattern:   `\b[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]\b`,
			minDigits: 17, validate: validChineseID},
		{kind: kindCardNumber,
			// Issuer prefixes start with 2–6; separators are single spaces or dashes.
			pattern:   `\b[2-6](?:[ -]?\d){12,18}\b`,
			minDigits: 13, validate: validCard},
		{kind: kindIBAN,
			// Country, check digits, then the account in groups of four (ISO 13616),
			// checked with mod 97.
			pattern: `\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?\b`,
			pre:     capsThenDigit, validate: validIBAN},
		{kind: kindSSN,
			// Formatted only: area (not 000, 666 or 9xx), group, serial.
			pattern:   `\b(?:00[1-9]|0[1-9]\d|[1-578]\d\d|6[0-57-9]\d|66[0-57-9])[- ](?:0[1-9]|[1-9]\d)[- ](?:000[1-9]|00[1-9]\d|0[1-9]\d\d|[1-9]\d{3})\b`,
			minDigits: 9},
		{kind: kindUKNI,
			pattern: `\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b`,
			pre:     capsThenDigit, validate: validUKNI},
		{kind: KindEmail,
			pattern: `[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`,
			hints:   []string{"@"}, wordStart: true, notUserinfo: true},
		{kind: KindPhone,
			// International (E.164-like): + or 00, country code, then groups.
			pattern:   `(?:\+|\b00)[1-9]\d{0,2}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}\b`,
			minDigits: 7, validate: phoneDigits},
		{kind: KindPhone,
			// North American: (415) 555-2671, 415-555-2671, 415.555.2671.
			pattern:   `(?:\([2-9]\d{2}\)[ ]?|\b[2-9]\d{2}[.-])[2-9]\d{2}[ .-]\d{4}\b`,
			minDigits: 7},
		{kind: KindPhone,
			// Chinese mobiles: 1[3-9]x xxxx xxxx.
			pattern:   `\b1[3-9]\d[ -]?\d{4}[ -]?\d{4}\b`,
			minDigits: 11},
		{kind: KindAddress,
			pattern: `\b\d{1,5} (?:[A-Z][a-z]+ ){1,3}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Close|Square|Sq)\b\.?`,
			pre:     digitSpaceCapital},
		{kind: KindAddress,
			pattern: `\p{Han}{2,3}(?:省|市|自治区)(?:\p{Han}{1,8}?(?:市|区|县|镇))*\p{Han}{1,12}?(?:路|街|大道|巷|胡同)\d{1,5}号(?:\d{1,4}(?:号楼|栋|单元|室))*`,
			hints:   []string{"号"}},
	}
}

// New compiles the built-in rules and cfg.Extra.
func New(cfg Config) (*Redactor, error) {
	keep := map[string]bool{}
	for _, k := range cfg.Keep {
		k = strings.TrimSpace(strings.ToLower(k))
		if k == "" {
			continue
		}
		if !slices.Contains(Keepable(), k) {
			return nil, fmt.Errorf("redact: cannot keep %q: only personal identifiers (%s) may be kept; secrets are always redacted",
				k, strings.Join(Keepable(), ", "))
		}
		keep[k] = true
	}
	specs := slices.DeleteFunc(builtinSpecs(), func(s ruleSpec) bool { return keep[s.kind] })
	r := &Redactor{
		rules:     make([]rule, 0, len(specs)+len(cfg.Extra)),
		filler:    fillerWords(),
		cjkFiller: cjkFillerReplacer(),
		placeholders: regexp.MustCompile(regexp.QuoteMeta(placeholderPrefix) + `[A-Za-z0-9_]+` +
			regexp.QuoteMeta(placeholderSuffix)),
	}
	for _, s := range specs {
		re, err := regexp.Compile(s.pattern)
		if err != nil {
			// A broken built-in is a programming error, but report it rather than panic.
			return nil, fmt.Errorf("redact: compile built-in %s rule: %w", s.kind, err)
		}
		r.rules = append(r.rules, rule{kind: s.kind, re: re, hints: s.hints, label: s.label,
			also: s.also, minDigits: s.minDigits, wordStart: s.wordStart,
			valueGroups: valueGroups(re), validate: s.validate, trimPunct: s.trimPunct, notUserinfo: s.notUserinfo, pre: s.pre})
	}
	for i, p := range cfg.Extra {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("redact: extra pattern %d: empty pattern", i)
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("redact: extra pattern %d (%q): %w", i, p, err)
		}
		if re.MatchString("") {
			// It would match everywhere and redact nothing useful.
			return nil, fmt.Errorf("redact: extra pattern %d (%q): matches the empty string", i, p)
		}
		r.rules = append(r.rules, rule{kind: kindCustom, re: re, valueGroups: valueGroups(re)})
	}
	return r, nil
}

func valueGroups(re *regexp.Regexp) []int {
	var idx []int
	for i, name := range re.SubexpNames() {
		if i > 0 && strings.HasPrefix(name, valueGroupPrefix) {
			idx = append(idx, i)
		}
	}
	return idx
}

// Redact returns s with every secret replaced by its placeholder, and the findings
// (sorted by Start, non-overlapping) in terms of byte offsets in s.
func (r *Redactor) Redact(s string) (string, []Finding) {
	findings := r.find(s)
	if len(findings) == 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, f := range findings {
		b.WriteString(s[last:f.Start])
		b.WriteString(Placeholder(f.Kind))
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String(), findings
}

type candidate struct {
	Finding
	prio int
}

func (r *Redactor) find(s string) []Finding {
	if s == "" {
		return nil
	}
	lower := asciiLower(s) // same offsets as s
	digits, numStart := longestNumber(s)
	var cands []candidate
	for prio, ru := range r.rules {
		from := ru.scanFrom(s, lower, digits, numStart)
		if from < 0 {
			continue
		}
		for _, m := range ru.re.FindAllStringSubmatchIndex(s[from:], -1) {
			for i := range m {
				if m[i] >= 0 {
					m[i] += from
				}
			}
			start, end := m[0], m[1]
			if start > 0 && ((ru.wordStart && isWordByte(s[start-1])) || (ru.label && isAlnum(s[start-1]))) {
				continue // "task-…" is not "sk-…"; "mysecret=" is no label
			}
			if ru.notUserinfo && (strings.HasSuffix(s[:start], "//") || strings.HasSuffix(s[:start], ":")) {
				continue
			}
			for _, g := range ru.valueGroups {
				if m[2*g] >= 0 {
					start, end = m[2*g], m[2*g+1]
					break
				}
			}
			if ru.trimPunct {
				end = start + len(strings.TrimRight(s[start:end], `.,;:!?)]}'"`))
			}
			if end <= start || (ru.validate != nil && !ru.validate(s[start:end])) {
				continue
			}
			cands = append(cands, candidate{Finding{Kind: ru.kind, Start: start, End: end}, prio})
		}
	}
	cands = r.outsidePlaceholders(s, cands)
	if len(cands) == 0 {
		return nil
	}
	// Leftmost first, then the widest, then the most specific rule; overlapping
	// later candidates are dropped because their text is already gone.
	slices.SortFunc(cands, func(a, b candidate) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		if a.End != b.End {
			return b.End - a.End
		}
		return a.prio - b.prio
	})
	out := make([]Finding, 0, len(cands))
	end := 0
	for _, c := range cands {
		if c.Start < end {
			continue
		}
		out = append(out, c.Finding)
		end = c.End
	}
	return out
}

// hintBackoff is how far before its hint a match may start ("client_" before
// "secret", "-----BEGIN RSA " before "private key-----").
const hintBackoff = 64

// scanFrom is the cheap prefilter run before the regexp: it returns -1 when the
// rule cannot match, else the offset from which matching must start (a little
// before the first hint), so a hint near the end of a long text scans little.
func (ru *rule) scanFrom(s, lower string, digits, numStart int) int {
	if ru.minDigits > digits {
		return -1
	}
	if ru.pre != nil && !ru.pre(s) {
		return -1
	}
	if ru.minDigits >= minCardDigits || (ru.minDigits > 0 && len(ru.hints) == 0) {
		// Start one byte early so that a leading \b sees the real preceding byte.
		return max(0, numStart-1)
	}
	if len(ru.also) > 0 && !slices.ContainsFunc(ru.also, func(a string) bool { return strings.Contains(lower, a) }) {
		return -1
	}
	if len(ru.hints) == 0 {
		return 0
	}
	first := -1
	for _, h := range ru.hints {
		var i int
		if ru.label {
			i = labelFollowedBySep(lower, h)
		} else {
			i = strings.Index(lower, h)
		}
		if i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first < 0 {
		return -1
	}
	return max(0, first-hintBackoff)
}

// labelFollowedBySep returns the offset of the first occurrence of stem that is
// followed by the rest of a label word, an optional quote and spaces, then ':' or
// '='; -1 when there is none.
func labelFollowedBySep(lower, stem string) int {
	for off := 0; ; {
		i := strings.Index(lower[off:], stem)
		if i < 0 {
			return -1
		}
		j := off + i + len(stem)
		for j < len(lower) && (isWordByte(lower[j]) || lower[j] == '-' || lower[j] == '.') {
			j++
		}
		if j < len(lower) && (lower[j] == '"' || lower[j] == '\'') {
			j++
		}
		for j < len(lower) && (lower[j] == ' ' || lower[j] == '\t') {
			j++
		}
		if j < len(lower) && (lower[j] == ':' || lower[j] == '=') {
			return off + i
		}
		off += i + 1
	}
}

// asciiLower lower-cases ASCII letters only, so that byte offsets stay those of s
// (strings.ToLower can change the length of some non-ASCII runes).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

func isAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }

// minCardDigits is the fewest digits a number rule (card, ID) can match.
const minCardDigits = 13

// longestNumber returns the most digits in one run of digits separated by at most
// one space or dash, which is what card and ID numbers look like, and where the
// first run of at least minCardDigits digits starts (-1 if none).
func longestNumber(s string) (best, firstLong int) {
	run, runStart, sep := 0, 0, false
	firstLong = -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if run == 0 {
				runStart = i
			}
			run++
			sep = false
			best = max(best, run)
			if run == minCardDigits && firstLong < 0 {
				firstLong = runStart
			}
		case (c == ' ' || c == '-') && run > 0 && !sep:
			sep = true
		default:
			run, sep = 0, false
		}
	}
	return best, firstLong
}

// RedactValue returns a copy of a decoded JSON value (maps, slices, strings, numbers,
// booleans, nil) with secrets in every string replaced, keys included, and the
// findings' kinds (offsets are per string, so only the kinds are returned). A turn's
// metadata goes through it: agents put tool output and headers there too.
func (r *Redactor) RedactValue(v any) (any, []string) {
	var kinds []string
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			out, f := r.Redact(x)
			for _, fi := range f {
				kinds = append(kinds, fi.Kind)
			}
			return out
		case map[string]any:
			m := make(map[string]any, len(x))
			for k, e := range x {
				m[walk(k).(string)] = walk(e)
			}
			return m
		case []any:
			s := make([]any, len(x))
			for i, e := range x {
				s[i] = walk(e)
			}
			return s
		default:
			return v
		}
	}
	return walk(v), kinds
}

// outsidePlaceholders drops the candidates that lie inside a placeholder: a text
// redacted already is redacted again downstream (a turn by ingest and by the TURNS
// consumer, a candidate by the extractor), and the labelled rules read "password:
// [REDACTED:password]" as a password, so a second pass would change the text
// ("[REDACTED:secret]", "[REDACTED:password]]") and with it the turn's content hash. A
// candidate that reaches past a placeholder stays: it may hold a live secret.
func (r *Redactor) outsidePlaceholders(s string, cands []candidate) []candidate {
	if !strings.Contains(s, placeholderPrefix) {
		return cands
	}
	held := r.placeholders.FindAllStringIndex(s, -1)
	return slices.DeleteFunc(cands, func(c candidate) bool {
		for _, h := range held {
			if c.Start >= h[0] && c.End <= h[1] {
				return true
			}
		}
		return false
	})
}
