package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Load reads the tokenizer of a model folder: tokenizer.json when the
// folder has one, else vocab.json and merges.txt.
func Load(dir string) (*Tokenizer, error) {
	tj := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(tj); err == nil {
		return FromTokenizerJSON(tj)
	}
	v, m := filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt")
	_, ev := os.Stat(v)
	_, em := os.Stat(m)
	if errors.Is(ev, fs.ErrNotExist) && errors.Is(em, fs.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: %s has no tokenizer.json and no vocab.json + merges.txt", dir)
	}
	return FromFiles(v, m)
}

// FromFiles reads GPT-2's vocab.json (token → id) and merges.txt (an
// optional "#version" line, then one "left right" pair per line, in rank
// order). Tokens of the form <|...|> in the vocabulary are its special
// tokens (GPT-2's <|endoftext|>).
func FromFiles(vocabPath, mergesPath string) (*Tokenizer, error) {
	vb, err := os.ReadFile(vocabPath)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var vocab map[string]int
	if err := json.Unmarshal(vb, &vocab); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: not a JSON object of token ids: %w", vocabPath, err)
	}
	if len(vocab) == 0 {
		return nil, fmt.Errorf("tokenizer: %s: empty vocabulary", vocabPath)
	}
	mb, err := os.ReadFile(mergesPath)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	merges, err := parseMerges(mergesPath, mb)
	if err != nil {
		return nil, err
	}
	special := map[string]int{}
	for tok, id := range vocab {
		if len(tok) > 4 && strings.HasPrefix(tok, "<|") && strings.HasSuffix(tok, "|>") {
			special[tok] = id
		}
	}
	t, err := New(vocab, merges, special)
	if err != nil {
		return nil, fmt.Errorf("%w (%s, %s)", err, vocabPath, mergesPath)
	}
	return t, nil
}

