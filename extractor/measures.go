package extractor

import (
	"regexp"
	"strings"
)

// Numbers that change as time goes on, each in one slot, so that the latest replaces the
// one before whatever words tell it: how many of a thing the speaker has or has done
// ("finished 9 puzzles" → "up to 12 puzzles"), a personal best ("10k PB: 49:10"), how far
// the commute is, what the car has on the clock, what the rent is, what a fund holds, how
// many people the speaker manages. Chinese counts go by their measure word (看了30部电影 →
// 看到41部了: count.部).

var (
	// countEN is a count of things of the speaker's: "I've finished 9 puzzles", "we keep
	// 3 hives", "down to 3 succulents", "up to 12 puzzles". Group 1 is the thing.
	countEN = regexp.MustCompile(`(?i)\b(?:read|finished|have|has|own|got|keep|grow|collected|collect|visited|ran|run|completed|done|at|to|down\s+to|up\s+to|now)\s+(?:about\s+|around\s+|over\s+|nearly\s+|almost\s+|exactly\s+|only\s+|just\s+)?(?:\d[\d,]*|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty)\s+([a-z]+)\b`)
	// countZH is a count by measure word: "看了30部电影", "养了十几盆多肉", "只剩5盆了".
	countZH = regexp.MustCompile(`(?:读了|读到|看了|看到|养了|有|剩|剩下|只剩|攒了|跑了|去过|去了)(?:\d+|[一二两三四五六七八九十百]+)(?:多)?(本|盆|部|场|次|个国家|座城市|双|块表|只|条|辆)`)
	// recordEN is a personal best: "my 10k personal best is 49:10", "new mile PB: 6:02".
	recordEN     = regexp.MustCompile(`(?i)\b(5k|10k|half[- ]marathon|marathon|mile|\d+\s*(?:k|km|mi|m))\s+(?:personal\s+best|personal\s+record|pb|pr)\b|\b(?:personal\s+best|pb|pr)\s+(?:in|for|at)\s+(?:the\s+)?(5k|10k|half[- ]marathon|marathon|mile)\b`)
	recordZH     = regexp.MustCompile(`(?:五公里|十公里|半马|全马|马拉松|一公里|三公里)[^。！!]{0,16}?(?:最好成绩|纪录|PB|最快|跑出|跑进)`)
	recordDistZH = regexp.MustCompile(`五公里|十公里|半马|全马|马拉松|一公里|三公里`)
	// commuteDistance is how far the commute is: "my commute is 18 km", "单程通勤十五公里".
	commuteDistEN = regexp.MustCompile(`(?i)\bcommute\b[^.;!?]{0,30}?\b\d+(?:\.\d+)?\s*(?:miles?|km|kilometers?|kilometres?)\b`)
	commuteDistZH = regexp.MustCompile(`(?:通勤|单程|上班路上)[^，。]{0,10}?(?:\d+|[一二两三四五六七八九十]+)(?:多)?公里`)
	// mileage is what a car has on the clock: "the Civic has 140,000 miles on it", "车开了五万多公里".
	mileageEN = regexp.MustCompile(`(?i)\b(?:car|van|truck|corolla|civic|golf|prius|jazz|camry|\w+)\b[^.;!?]{0,20}?\b(?:has|passed|hit|is\s+at|at|over|just\s+passed|just\s+hit)\s+(?:about\s+|over\s+)?\d{2,3},?\d{3}\s*(?:miles|km|kilometers|kilometres)\b`)
	mileageZH = regexp.MustCompile(`车[^，。]{0,6}?(?:开了|跑了|过了|刚过|到了)(?:\d+|[一二两三四五六七八九十]+)(?:万)?(?:[一二两三四五六七八九千]+)?(?:多)?公里`)
	// rentEN is the rent paid: "our rent is €1,240", "landlord put it up, we pay €1,390 now".
	rentEN = regexp.MustCompile(`(?i)\brent\b[^.;!?]{0,20}?[$€£]\s?\d|\blandlord\b[^.;!?]{0,40}?\bpay\s+[$€£]\s?\d`)
	// fundEN and fundZH are what a fund or savings for a thing hold: "saved about $2,000 for
	// the wedding", "the wedding fund is at $9,300", "装修基金攒了三万".
	fundEN = regexp.MustCompile(`(?i)\b(?:saved|saving|savings|put\s+aside|set\s+aside)\b[^.;!?]{0,30}?\bfor\s+(?:the|our|my|a)\s+([a-z]+)|\b(?:the|our|my)\s+([a-z]+)\s+(?:fund|savings|pot|kitty)\b`)
	fundZH = regexp.MustCompile(`(\p{Han}{2,4}?)(?:基金|存款|经费)`)
	// teamSizeEN is how many people the speaker manages: "a team of 7", "12 people reporting to me".
	teamSizeEN = regexp.MustCompile(`(?i)\b(?:manage|lead|run|have)\s+(?:a\s+)?team\s+of\s+\d+|\b\d+\s+(?:people|engineers|reports|staff)\s+(?:reporting\s+to\s+me|on\s+my\s+team|under\s+me)\b`)
	teamSizeZH = regexp.MustCompile(`(?:带|管)(?:一个|着)?(?:\d+|[一二两三四五六七八九十]+)(?:个)?人的(?:小组|团队|组)|手下(?:现在|目前|一共)?(?:有)?(?:\d+|[一二两三四五六七八九十]+)(?:个)?人`)
)

