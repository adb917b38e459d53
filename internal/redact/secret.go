package redact

import (
	"strings"
	"unicode"
)

// Thresholds for IsSecret: below minMeaningful meaningful characters, or below
// minShare of the original, what is left after redaction is not worth remembering.
const (
	minMeaningful = 12
	minShare      = 0.25
	// spanCap caps what one redacted span adds to the original's size, so a long
	// key or a PEM block does not make a real sentence around it look small.
	spanCap = 16
	// hanWeight counts a Han character like two Latin letters: it carries about a
	// word's worth of meaning.
	hanWeight = 2
)

// IsSecret reports whether s is essentially a secret: it contains at least one
// secret, and what remains besides the placeholders, labels and filler words ("my
// api key is …", "密码是…") is too little to be a memory on its own. The extractor
// drops such candidates instead of storing a sentence around a placeholder.
func (r *Redactor) IsSecret(s string) bool {
	findings := r.find(s)
	if len(findings) == 0 {
		return false
	}
	total, kept, last := 0, 0, 0
	for _, f := range findings {
		total += meaningful(s[last:f.Start]) + min(meaningful(s[f.Start:f.End]), spanCap)
		kept += r.significant(s[last:f.Start])
		last = f.End
	}
	total += meaningful(s[last:])
	kept += r.significant(s[last:])
	return kept < minMeaningful || float64(kept) < minShare*float64(total)
}

// meaningful counts letters and digits, Han characters double.
func meaningful(s string) int {
	n := 0
	for _, c := range s {
		switch {
		case unicode.Is(unicode.Han, c):
			n += hanWeight
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			n++
		}
	}
	return n
}

// significant is meaningful without filler words, labels and pronouns.
func (r *Redactor) significant(s string) int {
	s = r.cjkFiller.Replace(s)
	n := 0
	for _, w := range strings.FieldsFunc(s, func(c rune) bool {
		return !(unicode.IsLetter(c) || unicode.IsDigit(c)) || unicode.Is(unicode.Han, c)
	}) {
		if !r.filler[strings.ToLower(w)] {
			n += len([]rune(w))
		}
	}
	for _, c := range s {
		if unicode.Is(unicode.Han, c) {
			n += hanWeight
		}
	}
	return n
}

func fillerWords() map[string]bool {
	words := strings.Fields(`
		a an the this that these those here there is are was were be been it its s
		i me my we our you your he him his she her they them their user users
		of for to in on at as by with and or but so also
		use uses using used set save saved store stored remember please note new old current
		key keys api apikey token tokens secret secrets password passwords passwd pwd pass
		passphrase passcode pin code access id aws gcp google github gitlab openai anthropic
		stripe slack npm hugging face huggingface bearer authorization auth basic private
		public credential credentials card credit debit number no ssh jwt env login account
		email mail wifi db database bank value live test prod production sk pk rk`)
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// cjkFillerReplacer blanks Chinese labels and function words. Longer entries come
// first because the replacer tries them in argument order.
func cjkFillerReplacer() *strings.Replacer {
	words := []string{"我们的", "用户的", "银行卡", "信用卡", "身份证", "我的", "你的", "他的", "她的",
		"用户", "这是", "记住", "保存", "密码", "口令", "密钥", "秘钥", "令牌", "账号", "帐号", "账户",
		"邮箱", "卡号", "号码", "登录", "支付", "一下", "是", "为", "的", "了", "请", "我", "你", "他",
		"她", "新", "旧", "号"}
	pairs := make([]string, 0, 2*len(words))
	for _, w := range words {
		pairs = append(pairs, w, " ")
	}
	return strings.NewReplacer(pairs...)
}