func parseMerges(path string, b []byte) ([][2]string, error) {
	var merges [][2]string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || (n == 1 && strings.HasPrefix(line, "#version")) {
			continue
		}
		f := strings.Split(line, " ")
		if len(f) != 2 || f[0] == "" || f[1] == "" {
			return nil, fmt.Errorf("tokenizer: %s:%d: want two tokens separated by one space, got %q", path, n, line)
		}
		merges = append(merges, [2]string{f[0], f[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return merges, nil
}

// tokenizerJSON is the part of a tokenizers tokenizer.json read here.
type tokenizerJSON struct {
	Model *struct {
		Type                    string          `json:"type"`
		Vocab                   map[string]int  `json:"vocab"`
		Merges                  json.RawMessage `json:"merges"`
		IgnoreMerges            bool            `json:"ignore_merges"`
		ContinuingSubwordPrefix string          `json:"continuing_subword_prefix"`
		EndOfWordSuffix         string          `json:"end_of_word_suffix"`
	} `json:"model"`
	AddedTokens []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		Special    bool   `json:"special"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized *bool  `json:"normalized"` // absent: not if special, as AddedToken::from
	} `json:"added_tokens"`
	Normalizer    *normalizer    `json:"normalizer"`
	PreTokenizer  *preTokenizer  `json:"pre_tokenizer"`
	PostProcessor *postProcessor `json:"post_processor"`
}

// FromTokenizerJSON reads a tokenizers tokenizer.json whose model is BPE
// (vocab and merges, as "left right" strings or [left, right] pairs;
// ignore_merges honoured) with a ByteLevel pre-tokenizer (its
// add_prefix_space and use_regex honoured), alone or in a Sequence with
// Split (a Regex or String pattern, any behavior but Removed, invert) and
// Digits pre-tokenizers, as Llama 3's, Qwen2's and StarCoder's files have;
// the normalizer may be null, NFC, NFKC, NFD, NFKD or a Sequence of them.
// Anything else is an error rather than ids that differ from the
// tokenizers library's. Its added_tokens are the tokens Encode matches
// before the model (with their lstrip, rstrip, single_word and normalized
// options; EncodeOrdinary leaves out the special ones); its
// post_processor (TemplateProcessing,
// such as Llama 3's <|begin_of_text|> before the text, Roberta's or
// Bert's) is what EncodeForModel adds.
func FromTokenizerJSON(path string) (*Tokenizer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var tj tokenizerJSON
	if err := json.Unmarshal(b, &tj); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	if tj.Model == nil {
		return nil, fmt.Errorf("tokenizer: %s: no model", path)
	}
	if tj.Model.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer: %s: model type %q, only BPE is supported", path, tj.Model.Type)
	}
	if tj.PreTokenizer == nil {
		return nil, fmt.Errorf("tokenizer: %s: no ByteLevel pre_tokenizer, only byte-level BPE (GPT-2's) is supported", path)
	}
	pre, byteLevel, err := tj.PreTokenizer.steps(nil)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	if !byteLevel {
		return nil, fmt.Errorf("tokenizer: %s: no ByteLevel pre_tokenizer, only byte-level BPE (GPT-2's) is supported", path)
	}
	normalize, err := tj.Normalizer.function()
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	before, after, err := tj.PostProcessor.template()
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	if tj.Model.ContinuingSubwordPrefix != "" || tj.Model.EndOfWordSuffix != "" {
		return nil, fmt.Errorf("tokenizer: %s: model.continuing_subword_prefix %q and end_of_word_suffix %q are not supported (byte-level BPE has neither)", path, tj.Model.ContinuingSubwordPrefix, tj.Model.EndOfWordSuffix)
	}
	if len(tj.Model.Vocab) == 0 {
		return nil, fmt.Errorf("tokenizer: %s: empty model.vocab", path)
	}
	var merges [][2]string
	var asStrings []string
	var asPairs [][]string
	if len(tj.Model.Merges) > 0 && json.Unmarshal(tj.Model.Merges, &asStrings) == nil {
		for i, m := range asStrings {
			f := strings.Split(m, " ")
			if len(f) != 2 || f[0] == "" || f[1] == "" {
				return nil, fmt.Errorf("tokenizer: %s: model.merges[%d] = %q, want two tokens separated by one space", path, i, m)
			}
			merges = append(merges, [2]string{f[0], f[1]})
		}
	} else if len(tj.Model.Merges) > 0 && json.Unmarshal(tj.Model.Merges, &asPairs) == nil {
		for i, m := range asPairs {
			if len(m) != 2 {
				return nil, fmt.Errorf("tokenizer: %s: model.merges[%d] has %d tokens, want 2", path, i, len(m))
			}
			merges = append(merges, [2]string{m[0], m[1]})
		}
	} else if len(tj.Model.Merges) > 0 && string(tj.Model.Merges) != "null" {
		return nil, fmt.Errorf("tokenizer: %s: model.merges is neither a list of strings nor of pairs", path)
	}
	special := map[string]int{}
	for _, a := range tj.AddedTokens {
		special[a.Content] = a.ID
	}
	t, err := New(tj.Model.Vocab, merges, special)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	t.pre, t.normalize, t.ignoreMerges = pre, normalize, tj.Model.IgnoreMerges
	added := make([]addedToken, len(tj.AddedTokens))
	for i, a := range tj.AddedTokens {
		added[i] = addedToken{content: a.Content, id: a.ID, special: a.Special, lstrip: a.LStrip, rstrip: a.RStrip,
			singleWord: a.SingleWord, normalized: !a.Special}
		if a.Normalized != nil {
			added[i].normalized = *a.Normalized
		}
	}
	t.setAdded(added)
	for _, id := range append(before, after...) {
		if id < 0 || id >= len(t.tokens) || t.tokens[id] == "" && t.byID[id] == "" {
			return nil, fmt.Errorf("tokenizer: %s: post_processor adds id %d, which is not a token", path, id)
		}
	}
	t.before, t.after = before, after
	return t, nil
}
