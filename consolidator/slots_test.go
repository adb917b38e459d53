package consolidator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/consolidator/resolvertest"
	"github.com/engramhq/engram/memory"
)

// The sentences below were written for these tests; none comes from an evaluation set.

func TestPlantDietRetiresMeatTastes(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	day := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	bacon := resolve(t, r, cand("u1", "The user adores crispy bacon", withKey("taste.bacon"), validFrom(day)), consolidator.KindAdd)
	brie := resolve(t, r, cand("u1", "The user loves baked brie", withKey("taste.brie"), validFrom(day)), consolidator.KindAdd)
	lamb := resolve(t, r, cand("u1", "用户很爱吃烤羊肉串", withKey("taste.烤羊肉串"), validFrom(day)), consolidator.KindAdd)
	figs := resolve(t, r, cand("u1", "The user likes dried figs", withKey("taste.fig"), validFrom(day)), consolidator.KindAdd)
	diet := resolve(t, r, cand("u1", "The user has been vegan since January", withKey("food.diet"), validFrom(day.AddDate(0, 1, 0))),
		consolidator.KindSupersede)
	if diet.MemoryID != bacon.MemoryID && diet.MemoryID != lamb.MemoryID && diet.MemoryID != brie.MemoryID {
		t.Fatalf("the diet superseded %s, want one of the meat tastes", diet.MemoryID)
	}
	for _, id := range []struct {
		name string
		d    consolidator.Decision
		want memory.Status
	}{{"bacon", bacon, memory.StatusActive}, {"brie", brie, memory.StatusActive}, {"lamb", lamb, memory.StatusActive},
		{"figs", figs, memory.StatusActive}} {
		got := detail(t, s, id.d.MemoryID)
		switch {
		case id.d.MemoryID == diet.MemoryID:
			if got.Memory.Content != "The user has been vegan since January" || got.Versions[0].Status != memory.StatusSuperseded {
				t.Errorf("%s: %q, versions %+v", id.name, got.Memory.Content, got.Versions)
			}
		case id.name == "figs":
			if got.Memory.Status != memory.StatusActive {
				t.Errorf("figs are no meat, yet %s", got.Memory.Status)
			}
		default:
			if got.Memory.Status != memory.StatusDeprecated {
				t.Errorf("%s is %s, want deprecated by the diet", id.name, got.Memory.Status)
			}
		}
	}
}

func TestPlanRevisedByItsKind(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	day := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	first := resolve(t, r, cand("u1", "用户去大理的高铁是4月3日", withKey("plan.高铁.大理"), validFrom(day)), consolidator.KindAdd)
	resolve(t, r, cand("u1", "The user's call with Initrode is on April 9", withKey("plan.call.initrode"), validFrom(day)), consolidator.KindAdd)
	moved := resolve(t, r, cand("u1", "用户表示高铁改到4月5日了", withKey("plan.高铁"), validFrom(day.AddDate(0, 0, 2))), consolidator.KindSupersede)
	if moved.MemoryID != first.MemoryID {
		t.Fatalf("the revision went to %s, want the plan %s", moved.MemoryID, first.MemoryID)
	}
	if got := detail(t, s, first.MemoryID).Memory; got.Key != "plan.高铁.大理" || got.Content != "用户表示高铁改到4月5日了" {
		t.Fatalf("plan is %q under %s, want the new date under the full key", got.Content, got.Key)
	}
}

func TestRevisionOfANamedThing(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	day := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	old := resolve(t, r, cand("u1", "用户希望以后晨会在九点开始", validFrom(day)), consolidator.KindAdd)
	d := resolve(t, r, cand("u1", "用户偏好晨会改成线上开", validFrom(day.AddDate(0, 0, 5))), consolidator.KindSupersede)
	if d.MemoryID != old.MemoryID {
		t.Fatalf("revision went to %s, want %s", d.MemoryID, old.MemoryID)
	}
	if got := detail(t, s, old.MemoryID); got.Versions[0].Status != memory.StatusSuperseded {
		t.Fatalf("old version is %s", got.Versions[0].Status)
	}
}

