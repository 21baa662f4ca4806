// Package tokenizer is GPT-2's byte-level BPE tokenizer, read from a
// Hugging Face model folder: vocab.json and merges.txt (GPT-2's own files),
// or a tokenizer.json of the tokenizers library whose model is BPE with a
// ByteLevel pre-tokenizer.
//
// Encoding first takes out the added tokens (special ones such as
// <|endoftext|> among them, as Hugging Face's tokenizer(text) does), then
// splits the rest with GPT-2's pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// (github.com/dlclark/regexp2: it needs the lookahead and Unicode classes),
// maps each piece's bytes to GPT-2's printable byte alphabet and applies
// the merges, lowest rank first. Every byte sequence round-trips through
// Encode and Decode (but the whitespace an added token's lstrip or rstrip
// takes), invalid UTF-8 included: an invalid byte is a
// character of its own to the pattern (of the class [^\s\p{L}\p{N}], as
// Python's surrogateescape makes it) and keeps its byte.
//
// A tokenizer.json may say otherwise, and is followed: its normalizer
// (NFC, NFKC, …), a pre-tokenizer pipeline (a Sequence of Split patterns,
// such as Llama 3's and Qwen2's, Digits and ByteLevel) and the model's
// ignore_merges; a file this package cannot follow exactly is an error
// (see FromTokenizerJSON).
package tokenizer

import (
	"container/heap"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// Pattern is GPT-2's pre-tokenizer regular expression.
const Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

var (
	patOnce sync.Once
	pat     *regexp2.Regexp
)

func pattern() *regexp2.Regexp {
	patOnce.Do(func() { pat = regexp2.MustCompile(Pattern, regexp2.None) })
	return pat
}

// Tokenizer is a byte-level BPE tokenizer. It is safe for concurrent use.
type Tokenizer struct {
	vocab   map[string]int // token (in the byte alphabet) → id
	tokens  []string       // id → token; "" for an unused id
	ranks   map[[2]string]int
	special map[string]int // added tokens (special or not), as text
	byID    map[int]string // added token's id → text
	// raw and norm are the added tokens matched in the text as it is
	// (normalized false) and in the normalized text (normalized true, their
	// content normalized too), each longest first
	raw, norm []addedToken
	// pre is the pre-tokenizer pipeline: GPT-2's (ByteLevel with its
	// pattern) unless a tokenizer.json says otherwise
	pre []preStep
	// normalize, if not nil, is applied to the text before the
	// pre-tokenizers (tokenizer.json's normalizer, such as NFC)
	normalize func(string) string
	// ignoreMerges takes a piece that is a token as it is, without
	// merging (tokenizer.json's model.ignore_merges)
	ignoreMerges bool
	// before and after are the ids the post-processor puts around a text
	// (EncodeForModel)
	before, after []int

	cache  sync.Map     // piece → ids
	cached atomic.Int64 // entries in cache, at most maxCached
}

// maxCached bounds the cache of pieces' ids (as the tokenizers library's
// BPE cache is bounded): beyond it pieces are encoded afresh each time,
// so that memory does not grow with the number of distinct words seen.
const maxCached = 1 << 16

// byteRune is GPT-2's bytes_to_unicode: printable bytes stand for
// themselves, the others for 256 + n in byte order.
var byteRune, runeByte = func() ([256]rune, map[rune]byte) {
	var br [256]rune
	rb := map[rune]byte{}
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			br[b] = rune(b)
		} else {
			br[b] = rune(256 + n)
			n++
		}
		rb[br[b]] = byte(b)
	}
	return br, rb
}()

// MaxIDSpread bounds token ids: New refuses an id of MaxIDSpread times the
// number of tokens plus 1024 or more, so that the table of tokens by id
// stays within a few times the vocabulary's size (a hostile vocab.json's
// id of 10¹⁸ would otherwise size it).
const MaxIDSpread = 4

// ByteToken returns the token GPT-2's alphabet writes byte b as.
func ByteToken(b byte) string { return string(byteRune[b]) }

