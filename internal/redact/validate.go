package redact

import "unicode"

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
