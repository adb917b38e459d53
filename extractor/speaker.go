package extractor

import (
	"regexp"
	"strings"

	"github.com/engramhq/engram/memory"
)

// speakerName is the name a turn carries for its speaker: the turn metadata's "speaker"
// or "name" (the OpenAI message name field lands there). Empty when unknown.
func speakerName(t memory.Turn) string {
	for _, k := range []string{"speaker", "name"} {
		if v, ok := t.Metadata[k].(string); ok {
			if v = strings.TrimSpace(v); v != "" && len(v) <= 80 {
				return v
			}
		}
	}
	return ""
}

// spokenText is a turn's content without a leading "<name>: " that repeats the speaker's
// name (transcripts and the LoCoMo harness write turns that way).
func spokenText(t memory.Turn) string {
	name := speakerName(t)
	c := strings.TrimSpace(t.Content)
	// A numbered list typed one step a line is one sentence of steps.
	if strings.Contains(c, "\n") {
		c = listLineBreak.ReplaceAllString(c, " $1")
	}
	if hasHan(c) {
		// Chinese typed in a chat breaks clauses with a space ("我辞职了 现在在…"): read it
		// as the comma it stands for.
		c = zhSpaceBreak.ReplaceAllString(c, "$1，$2")
		c = dialectFirstPerson.Replace(c)
	} else {
		c = chatEN(c)
		c = familyMy(c)
		// "Ana here, …" introduces the speaker as "I'm Ana, …" does.
		c = nameHereEN.ReplaceAllStringFunc(c, func(m string) string {
			sm := nameHereEN.FindStringSubmatch(m)
			if notSelfName[sm[2]] {
				return m
			}
			return sm[1] + "I'm " + sm[2] + ", "
		})
	}
	if name == "" {
		return c
	}
	for _, sep := range []string{":", "："} {
		if rest, ok := strings.CutPrefix(c, name+sep); ok {
			return strings.TrimSpace(rest)
		}
	}
	return c
}

// listLineBreak is a line break before a numbered step.
var listLineBreak = regexp.MustCompile(`\n\s*(\(?\d{1,2}[).、）]\s*|第[一二三四五六七八九十]步)`)

// zhSpaceBreak is a space between two Chinese clauses (after a character or an emoji).
var zhSpaceBreak = regexp.MustCompile(`([\p{Han}\p{So}])[ \t\x{3000}]+(\p{Han})`)

// personalize names the speaker in a memory written in the third person: "The user went
// to …" becomes "Caroline went to …", "用户…" becomes "林悦…".
func personalize(content, name string) string {
	if name == "" {
		return content
	}
	r := strings.NewReplacer("The user's", name+"'s", "the user's", name+"'s", "The user", name, "the user", name,
		"用户的", name+"的", "用户", name)
	return r.Replace(content)
}

// dialectFirstPerson writes the northern 俺 as the 我 every rule reads ("俺在县城修车").
var dialectFirstPerson = strings.NewReplacer("俺们", "我们", "俺家", "我家", "俺", "我")

// familyTheEN is "the wife", "the kids" said of the speaker's own family, as spoken English
// does at the head of a clause: the rules read it as "my wife", "my kids".
var familyTheEN = regexp.MustCompile(`(^|[.!?;,:]\s+|\b(?:and|but|so|because|since|with|for)\s+)([Tt]he) (wife|husband|hubby|missus|kids|kiddos?|little ones?|in-laws|twins|toddler)\b`)

// parentNameEN is a parent or grandparent called by the kinship word as by a name.
var parentNameEN = regexp.MustCompile(`(^|[.!?]\s+|\b(?:called|visit|visited|visiting|told|asked|with|and|to|for|saw|see|help|helping|took|take)\s+)(Dad|Mom|Mum|Mommy|Daddy|Grandma|Grandpa|Granny|Nana)\b`)

