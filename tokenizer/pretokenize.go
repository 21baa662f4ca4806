package tokenizer

import (
	"fmt"
	"regexp"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"golang.org/x/text/unicode/norm"
)

// A preStep is one pre-tokenizer of tokenizer.json's pipeline: it appends
// the pieces it splits p into to out. A Split pattern's matching takes
// its time from b (nil: unbounded), and panics with a *PatternTimeoutError
// once b has none left.
type preStep func(p string, out []string, b *matchBudget) []string

// matchBudget is the time one Encode's Split patterns have left.
type matchBudget struct{ left time.Duration }

// MatchTimeout bounds the work of a tokenizer.json's Split patterns, which
// a hostile file may write to backtrack for ever (regexp2, which they
// need, is a backtracking engine: `(a+)+$` takes exponential time): one
// search for a pattern's next match may take at most MatchTimeout, and
// all of one Encode's Split matching at most MatchTimeout plus
// MatchTimePerByte for each byte of its text (about 40 times what the
// patterns of Llama 3 and GPT-2 take; it is checked every 8 matches). Past it Encode panics with a
// *PatternTimeoutError rather than return the ids of a text cut short.
// GPT-2's own pattern (ByteLevel's) is not bounded: it cannot backtrack
// that way.
const (
	MatchTimeout     = time.Second
	MatchTimePerByte = 10 * time.Microsecond
)

// PatternTimeoutError is the panic of an Encode whose tokenizer.json
// Split pattern took longer than MatchTimeout allows.
type PatternTimeoutError struct {
	Pattern string // the Split pattern
	Len     int    // bytes of the piece of text it was matching in
}

func (e *PatternTimeoutError) Error() string {
	return fmt.Sprintf("tokenizer: the pre_tokenizer's Split pattern %q took longer than allowed (%v a search, and %v plus %v a byte of text in all) on a piece of %d bytes: a pattern that backtracks catastrophically?",
		e.Pattern, MatchTimeout, MatchTimeout, MatchTimePerByte, e.Len)
}

// splitBehavior is tokenizers' SplitDelimiterBehavior: what becomes of
// the matches of a split's pattern.
type splitBehavior int

const (
	isolated           splitBehavior = iota // each match a piece of its own
	mergedWithPrevious                      // a match joins the piece before it
	mergedWithNext                          // a match joins the piece after it
	contiguous                              // consecutive matches are one piece
)

var behaviors = map[string]splitBehavior{
	"Isolated": isolated, "MergedWithPrevious": mergedWithPrevious, "MergedWithNext": mergedWithNext, "Contiguous": contiguous,
}

// span is a part of a piece: bytes [from, to) and whether the pattern
// matched it.
type span struct {
	from, to int
	match    bool
}

// regexSpans returns the matches of re in p and the gaps between them.
// An invalid byte is U+FFFD to the pattern (a symbol, as Python's
// surrogateescape makes it) and keeps its byte. Matching longer than b
// has left (unless b is nil), or a search longer than re.MatchTimeout,
// panics with a *PatternTimeoutError.
func regexSpans(p string, re *regexp2.Regexp, b *matchBudget) []span {
	runes := make([]rune, 0, len(p))
	offs := make([]int, 0, len(p)+1)
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRuneInString(p[i:])
		runes = append(runes, r)
		offs = append(offs, i)
		i += n
	}
	offs = append(offs, len(p))
	var sp []span
	prev := 0
	timeout := func() { panic(&PatternTimeoutError{Pattern: re.String(), Len: len(p)}) }
	start := time.Now()
	if b != nil {
		defer func() { b.left -= time.Since(start) }()
	}
	if b != nil && b.left <= 0 {
		timeout()
	}
	m, err := re.FindRunesMatch(runes)
	for n := 1; m != nil || err != nil; n++ {
		if err != nil || n%8 == 0 && b != nil && time.Since(start) > b.left {
			timeout()
		}
		from, to := m.RuneIndex, m.RuneIndex+m.RuneLength
		if from > prev {
			sp = append(sp, span{offs[prev], offs[from], false})
		}
		sp = append(sp, span{offs[from], offs[to], true})
		prev = to
		m, err = re.FindNextMatch(m)
	}
	if prev < len(runes) {
		sp = append(sp, span{offs[prev], len(p), false})
	}
	return sp
}