func TestGivingUpRetiresTheLikingWhateverItsKey(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	day := time.Date(2026, 4, 6, 9, 0, 0, 0, time.UTC)
	liking := resolve(t, r, cand("u1", "The user adores salted liquorice", withKey("taste.liquorice"), validFrom(day)), consolidator.KindAdd)
	other := resolve(t, r, cand("u1", "The user likes rye bread", withKey("taste.rye"), validFrom(day)), consolidator.KindAdd)
	// The give-up is told as a habit, a different key family about the same thing.
	quit := resolve(t, r, cand("u1", "The user gave up liquorice for good", withKey("habit.eat.liquorice"), validFrom(day.AddDate(0, 1, 0))),
		consolidator.KindSupersede)
	if quit.MemoryID != liking.MemoryID {
		t.Fatalf("the give-up went to %s, want the liking %s", quit.MemoryID, liking.MemoryID)
	}
	if got := detail(t, s, liking.MemoryID); got.Versions[0].Status != memory.StatusSuperseded {
		t.Fatalf("the liking's old version is %s, want superseded", got.Versions[0].Status)
	}
	if got := detail(t, s, other.MemoryID).Memory; got.Status != memory.StatusActive {
		t.Fatalf("another taste is %s, want active", got.Status)
	}
}

func TestCorrectionRetiresTheWrongName(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	day := time.Date(2026, 4, 6, 9, 0, 0, 0, time.UTC)
	wrong := resolve(t, r, cand("u1", "The user's goddaughter is named Maren", withKey("relation.goddaughter.name"), validFrom(day)), consolidator.KindAdd)
	kept := resolve(t, r, cand("u1", "The user plays the cello on Tuesdays", validFrom(day)), consolidator.KindAdd)
	fix := cand("u1", "The user said the spelling is Marenne", validFrom(day.AddDate(0, 0, 3)))
	fix.Metadata = map[string]any{"corrects": "Maren"}
	d := resolve(t, r, fix, consolidator.KindSupersede)
	if d.MemoryID != wrong.MemoryID {
		t.Fatalf("the correction went to %s, want %s", d.MemoryID, wrong.MemoryID)
	}
	if got := detail(t, s, kept.MemoryID).Memory; got.Status != memory.StatusActive {
		t.Fatalf("an unrelated memory is %s", got.Status)
	}
}

// TestCorrectionOfASlotThatReadsAlike: a value corrected in a slot replaces the old one
// even where the two read almost the same (one character of a name); without the
// correction the same words confirm it.
func TestCorrectionOfASlotThatReadsAlike(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		newValue bool
		want     consolidator.DecisionKind
	}{
		{"a new value told as a correction", true, consolidator.KindSupersede},
		{"the same value told as a correction", false, consolidator.KindConfirm},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, r := newResolver(t, nil)
			day := time.Date(2026, 4, 6, 9, 0, 0, 0, time.UTC)
			old := resolve(t, r, cand("u1", "用户的导师叫欧阳建华", withKey("relation.mentor.name"), validFrom(day)), consolidator.KindAdd)
			fix := cand("u1", "用户的导师叫欧阳建华", withKey("relation.mentor.name"), validFrom(day.AddDate(0, 0, 2)))
			if tt.newValue {
				fix.Content = "用户的导师叫欧阳剑华"
			}
			fix.Metadata = map[string]any{"correction": true}
			d := resolve(t, r, fix, tt.want)
			if d.MemoryID != old.MemoryID {
				t.Fatalf("went to %s, want %s", d.MemoryID, old.MemoryID)
			}
		})
	}
}

