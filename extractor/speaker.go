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
	if hasHan(c) {
		// Chinese typed in a chat breaks clauses with a space ("我辞职了 现在在…"): read it
		// as the comma it stands for.
		c = zhSpaceBreak.ReplaceAllString(c, "$1，$2")
		c = dialectFirstPerson.Replace(c)
	} else {
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

func familyMy(c string) string {
	return familyTheEN.ReplaceAllStringFunc(c, func(m string) string {
		sm := familyTheEN.FindStringSubmatch(m)
		my := "my"
		if sm[2] == "The" {
			my = "My"
		}
		return sm[1] + my + " " + sm[3]
	})
}

// nameHereEN is a speaker introducing themself by name: "Hey! Ana here, …".
var nameHereEN = regexp.MustCompile(`(^|[.!?]\s+)(?:(?:[Hh]i|[Hh]ey|[Hh]ello|[Hh]iya)[,!]?\s+)?(\p{Lu}[\p{Ll}'-]+(?:\s\p{Lu}[\p{Ll}'-]+)?)\s+here\s*(?:[,.!:]|\s[-–—])\s*`)

// notSelfName are words nameHereEN would take for a name ("Over here, …").
var notSelfName = map[string]bool{"Over": true, "Out": true, "Up": true, "Down": true, "In": true, "Back": true,
	"Right": true, "Everyone": true, "Everybody": true, "Nobody": true, "Somebody": true, "Someone": true, "It": true,
	"Life": true, "Weather": true, "Things": true, "All": true, "Same": true, "Greetings": true, "Nothing": true, "Stuck": true}