func familyMy(c string) string {
	// "Dad turns 70", "I called Mum": a parent named by the kinship word is the speaker's.
	c = parentNameEN.ReplaceAllStringFunc(c, func(m string) string {
		sm := parentNameEN.FindStringSubmatch(m)
		my := "my"
		if sm[1] == "" || strings.ContainsAny(sm[1], ".!?") {
			my = "My"
		}
		return sm[1] + my + " " + strings.ToLower(sm[2])
	})
	return familyTheEN.ReplaceAllStringFunc(c, func(m string) string {
		sm := familyTheEN.FindStringSubmatch(m)
		my := "my"
		if sm[2] == "The" {
			my = "My"
		}
		return sm[1] + my + " " + sm[3]
	})
}

// chatEN reads chat shorthand as the written forms the rules know: a lower-case "i",
// contractions typed without their apostrophe ("im", "dont"), "rn" and "bc", and the
// asides that close a clause ("lol", "tbh") and say nothing about it.
func chatEN(c string) string {
	if lower := strings.ToLower(c); containsAnyOf(lower, chatAsides) {
		c = chatAsideEN.ReplaceAllString(c, "$1")
	}
	var b strings.Builder
	last := 0
	for _, loc := range chatWordEN.FindAllStringIndex(c, -1) {
		w := c[loc[0]:loc[1]]
		r, ok := chatWords[strings.ToLower(w)]
		if !ok || (w != strings.ToLower(w) && w != "I") || strings.HasPrefix(c[loc[1]:], ".") && len(w) == 1 {
			continue // "IM" or "Dont" as names or shouting, "i.e."
		}
		b.WriteString(c[last:loc[0]])
		b.WriteString(r)
		last = loc[1]
	}
	b.WriteString(c[last:])
	return b.String()
}

var (
	chatWordEN  = regexp.MustCompile(`\b(?:i|im|ive|dont|doesnt|didnt|cant|couldnt|wouldnt|shouldnt|isnt|wasnt|werent|arent|havent|hasnt|hadnt|thats|theres|whats|youre|theyre|rn|bc|cuz|tho|thx)\b`)
	chatAsideEN = regexp.MustCompile(`(?i)\s*\b(?:lol|lmao|lmfao|rofl|tbh|tbf|ngl|imo|imho|fwiw|haha+|hehe+)\b[ ,]*([.!?,;]|$)`)
	chatAsides  = []string{"lol", "lmao", "lmfao", "rofl", "tbh", "tbf", "ngl", "imo", "imho", "fwiw", "haha", "hehe"}
	// chatWords are the written forms of chatWordEN's words ("ill" and "id" are words
	// of their own and stay as typed).
	chatWords = map[string]string{
		"i": "I", "im": "I'm", "ive": "I've", "dont": "don't", "doesnt": "doesn't", "didnt": "didn't",
		"cant": "can't", "couldnt": "couldn't", "wouldnt": "wouldn't", "shouldnt": "shouldn't",
		"isnt": "isn't", "wasnt": "wasn't", "werent": "weren't", "arent": "aren't", "havent": "haven't",
		"hasnt": "hasn't", "hadnt": "hadn't", "thats": "that's", "theres": "there's", "whats": "what's",
		"youre": "you're", "theyre": "they're", "rn": "right now", "bc": "because", "cuz": "because",
		"tho": "though", "thx": "thanks",
	}
)

// nameHereEN is a speaker introducing themself by name: "Hey! Ana here, …".
var nameHereEN = regexp.MustCompile(`(^|[.!?]\s+)(?:(?:[Hh]i|[Hh]ey|[Hh]ello|[Hh]iya)[,!]?\s+)?(\p{Lu}[\p{Ll}'-]+(?:\s\p{Lu}[\p{Ll}'-]+)?)\s+here\s*(?:[,.!:]|\s[-–—])\s*`)

// notSelfName are words nameHereEN would take for a name ("Over here, …").
var notSelfName = map[string]bool{"Over": true, "Out": true, "Up": true, "Down": true, "In": true, "Back": true,
	"Right": true, "Everyone": true, "Everybody": true, "Nobody": true, "Somebody": true, "Someone": true, "It": true,
	"Life": true, "Weather": true, "Things": true, "All": true, "Same": true, "Greetings": true, "Nothing": true, "Stuck": true}