// TestCorrectionRewritesTheWrongNameElsewhere: the correction supersedes the memory it
// meets, and the other active memories that wrote the wrong name down get the right one
// in a new version (the old text stays in history).
func TestCorrectionRewritesTheWrongNameElsewhere(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	day := time.Date(2026, 4, 6, 9, 0, 0, 0, time.UTC)
	name := resolve(t, r, cand("u1", "The user's niece is named Marla", withKey("relation.niece.name"), validFrom(day)), consolidator.KindAdd)
	bday := resolve(t, r, cand("u1", "The user's niece Marla turns nine on Friday", withKey("relation.niece.birthday"), validFrom(day)), consolidator.KindAdd)
	kept := resolve(t, r, cand("u1", "The user plays padel on Sundays", validFrom(day)), consolidator.KindAdd)
	fix := cand("u1", "The user's niece is named Marlo", withKey("relation.niece.name"), validFrom(day.AddDate(0, 0, 1)))
	fix.Metadata = map[string]any{"corrects": "Marla", "corrected_to": "Marlo"}
	d := resolve(t, r, fix, consolidator.KindSupersede)
	if d.MemoryID != name.MemoryID {
		t.Fatalf("the correction went to %s, want the name %s", d.MemoryID, name.MemoryID)
	}
	got := detail(t, s, bday.MemoryID)
	if got.Memory.Content != "The user's niece Marlo turns nine on Friday" || got.Memory.Status != memory.StatusActive {
		t.Fatalf("the birthday memory is %q (%s), want the right name", got.Memory.Content, got.Memory.Status)
	}
	if len(got.Versions) < 2 || !strings.Contains(got.Versions[len(got.Versions)-1].Content+got.Versions[0].Content, "Marla") {
		t.Fatalf("the wrong name is not in the birthday memory's history: %+v", got.Versions)
	}
	if got := detail(t, s, kept.MemoryID).Memory; got.Content != "The user plays padel on Sundays" {
		t.Fatalf("an unrelated memory became %q", got.Content)
	}
}

// TestGivingUpEndsTheHabitAndTheLiking: a give-up told without a verb of eating ("no
// more X for me from now on", "gone off X") retires the liking that names X and the
// habit told as a story (an episode of every morning); other memories stay.
func TestGivingUpEndsTheHabitAndTheLiking(t *testing.T) {
	t.Parallel()
	withCategory := func(c memory.Category) resolvertest.Option { return func(m *memory.Candidate) { m.Category = c } }
	episode := resolvertest.Option(func(m *memory.Candidate) { m.Type, m.Category = memory.Episodic, memory.CatEvent })
	tests := []struct {
		name, liking, habit, giveUp, kept string
	}{
		{"no X anymore", "The user loves pistachios", "The user has a handful of pistachios every evening after dinner",
			"The user said no pistachios or pistachio ice cream for them anymore", "The user plays the oboe in a band"},
		{"gone off X", "The user always goes for window tables in cafes", "The user sits at a window table every morning before work",
			"The user has gone off window tables completely", "The user keeps a vegetable patch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, r := newResolver(t, nil)
			day := time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
			liking := resolve(t, r, cand("u1", tt.liking, validFrom(day), withCategory(memory.CatPreference)), consolidator.KindAdd)
			habit := resolve(t, r, cand("u1", tt.habit, validFrom(day), episode), consolidator.KindAdd)
			kept := resolve(t, r, cand("u1", tt.kept, validFrom(day)), consolidator.KindAdd)
			give := cand("u1", tt.giveUp, validFrom(day.AddDate(0, 2, 0)), withCategory(memory.CatPreference))
			d, err := r.Resolve(t.Context(), give)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []struct {
				what string
				id   consolidator.Decision
			}{{"liking", liking}, {"habit", habit}} {
				if m.id.MemoryID == d.MemoryID {
					continue // the give-up superseded it
				}
				if got := detail(t, s, m.id.MemoryID).Memory; got.Status == memory.StatusActive {
					t.Errorf("the %s %q is still active after %q", m.what, got.Content, tt.giveUp)
				}
			}
			if got := detail(t, s, kept.MemoryID).Memory; got.Status != memory.StatusActive {
				t.Errorf("an unrelated memory is %s", got.Status)
			}
		})
	}
}