// runeSpans returns each character of p for which is holds as a match of
// its own and the runs between them.
func runeSpans(p string, is func(rune) bool) []span {
	var sp []span
	prev := 0
	for i, r := range p {
		if is(r) {
			if i > prev {
				sp = append(sp, span{prev, i, false})
			}
			n := utf8.RuneLen(r)
			if r == utf8.RuneError {
				_, n = utf8.DecodeRuneInString(p[i:])
			}
			sp = append(sp, span{i, i + n, true})
			prev = i + n
		}
	}
	if prev < len(p) {
		sp = append(sp, span{prev, len(p), false})
	}
	return sp
}

// splitSpans appends p's pieces to out as tokenizers' split does: the
// spans (matches inverted if invert) combined by the behavior, empty
// pieces left out.
func splitSpans(p string, sp []span, b splitBehavior, invert bool, out []string) []string {
	if invert {
		for i := range sp {
			sp[i].match = !sp[i].match
		}
	}
	var parts []span
	prevMatch := false
	switch b {
	case isolated:
		parts = sp
	case mergedWithPrevious:
		for _, s := range sp {
			if s.match && !prevMatch && len(parts) > 0 {
				parts[len(parts)-1].to = s.to
			} else {
				parts = append(parts, s)
			}
			prevMatch = s.match
		}
	case mergedWithNext:
		for i := len(sp) - 1; i >= 0; i-- {
			s := sp[i]
			if s.match && !prevMatch && len(parts) > 0 {
				parts[len(parts)-1].from = s.from
			} else {
				parts = append(parts, s)
			}
			prevMatch = s.match
		}
		for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
	case contiguous:
		for _, s := range sp {
			if s.match == prevMatch && len(parts) > 0 {
				parts[len(parts)-1].to = s.to
			} else {
				parts = append(parts, s)
			}
			prevMatch = s.match
		}
	}
	for _, s := range parts {
		if s.from < s.to {
			out = append(out, p[s.from:s.to])
		}
	}
	return out
}

// byteLevelStep is the ByteLevel pre-tokenizer: a space put before a
// piece that does not start with one (add_prefix_space), then GPT-2's
// pattern (use_regex).
func byteLevelStep(addPrefixSpace, useRegex bool) preStep {
	return func(p string, out []string, _ *matchBudget) []string {
		if addPrefixSpace && p != "" && p[0] != ' ' {
			p = " " + p
		}
		if !useRegex {
			return append(out, p)
		}
		return splitSpans(p, regexSpans(p, pattern(), nil), isolated, false, out)
	}
}

// preTokenizer is a tokenizer.json pre_tokenizer.
type preTokenizer struct {
	Type           string         `json:"type"`
	AddPrefixSpace bool           `json:"add_prefix_space"`
	UseRegex       *bool          `json:"use_regex"`
	PreTokenizers  []preTokenizer `json:"pretokenizers"`
	// Split
	Pattern *struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior string `json:"behavior"`
	Invert   bool   `json:"invert"`
	// Digits
	IndividualDigits bool `json:"individual_digits"`
}

// steps returns the pipeline of p and whether it has a ByteLevel step
// (which maps the bytes to the vocabulary's alphabet).
func (p *preTokenizer) steps(steps []preStep) ([]preStep, bool, error) {
	switch p.Type {
	case "ByteLevel":
		return append(steps, byteLevelStep(p.AddPrefixSpace, p.UseRegex == nil || *p.UseRegex)), true, nil
	case "Sequence":
		byteLevel := false
		for i := range p.PreTokenizers {
			var bl bool
			var err error
			if steps, bl, err = p.PreTokenizers[i].steps(steps); err != nil {
				return nil, false, err
			}
			byteLevel = byteLevel || bl
		}
		return steps, byteLevel, nil
	case "Split":
		b, ok := behaviors[p.Behavior]
		if !ok {
			return nil, false, fmt.Errorf("Split pre_tokenizer behavior %q is not supported (Isolated, MergedWithPrevious, MergedWithNext, Contiguous)", p.Behavior)
		}
		var expr string
		switch {
		case p.Pattern != nil && p.Pattern.Regex != nil:
			expr = *p.Pattern.Regex
		case p.Pattern != nil && p.Pattern.String != nil:
			expr = regexp.QuoteMeta(*p.Pattern.String)
		default:
			return nil, false, fmt.Errorf("Split pre_tokenizer without a Regex or String pattern")
		}
		re, err := regexp2.Compile(expr, regexp2.None)
		if err != nil {
			return nil, false, fmt.Errorf("Split pre_tokenizer pattern %q: %w", expr, err)
		}
		re.MatchTimeout = MatchTimeout
		invert := p.Invert
		return append(steps, func(s string, out []string, budget *matchBudget) []string {
			return splitSpans(s, regexSpans(s, re, budget), b, invert, out)
		}), false, nil
	case "Digits":
		b := contiguous
		if p.IndividualDigits {
			b = isolated
		}
		return append(steps, func(s string, out []string, _ *matchBudget) []string {
			return splitSpans(s, runeSpans(s, unicode.IsNumber), b, false, out)
		}), false, nil
	}
	return nil, false, fmt.Errorf("pre_tokenizer %q is not supported (ByteLevel, Split, Digits, Sequence)", p.Type)
}

