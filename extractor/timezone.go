package extractor

import (
	"regexp"
	"strings"
)

// Time zones as speakers name them: an offset ("UTC+8", "GMT-5"), a standard abbreviation
// ("CET", "SGT"), a North American zone word ("Eastern", "Pacific time"), a city's time
// after a preposition ("on Lisbon time"), or in Chinese a place's time ("北京时间") or
// "按…这边算". The abbreviations are the IANA ones in common use; a zone word is taken
// only with "time" after it or a time of day before it, so "Central Park" is not a zone.
var (
	zoneOffset = regexp.MustCompile(`\b(?:UTC|GMT)\s?[+\-−]\s?\d{1,2}(?::?\d{2})?\b`)
	zoneAbbrev = regexp.MustCompile(`\b(?:UTC|GMT|CET|CEST|EET|EEST|WET|WEST|BST|IST|SGT|HKT|JST|KST|AEST|AEDT|ACST|AWST|NZST|NZDT|EST|EDT|CDT|MST|MDT|PST|PDT|AKST|HST|PHT|ICT|MSK|SAST|BRT)\b`)
	zoneWord   = regexp.MustCompile(`\b(?:(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?\s+)(Eastern|Central|Mountain|Pacific|Atlantic)\b|(Eastern|Central|Mountain|Pacific|Atlantic|Alaska|Hawaii)(?:\s+(?:Standard|Daylight))?\s+[Tt]ime\b)`)
	zoneCity   = regexp.MustCompile(`\b(?:on|in|by|per|using|to|use|keep)\s+(\p{Lu}\p{Ll}+(?:\s\p{Lu}\p{Ll}+)?)\s+time\b`)
	zoneZH     = regexp.MustCompile(`(?:按|用|以|是|改成|换成|调成|改为)(?:照)?(\p{Han}{2,6}?)(?:这边|那边|当地)?(?:的)?时间|时间(?:都|就|也|一律)?(?:按|以)(?:照)?(\p{Han}{2,6}?)(?:这边|那边|当地)(?:的时间)?(?:算|来|为准)?`)
	// firstPersonEN: the sentence is about the speaker's own clock.
	firstPersonEN = regexp.MustCompile(`(?i)\b(?:i|i'm|me|my|we|we're|us|our)\b`)
	notZoneZH     = map[string]bool{"上班": true, "下班": true, "工作": true, "休息": true, "开会": true, "约定": true, "原来": true, "之前": true, "具体": true, "同样": true}
)

// zoneOf is the time zone sentence s names as the speaker's own, or "".
func zoneOf(s string) string {
	if hasHan(s) {
		if !strings.Contains(s, "我") && !strings.Contains(s, "以后") && !strings.Contains(s, "现在") {
			return ""
		}
		if m := zoneOffset.FindString(s); m != "" {
			return m
		}
		if m := zoneZH.FindStringSubmatch(s); m != nil {
			place := m[1] + m[2]
			if notZoneZH[place] || !isPlaceLike(place) {
				return ""
			}
			return place + "时间"
		}
		return ""
	}
	if !firstPersonEN.MatchString(s) {
		return ""
	}
	if m := zoneOffset.FindString(s); m != "" {
		if a := zoneAbbrev.FindString(strings.Replace(s, m, "", 1)); a != "" {
			return a + " (" + m + ")"
		}
		return m
	}
	if m := zoneAbbrev.FindString(s); m != "" {
		return m
	}
	if m := zoneWord.FindStringSubmatch(s); m != nil {
		return m[1] + m[2] + " time"
	}
	if m := zoneCity.FindStringSubmatch(s); m != nil {
		return m[1] + " time"
	}
	return ""
}

// isPlaceLike reports Chinese characters that can name a place: not a time word or a
// verb phrase (the zone pattern takes what stands before 时间).
func isPlaceLike(v string) bool {
	if isPlace(v) {
		return true
	}
	for _, bad := range []string{"点", "天", "周", "月", "年", "的", "了", "在", "会", "要", "不", "都", "那", "这"} {
		if strings.Contains(v, bad) {
			return false
		}
	}
	return true
}