// TestRevisionByTheNewValuesKind: "switched to X" and "改喝X" revise the memory about the
// kind X is (podcasts, tea), not an unrelated one.
func TestRevisionByTheNewValuesKind(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, old, other, revision string }{
		{"switched over to", "The user's favourite podcast is a chess show they play on every commute",
			"The user bakes rye bread on Sundays", "The user has switched over to cooking podcasts now"},
		{"改喝", "用户平时只喝乌龙茶，最爱大红袍", "用户每周六上午练书法", "用户现在改喝红茶了"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, r := newResolver(t, nil)
			day := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
			old := resolve(t, r, cand("u1", tt.old, validFrom(day)), consolidator.KindAdd)
			other := resolve(t, r, cand("u1", tt.other, validFrom(day)), consolidator.KindAdd)
			d := resolve(t, r, cand("u1", tt.revision, validFrom(day.AddDate(0, 3, 0))), consolidator.KindSupersede)
			if d.MemoryID != old.MemoryID {
				t.Fatalf("the revision went to %s, want %s", d.MemoryID, old.MemoryID)
			}
			if got := detail(t, s, other.MemoryID).Memory; got.Status != memory.StatusActive {
				t.Fatalf("an unrelated memory is %s", got.Status)
			}
		})
	}
}

// TestLaterValuesOfChangingSlots: an age told by a name alone, a school year told of a
// relation then of the name, a pet's food told without the pet, and a change of sport
// that does not name the old one each retire the earlier value, and nothing else.
func TestLaterValuesOfChangingSlots(t *testing.T) {
	t.Parallel()
	withCategory := func(c memory.Category) resolvertest.Option { return func(m *memory.Candidate) { m.Category = c } }
	withMeta := func(k, v string) resolvertest.Option {
		return func(m *memory.Candidate) {
			if m.Metadata == nil {
				m.Metadata = map[string]any{}
			}
			m.Metadata[k] = v
		}
	}
	episode := resolvertest.Option(func(m *memory.Candidate) { m.Type, m.Category = memory.Episodic, memory.CatEvent })
	type told struct {
		content string
		opts    []resolvertest.Option
	}
	tests := []struct {
		name            string
		old, kept, then told
	}{
		{"an age by the name", told{"The user's nephew Arjun is 6 years old", []resolvertest.Option{withKey("relation.nephew.age")}},
			told{"The user's nephew Arjun collects stamps", nil},
			told{"Arjun turned 7 on Saturday, the user baked a cake", []resolvertest.Option{episode, withMeta("aged", "Arjun")}}},
		{"a school year by the name", told{"The user's niece Lotte is in 1st grade", []resolvertest.Option{withKey("relation.niece.school")}},
			told{"The user's niece Lotte is named after her grandmother", []resolvertest.Option{withKey("relation.niece.name")}},
			told{"Lotte is in 2nd grade now", []resolvertest.Option{withKey("person.lotte.school")}}},
		{"a pet's food without the pet", told{"用户的狗一直吃三文鱼狗粮", []resolvertest.Option{withKey("pet.dog.food")}},
			told{"用户的狗叫豆包", []resolvertest.Option{withKey("pet.dog.name")}},
			told{"用户的宠物现在吃低敏处方粮", []resolvertest.Option{withKey("pet.food")}}},
		{"a relation's diet", told{"The user's partner loves a rare steak", []resolvertest.Option{withKey("relation.partner.taste.steak")}},
			told{"The user's partner loves a dry martini", []resolvertest.Option{withKey("relation.partner.taste.martini")}},
			told{"The user's partner is vegetarian now", []resolvertest.Option{withKey("relation.partner.diet")}}},
		{"an instrument switched, not a sport", told{"The user takes cello lessons on Fridays", []resolvertest.Option{withCategory(memory.CatFact)}},
			told{"The user runs along the canal every morning", []resolvertest.Option{withCategory(memory.CatPreference), withKey("habit.running")}},
			told{"The user switched from cello to guitar", nil}},
		{"an instrument switched", told{"The user's daughter takes cello lessons on Fridays", []resolvertest.Option{withCategory(memory.CatFact)}},
			told{"The user keeps bees on the allotment", nil},
			told{"The user's daughter switched from cello to guitar", nil}},
		{"a sport stopped, then the one done now", told{"The user's son plays rugby on Sunday mornings", []resolvertest.Option{withCategory(memory.CatFact)}},
			told{"The user's son plays the trumpet in a brass band", []resolvertest.Option{withCategory(memory.CatFact)}},
			told{"The user's son gave up rugby, he fences now", []resolvertest.Option{episode}}},
		{"a relation's lessons switched zh", told{"用户女儿每周四学小提琴", []resolvertest.Option{withCategory(memory.CatRelationship), withKey("relation.daughter.lessons")}},
			told{"用户女儿喜欢画画", []resolvertest.Option{withCategory(memory.CatRelationship)}},
			told{"用户女儿小提琴不学了，改学长笛", []resolvertest.Option{episode}}},
		{"a pastime swapped for another", told{"The user goes sea kayaking most Sundays", []resolvertest.Option{withCategory(memory.CatFact)}},
			told{"The user keeps bees on the allotment", nil},
			told{"The user swapped kayaking for trail running this year", nil}},
		{"a home by the name zh", told{"用户的表姐小雅住在厦门", []resolvertest.Option{withKey("relation.表姐.location")}},
			told{"用户的表姐叫小雅", []resolvertest.Option{withKey("relation.表姐.name")}},
			told{"小雅搬到了福州", []resolvertest.Option{withKey("person.小雅.location")}}},
		{"a change told in other words", told{"The user does the weekly shop at the Saturday farmers market", []resolvertest.Option{withCategory(memory.CatFact)}},
			told{"The user keeps bees on the allotment", nil},
			told{"These days the user gets the weekly shop delivered by Ocado", []resolvertest.Option{withKey("user.attr.weekly_shop_delivered")}}},
		{"a sport the change does not name", told{"用户每天傍晚夜跑五公里", []resolvertest.Option{withKey("habit.夜跑"), withCategory(memory.CatPreference)}},
			told{"用户喜欢看网球比赛", []resolvertest.Option{withCategory(memory.CatPreference)}},
			told{"用户表示脚踝扭了以后改成骑车了", []resolvertest.Option{withCategory(memory.CatPreference)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, r := newResolver(t, nil)
			day := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
			old := resolve(t, r, cand("u1", tt.old.content, append(tt.old.opts, validFrom(day))...), consolidator.KindAdd)
			kept := resolve(t, r, cand("u1", tt.kept.content, append(tt.kept.opts, validFrom(day))...), consolidator.KindAdd)
			d, err := r.Resolve(t.Context(), cand("u1", tt.then.content, append(tt.then.opts, validFrom(day.AddDate(1, 0, 0)))...))
			if err != nil {
				t.Fatal(err)
			}
			if d.MemoryID != old.MemoryID {
				if got := detail(t, s, old.MemoryID).Memory; got.Status == memory.StatusActive {
					t.Errorf("%q is still active after %q (%s: %s)", got.Content, tt.then.content, d.Kind, d.Reason)
				}
			}
			if got := detail(t, s, kept.MemoryID).Memory; got.Status != memory.StatusActive {
				t.Errorf("%q is %s after %q (%s: %s)", got.Content, got.Status, tt.then.content, d.Kind, d.Reason)
			}
		})
	}
}
