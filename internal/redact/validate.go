package redact

import (
	"strings"
	"unicode"
)

// looksRandom accepts key bodies that real generators produce: digits together
// with mixed case, or a long lower-case hex run (DeepSeek-style "sk-<32 hex>").
// It keeps "sk-learn-compatible-estimators" and similar prose.
func looksRandom(v string) bool {
	var digit, upper, lower bool
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		}
	}
	return (upper && lower && (digit || len(v) >= 30)) || (digit && hexRun(v) >= 32)
}

// looksRandomLoose accepts values a person would use as a password or an opaque
// token: any digit, a symbol, or a capital letter after the first character. It
// keeps plain words ("the password is required", "Bearer of good news").
func looksRandomLoose(v string) bool {
	if len(v) < 4 {
		return false
	}
	for i, c := range v {
		switch {
		case c >= '0' && c <= '9':
			return true
		case c >= 'A' && c <= 'Z' && i > 0:
			return true
		case c < 0x80 && !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '-' && c != '\'':
			return true
		}
	}
	return false
}

// minLen3 rejects one- and two-character label values ("password: 12 characters
// minimum"), which are prose far more often than credentials.
func minLen3(v string) bool { return len(v) >= 3 }

// hexRun returns the length of the longest run of lower-case hex digits.
func hexRun(v string) int {
	best, run := 0, 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// validCard reports whether v (digits with optional single spaces or dashes) is
// 13–19 digits long and passes the Luhn check. Order numbers and timestamps of the
// same length fail it nine times out of ten.
func validCard(v string) bool {
	var digits [19]byte
	n := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			if n == len(digits) {
				return false
			}
			digits[n] = c - '0'
			n++
		case c == ' ' || c == '-':
		default:
			return false
		}
	}
	if n < 13 {
		return false
	}
	sum := 0
	for i := 0; i < n; i++ {
		d := int(digits[n-1-i])
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// validChineseID checks the ISO 7064 MOD 11-2 checksum of an 18-character
// Chinese resident identity number.
func validChineseID(v string) bool {
	if len(v) != 18 {
		return false
	}
	weights := [17]int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for i, w := range weights {
		c := v[i]
		if c < '0' || c > '9' {
			return false
		}
		sum += int(c-'0') * w
	}
	check := "10X98765432"[sum%11]
	last := v[17]
	if last == 'x' {
		last = 'X'
	}
	return last == check
}

// hasDigit: a PIN has digits ("pin: true" in a config is no PIN).
func hasDigit(v string) bool { return strings.ContainsAny(v, "0123456789") }

// keyLike accepts opaque key material: at least 12 characters of letters, digits and
// key punctuation, with both a letter and a digit.
func keyLike(v string) bool {
	if len(v) < 12 {
		return false
	}
	var letter, digit bool
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			letter = true
		case strings.ContainsRune("+/=_-.", c):
		default:
			return false
		}
	}
	return letter && digit
}

// ibanLengths are the IBAN lengths of the countries that use one (ISO 13616 registry),
// so a code-like token with a lucky checksum but the wrong length is left alone.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
	"CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24,
	"FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21,
	"HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
	"LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31,
	"MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}

// validIBAN checks the country's length and the ISO 7064 mod-97 check digits.
func validIBAN(v string) bool {
	v = strings.ReplaceAll(v, " ", "")
	if len(v) < 15 || ibanLengths[v[:2]] != len(v) {
		return false
	}
	rearranged := v[4:] + v[:4]
	rem := 0
	for i := 0; i < len(rearranged); i++ {
		c := rearranged[i]
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// validUKNI rejects the prefixes HMRC never issues (BG, GB, KN, NK, NT, TN, ZZ).
func validUKNI(v string) bool {
	switch strings.ToUpper(v[:2]) {
	case "BG", "GB", "KN", "NK", "NT", "TN", "ZZ":
		return false
	}
	return true
}

// phoneDigits: an international number has 8 to 15 digits (E.164).
func phoneDigits(v string) bool {
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] >= '0' && v[i] <= '9' {
			n++
		}
	}
	return n >= 8 && n <= 15
}

// dotSixDot finds a Discord token's middle: '.', six token characters, '.'.
func dotSixDot(s string) bool {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], '.')
		if i < 0 {
			return false
		}
		i += off
		if i+7 < len(s) && s[i+7] == '.' {
			ok := true
			for j := i + 1; j < i+7; j++ {
				if c := s[j]; !isWordByte(c) && c != '-' {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
		off = i + 1
	}
}

// capsThenDigit finds two capital letters followed by a digit (after at most one
// space): how IBANs and National Insurance numbers begin.
func capsThenDigit(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' || s[i+1] < 'A' || s[i+1] > 'Z' {
			continue
		}
		j := i + 2
		if s[j] == ' ' && j+1 < len(s) {
			j++
		}
		if s[j] >= '0' && s[j] <= '9' {
			return true
		}
	}
	return false
}

// digitSpaceCapital finds a digit, a space and a capital letter: how a street address
// ("221 Baker Street") begins.
func digitSpaceCapital(s string) bool {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], ' ')
		if i < 0 {
			return false
		}
		i += off
		if i > 0 && i+1 < len(s) && s[i-1] >= '0' && s[i-1] <= '9' && s[i+1] >= 'A' && s[i+1] <= 'Z' {
			return true
		}
		off = i + 1
	}
}