// normalizer is a tokenizer.json normalizer.
type normalizer struct {
	Type        string       `json:"type"`
	Normalizers []normalizer `json:"normalizers"`
}

// function returns the normalizer as a function (nil for none).
func (n *normalizer) function() (func(string) string, error) {
	if n == nil {
		return nil, nil
	}
	switch n.Type {
	case "NFC":
		return norm.NFC.String, nil
	case "NFKC":
		return norm.NFKC.String, nil
	case "NFD":
		return norm.NFD.String, nil
	case "NFKD":
		return norm.NFKD.String, nil
	case "Sequence":
		var fs []func(string) string
		for i := range n.Normalizers {
			f, err := n.Normalizers[i].function()
			if err != nil {
				return nil, err
			}
			if f != nil {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			return nil, nil
		}
		return func(s string) string {
			for _, f := range fs {
				s = f(s)
			}
			return s
		}, nil
	}
	return nil, fmt.Errorf("normalizer %q is not supported (NFC, NFKC, NFD, NFKD, Sequence)", n.Type)
}

// postProcessor is a tokenizer.json post_processor: what the tokenizers
// library puts around an encoded text when special tokens are added
// (add_special_tokens=True, its default).
type postProcessor struct {
	Type       string          `json:"type"`
	Processors []postProcessor `json:"processors"`
	// TemplateProcessing
	Single []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
		Sequence *struct {
			ID string `json:"id"`
		} `json:"Sequence"`
	} `json:"single"`
	SpecialTokens map[string]struct {
		IDs []int `json:"ids"`
	} `json:"special_tokens"`
	// RobertaProcessing, BertProcessing: [token, id]
	Cls []any `json:"cls"`
	Sep []any `json:"sep"`
}

// template returns the ids the post-processor puts before and after a
// single text.
func (p *postProcessor) template() (before, after []int, err error) {
	if p == nil {
		return nil, nil, nil
	}
	switch p.Type {
	case "ByteLevel": // offsets only
		return nil, nil, nil
	case "Sequence":
		for i := range p.Processors {
			b, a, err := p.Processors[i].template()
			if err != nil {
				return nil, nil, err
			}
			// each processor wraps the result of the one before
			before, after = append(b, before...), append(after, a...)
		}
		return before, after, nil
	case "TemplateProcessing":
		seen := false
		for _, piece := range p.Single {
			switch {
			case piece.Sequence != nil:
				if seen {
					return nil, nil, fmt.Errorf("post_processor template with two sequences for a single text")
				}
				seen = true
			case piece.SpecialToken != nil:
				st, ok := p.SpecialTokens[piece.SpecialToken.ID]
				if !ok {
					return nil, nil, fmt.Errorf("post_processor template token %q is not in its special_tokens", piece.SpecialToken.ID)
				}
				if seen {
					after = append(after, st.IDs...)
				} else {
					before = append(before, st.IDs...)
				}
			}
		}
		if !seen {
			return nil, nil, fmt.Errorf("post_processor template without the text's sequence $A")
		}
		return before, after, nil
	case "RobertaProcessing", "BertProcessing":
		cls, ok1 := tokenPair(p.Cls)
		sep, ok2 := tokenPair(p.Sep)
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("post_processor %s: cls %v and sep %v are not [token, id] pairs", p.Type, p.Cls, p.Sep)
		}
		return []int{cls}, []int{sep}, nil
	}
	return nil, nil, fmt.Errorf("post_processor %q is not supported (TemplateProcessing, ByteLevel, RobertaProcessing, BertProcessing, Sequence)", p.Type)
}

// tokenPair reads the id of a [token, id] pair.
func tokenPair(p []any) (int, bool) {
	if len(p) != 2 {
		return 0, false
	}
	f, ok := p[1].(float64)
	if !ok || f < 0 || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}