// New builds a tokenizer from a vocabulary (token → id, tokens in GPT-2's
// byte alphabet), the merges in rank order and the special tokens (text →
// id, recognised by Encode, and not by EncodeOrdinary; they may be in
// vocab too). Every
// byte's token must be in the vocabulary, and every merge's parts and
// result, so that any text encodes. Ids must be below MaxIDSpread times
// the number of tokens plus 1024.
func New(vocab map[string]int, merges [][2]string, special map[string]int) (*Tokenizer, error) {
	t := &Tokenizer{vocab: vocab, ranks: make(map[[2]string]int, len(merges)), special: map[string]int{}, byID: map[int]string{},
		pre: []preStep{byteLevelStep(false, true)}}
	maxID := -1
	for tok, id := range vocab {
		if id < 0 {
			return nil, fmt.Errorf("tokenizer: token %q has a negative id %d", tok, id)
		}
		maxID = max(maxID, id)
	}
	for s, id := range special {
		if id < 0 || s == "" {
			return nil, fmt.Errorf("tokenizer: special token %q with id %d", s, id)
		}
		maxID = max(maxID, id)
	}
	if n := len(vocab) + len(special); maxID >= MaxIDSpread*n+1024 {
		return nil, fmt.Errorf("tokenizer: id %d is far past the %d tokens (an id may be at most %d× their count + 1024)", maxID, n, MaxIDSpread)
	}
	t.tokens = make([]string, maxID+1)
	for tok, id := range vocab {
		if t.tokens[id] != "" {
			return nil, fmt.Errorf("tokenizer: id %d is both %q and %q", id, t.tokens[id], tok)
		}
		t.tokens[id] = tok
	}
	for b := 0; b < 256; b++ {
		if _, ok := vocab[ByteToken(byte(b))]; !ok {
			return nil, fmt.Errorf("tokenizer: the vocabulary lacks byte 0x%02x's token %q (not a byte-level BPE vocabulary?)", b, ByteToken(byte(b)))
		}
	}
	for i, m := range merges {
		for _, part := range []string{m[0], m[1], m[0] + m[1]} {
			if _, ok := vocab[part]; !ok {
				return nil, fmt.Errorf("tokenizer: merge %d (%q %q): %q is not in the vocabulary", i+1, m[0], m[1], part)
			}
		}
		// a merge listed twice has its last rank, as GPT-2's bpe_ranks
		// dict and the tokenizers library's BPE builder give it
		t.ranks[m] = i
	}
	var added []addedToken
	for s, id := range special {
		added = append(added, addedToken{content: s, id: id, special: true})
	}
	t.setAdded(added)
	return t, nil
}

// addedToken is one of tokenizer.json's added_tokens, with the tokenizers
// library's options (AddedToken): lstrip and rstrip take the whitespace
// before and after it into the match, single_word matches it only where
// no word character is next to it, and normalized matches it in the
// normalized text (else in the text as it is).
type addedToken struct {
	content                                         string
	id                                              int
	special, lstrip, rstrip, singleWord, normalized bool
}

// setAdded makes added the tokenizer's added tokens.
func (t *Tokenizer) setAdded(added []addedToken) {
	t.special, t.byID, t.raw, t.norm = map[string]int{}, map[int]string{}, nil, nil
	for _, a := range added {
		t.special[a.content] = a.id
		t.byID[a.id] = a.content
		if a.normalized {
			if t.normalize != nil {
				a.content = t.normalize(a.content)
			}
			if a.content != "" {
				t.norm = append(t.norm, a)
			}
		} else {
			t.raw = append(t.raw, a)
		}
	}
	for _, set := range [][]addedToken{t.raw, t.norm} {
		sort.Slice(set, func(i, j int) bool {
			if len(set[i].content) != len(set[j].content) {
				return len(set[i].content) > len(set[j].content)
			}
			return set[i].content < set[j].content
		})
	}
}

// VocabSize is one more than the largest id.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// SpecialTokens returns the added tokens, special or not (text → id).
func (t *Tokenizer) SpecialTokens() map[string]int {
	m := make(map[string]int, len(t.special))
	for s, id := range t.special {
		m[s] = id
	}
	return m
}

// TokenID returns the id of a special token's text or of a vocabulary
// token.
func (t *Tokenizer) TokenID(tok string) (int, bool) {
	if id, ok := t.special[tok]; ok {
		return id, true
	}
	id, ok := t.vocab[tok]
	return id, ok
}

// Encode returns the ids of text as the tokenizers library's encode
// (Hugging Face's tokenizer.encode(text, add_special_tokens=False)) gives
// them: its added tokens (tokenizer.json's added_tokens, GPT-2's
// <|endoftext|>), special or not, are matched first, leftmost and then
// longest, with their lstrip, rstrip, single_word and normalized options,
// and each text between them is normalized, pre-tokenized and merged on
// its own (a ByteLevel add_prefix_space, for one, puts a space before
// each). It panics with a *PatternTimeoutError where a tokenizer.json's
// Split pattern takes too long (see MatchTimeout).
func (t *Tokenizer) Encode(text string) []int {
	return t.encode(text, false)
}

