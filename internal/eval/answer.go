package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// AnswerOptions turn on end-to-end answer accuracy: a model answers each
// category 1-4 question from engram's context, and a judge grades the answer
// against the gold one with Mem0's LoCoMo judge prompt.
type AnswerOptions struct {
	Chat  Completer // answers questions
	Judge Completer // grades answers; nil: Chat
	// Names of the models, printed with the score: J depends on both, so a J
	// without them is not comparable.
	AnswerModel string
	JudgeModel  string
}

// AnswerReport is the LLM-judged accuracy ("J") on categories 1-4.
type AnswerReport struct {
	AnswerModel     string          `json:"answer_model,omitempty"`
	JudgeModel      string          `json:"judge_model,omitempty"`
	Questions       int             `json:"questions"`
	Correct         int             `json:"correct"`
	J               float64         `json:"j"` // over all questions, not a mean of categories
	JByCategory     map[int]float64 `json:"j_by_category"`
	MeanAnswerWords float64         `json:"mean_answer_words"` // the judge is lenient with long answers: watch this
	Errors          int             `json:"errors"`            // answer or judge failures, counted as wrong
}

// answerSystemPrompt instructs the answering model. It follows the spirit of
// Mem0's ANSWER_PROMPT (use the dates, prefer recent memories, answer in a few
// words) for a single context block.
const answerSystemPrompt = `You answer questions about two people using only the memory context you are given, which was retrieved from their past conversations.
- Look for direct evidence in the context; if memories contradict each other, prefer the most recent one.
- The context may carry dates. For questions about time, answer with a specific date, month or year: turn relative references ("last year", "yesterday") into absolute ones using the dates in the context.
- Answer with a short phrase of at most 6 words, without explanation.`

// judgePrompt is the LLM judge of Mem0's LoCoMo evaluation (mem0ai/mem0,
// evaluation/metrics/llm_judge.py, ACCURACY_PROMPT; Apache-2.0), reproduced
// verbatim, typographic quotes included, so that J is comparable with published
// numbers. It is sent as the user message with no system prompt, as Mem0 does.
const judgePrompt = `
Your task is to label an answer to a question as ’CORRECT’ or ’WRONG’. You will be given the following data:
    (1) a question (posed by one user to another user), 
    (2) a ’gold’ (ground truth) answer, 
    (3) a generated answer
which you will score as CORRECT/WRONG.

The point of the question is to ask about something one user should know about the other user based on their prior conversations.
The gold answer will usually be a concise and short answer that includes the referenced topic, for example:
Question: Do you remember what I got the last time I went to Hawaii?
Gold answer: A shell necklace
The generated answer might be much longer, but you should be generous with your grading - as long as it touches on the same topic as the gold answer, it should be counted as CORRECT. 

For time related questions, the gold answer will be a specific date, month, year, etc. The generated answer might be much longer or use relative time references (like "last Tuesday" or "next month"), but you should be generous with your grading - as long as it refers to the same date or time period as the gold answer, it should be counted as CORRECT. Even if the format differs (e.g., "May 7th" vs "7 May"), consider it CORRECT if it's the same date.

Now it's time for the real question:
Question: {question}
Gold answer: {gold_answer}
Generated answer: {generated_answer}

First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG. 
Do NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.

Just return the label CORRECT or WRONG in a json format with the key as "label".
`

// Judge labels.
const (
	labelCorrect = "CORRECT"
	labelWrong   = "WRONG"
)

// answerUserPrompt is the user message for one question.
func answerUserPrompt(contextText, question string) string {
	if strings.TrimSpace(contextText) == "" {
		contextText = "(no memories)"
	}
	return "Memory context:\n" + contextText + "\n\nQuestion: " + question + "\nAnswer:"
}

// judgeUserPrompt fills the judge prompt.
func judgeUserPrompt(question, gold, generated string) string {
	return strings.NewReplacer("{question}", question, "{gold_answer}", gold, "{generated_answer}", generated).Replace(judgePrompt)
}

var labelJSON = regexp.MustCompile(`(?i)"label"\s*:\s*"\s*(correct|wrong)\s*"`)

// parseJudgeLabel reads the judge's verdict: the "label" of its JSON, else the
// one label word the reply contains. A reply with neither, or both words and no
// JSON, is an error.
func parseJudgeLabel(reply string) (string, error) {
	if m := labelJSON.FindStringSubmatch(reply); m != nil {
		return strings.ToUpper(m[1]), nil
	}
	var v struct {
		Label string `json:"label"`
	}
	if i, j := strings.Index(reply, "{"), strings.LastIndex(reply, "}"); i >= 0 && j > i {
		if json.Unmarshal([]byte(reply[i:j+1]), &v) == nil {
			switch l := strings.ToUpper(strings.TrimSpace(v.Label)); l {
			case labelCorrect, labelWrong:
				return l, nil
			}
		}
	}
	up := strings.ToUpper(reply)
	c, w := strings.Contains(up, labelCorrect), strings.Contains(up, labelWrong)
	switch {
	case c && !w:
		return labelCorrect, nil
	case w && !c:
		return labelWrong, nil
	}
	return "", fmt.Errorf("judge reply has no clear label: %q", clip(reply, 120))
}

// answerAcc answers, grades and tallies.
type answerAcc struct {
	opts    AnswerOptions
	n, ok   map[int]int
	words   int
	errs    int
	answers int
}

func newAnswerAcc(o AnswerOptions) *answerAcc {
	if o.Judge == nil {
		o.Judge = o.Chat
	}
	return &answerAcc{opts: o, n: map[int]int{}, ok: map[int]int{}}
}

// grade answers q from contextText and judges the answer. Model failures are
// counted as wrong answers (and as errors); only a cancelled ctx is returned.
func (a *answerAcc) grade(ctx context.Context, q QA, contextText string) (answer, label string, err error) {
	a.n[q.Category]++
	answer, err = a.opts.Chat.Complete(ctx, answerSystemPrompt, answerUserPrompt(contextText, q.Question))
	if err != nil {
		if ctx.Err() != nil {
			return "", "", fmt.Errorf("answering: %w", err)
		}
		a.errs++
		return "", labelWrong, nil
	}
	answer = strings.TrimSpace(answer)
	a.answers++
	a.words += len(strings.Fields(answer))
	reply, err := a.opts.Judge.Complete(ctx, "", judgeUserPrompt(q.Question, q.Answer, answer))
	if err == nil {
		label, err = parseJudgeLabel(reply)
	}
	if err != nil {
		if ctx.Err() != nil {
			return answer, "", fmt.Errorf("judging: %w", errors.Join(err, ctx.Err()))
		}
		a.errs++
		return answer, labelWrong, nil
	}
	if label == labelCorrect {
		a.ok[q.Category]++
	}
	return answer, label, nil
}

func (a *answerAcc) report() AnswerReport {
	r := AnswerReport{AnswerModel: a.opts.AnswerModel, JudgeModel: a.opts.JudgeModel, JByCategory: map[int]float64{}, Errors: a.errs}
	for cat, n := range a.n {
		r.Questions += n
		r.Correct += a.ok[cat]
		r.JByCategory[cat] = rate(a.ok[cat], n)
	}
	r.J = rate(r.Correct, r.Questions)
	r.MeanAnswerWords = mean(a.words, a.answers)
	return r
}