// measureKey is the slot of a changing number s tells of the speaker's, "" for none.
func measureKey(s string) string {
	if hasHan(s) {
		switch {
		case recordZH.MatchString(s):
			if d := recordDistZH.FindString(s); d != "" {
				return "record." + d
			}
			return "record"
		case commuteDistZH.MatchString(s):
			return "user.commute" // the way and the distance are one slot: "moved closer, only 4 miles now"
		case mileageZH.MatchString(s):
			return "vehicle.mileage"
		case teamSizeZH.MatchString(s):
			return "user.team_size"
		}
		if m := fundZH.FindStringSubmatch(s); m != nil && strings.ContainsAny(s, "攒存到") {
			return "savings." + m[1]
		}
		if m := countZH.FindStringSubmatch(s); m != nil {
			return "count." + m[1]
		}
		return ""
	}
	if m := recordEN.FindStringSubmatch(s); m != nil {
		return "record." + slugify(strings.ToLower(m[1]+m[2]))
	}
	switch {
	case commuteDistEN.MatchString(s):
		return "user.commute"
	case mileageEN.MatchString(s):
		return "vehicle.mileage"
	case rentEN.MatchString(s):
		return "user.rent"
	case teamSizeEN.MatchString(s):
		return "user.team_size"
	}
	if m := fundEN.FindStringSubmatch(s); m != nil && moneyEN.MatchString(s) {
		return "savings." + slugify(strings.ToLower(m[1]+m[2]))
	}
	if m := countEN.FindStringSubmatch(s); m != nil {
		head := strings.ToLower(m[1])
		if strings.HasSuffix(head, "ies") {
			head = strings.TrimSuffix(head, "ies") + "y"
		} else {
			head = strings.TrimSuffix(head, "s")
		}
		if countedThing[head] != "" {
			return "count." + countedThing[head]
		}
	}
	return ""
}

// moneyEN is an amount of money.
var moneyEN = regexp.MustCompile(`[$€£]\s?\d|\b\d[\d,]*\s*(?:dollars|euros|pounds|bucks|k)\b`)

// countedThing folds the things people count into one name each: "houseplants" and
// "plants" are one count.
var countedThing = map[string]string{"book": "book", "novel": "book", "houseplant": "plant", "plant": "plant",
	"cat": "cat", "dog": "dog", "chicken": "chicken", "country": "country", "marathon": "marathon",
	"race": "race", "bike": "bike", "guitar": "guitar", "watch": "watch", "sneaker": "sneaker", "record": "record",
	"vinyl": "record", "game": "game", "puzzle": "puzzle", "quilt": "quilt", "painting": "painting", "plushie": "plushie",
	"succulent": "plant", "tree": "tree", "hive": "hive"}