// EncodeOrdinary is Encode with special tokens' text encoded as ordinary
// text (the added tokens that are not special are still matched): Hugging
// Face's split_special_tokens=True, for text that must not be able to
// write a control token.
func (t *Tokenizer) EncodeOrdinary(text string) []int {
	return t.encode(text, true)
}

// EncodeWithSpecial is Encode, which recognises special tokens.
//
// Deprecated: Encode recognises added tokens, as Hugging Face's encode.
func (t *Tokenizer) EncodeWithSpecial(text string) []int { return t.Encode(text) }

// EncodeForModel is Encode with the ids tokenizer.json's post_processor
// puts around a text (Llama 3's <|begin_of_text|> first): what Hugging
// Face's tokenizer(text) gives, add_special_tokens=True being its
// default, and what a model expects its prompt to be. GPT-2's files add
// nothing.
func (t *Tokenizer) EncodeForModel(text string) []int {
	ids := append([]int(nil), t.before...)
	ids = append(ids, t.Encode(text)...)
	return append(ids, t.after...)
}

// encode is Encode, special tokens left as text if skipSpecial, as the
// tokenizers library's AddedVocabulary.extract_and_normalize then the
// model: the added tokens that are not normalized are matched in the
// text, those that are in each normalized text between.
func (t *Tokenizer) encode(text string, skipSpecial bool) []int {
	var ids []int
	budget := &matchBudget{MatchTimeout + time.Duration(len(text))*MatchTimePerByte}
	matchAdded(text, t.raw, skipSpecial, func(from, to, id int) {
		if id >= 0 {
			ids = append(ids, id)
			return
		}
		gap := text[from:to]
		if t.normalize != nil {
			gap = t.normalize(gap)
		}
		matchAdded(gap, t.norm, skipSpecial, func(from, to, id int) {
			if id >= 0 {
				ids = append(ids, id)
				return
			}
			ids = t.encodeNormalized(gap[from:to], ids, budget)
		})
	})
	return ids
}

// matchAdded calls f with each of the added tokens found in text (its
// bytes [from, to), lstrip's and rstrip's whitespace included, and id)
// and each text between them (id −1), in order, as the tokenizers
// library's AddedVocabulary.find_matches: the leftmost-longest matches,
// not overlapping, each then dropped if single_word and a word character
// (\w) is next to it, or if skipSpecial and it is special. Each token's
// next occurrence is looked for again only once the search has passed
// it, so that the tokens that do not occur are looked for once, not at
// each one that does (Llama 3 has 256).
func matchAdded(text string, set []addedToken, skipSpecial bool, f func(from, to, id int)) {
	if len(set) == 0 {
		if text != "" {
			f(0, len(text), -1)
		}
		return
	}
	next := make([]int, len(set))
	for k := range next {
		next[k] = -2 // not searched yet
	}
	done := 0 // text before done has been given to f
	for pos := 0; pos < len(text); {
		at, which := -1, -1
		for k := range set { // the leftmost match, the longest there
			if next[k] == -2 || next[k] >= 0 && next[k] < pos {
				next[k] = -1
				if i := strings.Index(text[pos:], set[k].content); i >= 0 {
					next[k] = pos + i
				}
			}
			if i := next[k]; i >= 0 && (at < 0 || i < at) {
				at, which = i, k
			}
		}
		if at < 0 {
			break
		}
		a := &set[which]
		start, stop := at, at+len(a.content)
		pos = stop
		if skipSpecial && a.special {
			continue
		}
		if a.singleWord && (start > 0 && endsWithWord(text[:start]) || stop < len(text) && startsWithWord(text[stop:])) {
			continue
		}
		if a.lstrip {
			start = max(len(strings.TrimRightFunc(text[:start], unicode.IsSpace)), done)
		}
		if a.rstrip {
			stop = len(text) - len(strings.TrimLeftFunc(text[stop:], unicode.IsSpace))
		}
		if start < done {
			continue // inside the whitespace a token before took
		}
		if done < start {
			f(done, start, -1)
		}
		f(start, stop, a.id)
		done = stop
	}
	if done < len(text) {
		f(done, len(text), -1)
	}
}

// isWord is regex's \w, as Rust's regex crate (the tokenizers library's)
// has it: alphabetic, a mark, a decimal digit, a connector punctuation
// or a joiner.
func isWord(r rune) bool {
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) ||
		unicode.Is(unicode.Pc, r) || r == 0x200C || r == 0x200D || unicode.Is(unicode.Other_Alphabetic, r)
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isWord(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWord(r)
}

// encodeNormalized appends the ids of text (normalized, no added tokens)
// to ids: split by each pre-tokenizer in turn, each piece's BPE.
func (t *Tokenizer) encodeNormalized(text string, ids []int, budget *matchBudget) []int {
	if text == "" {
		return ids
	}
	pieces := []string{text}
	for _, step := range t.pre {
		var next []string
		for _, p := range pieces {
			next = step(p, next, budget)
		}
		pieces = next
	}
	for _, p := range pieces {
		ids = t.piece(p, ids)
	}
	return ids
}

// piece appends the BPE ids of one pre-tokenized piece (raw bytes).
func (t *Tokenizer) piece(p string, ids []int) []int {
	if c, ok := t.cache.Load(p); ok {
		return append(ids, c.([]int)...)
	}
	word := make([]string, len(p))
	for i := 0; i < len(p); i++ {
		word[i] = ByteToken(p[i])
	}
	if t.ignoreMerges {
		if id, ok := t.vocab[strings.Join(word, "")]; ok {
			return append(ids, id)
		}
	}
	word = t.merge(word)
	out := make([]int, len(word))
	for i, w := range word {
		out[i] = t.vocab[w]
	}
	if len(p) <= 256 && t.cached.Load() < maxCached {
		if _, loaded := t.cache.LoadOrStore(p, out); !loaded {
			t.cached.Add(1)
		}
	}
	return append(ids, out...)
}

// merge applies the merges to word's symbols, lowest rank first and, among
// equal ranks, leftmost first, as the tokenizers library does: with a heap
// of the candidate pairs, so that a piece of n bytes takes O(n log n), not
// a pass over the word for each merge (minutes for a long run of letters
// with a real vocabulary). On merges learned by BPE training (a merge of a
// token comes after the merge that made it) this is GPT-2's algorithm.
func (t *Tokenizer) merge(word []string) []string {
	if len(word) < 2 {
		return word
	}
	next := make([]int, len(word)) // the next live symbol; -1 at the end
	prev := make([]int, len(word))
	for i := range word {
		next[i], prev[i] = i+1, i-1
	}
	next[len(word)-1] = -1
	h := &pairHeap{}
	push := func(i int) {
		if i < 0 || next[i] < 0 {
			return
		}
		if r, ok := t.ranks[[2]string{word[i], word[next[i]]}]; ok {
			heap.Push(h, pair{r, i})
		}
	}
	for i := range word {
		push(i)
	}
	for h.Len() > 0 {
		c := heap.Pop(h).(pair)
		i := c.pos
		j := next[i]
		if word[i] == "" || j < 0 {
			continue // merged away, or now the last symbol
		}
		if r, ok := t.ranks[[2]string{word[i], word[j]}]; !ok || r != c.rank {
			continue // stale: a neighbour has changed since
		}
		word[i] += word[j]
		word[j] = ""
		next[i] = next[j]
		if next[j] >= 0 {
			prev[next[j]] = i
		}
		push(prev[i])
		push(i)
	}
	out := word[:0]
	for i := 0; i >= 0; i = next[i] {
		out = append(out, word[i])
	}
	return out
}

// pair is a candidate merge of the symbol at pos with the next one.
type pair struct{ rank, pos int }

// pairHeap orders the candidates by rank, then position.
type pairHeap []pair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(a, b int) bool {
	return h[a].rank < h[b].rank || h[a].rank == h[b].rank && h[a].pos < h[b].pos
}
func (h pairHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pair)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// UnknownIDError is a Decode of an id the tokenizer does not have.
type UnknownIDError struct{ ID int }

func (e *UnknownIDError) Error() string {
	return fmt.Sprintf("tokenizer: unknown token id %d", e.ID)
}

// Decode returns the bytes ids stand for, as a string (it may be invalid
// UTF-8 when the ids split a character); special tokens give their text.
func (t *Tokenizer) Decode(ids []int) (string, error) {
	var b strings.Builder
	for _, id := range ids {
		if s, ok := t.byID[id]; ok {
			b.WriteString(s)
			continue
		}
		if id < 0 || id >= len(t.tokens) || t.tokens[id] == "" {
			return b.String(), &UnknownIDError{ID: id}
		}
		for _, r := range t.tokens[id] {
			c, ok := runeByte[r]
			if !ok { // a token outside the byte alphabet: its UTF-8 text
				b.WriteRune(r)
				continue
			}
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
