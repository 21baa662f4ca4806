package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emberml/ember/tokenizer"
)

func init() { rootCmd.AddCommand(newTokenizeCmd()) }

func newTokenizeCmd() *cobra.Command {
	var (
		model  string
		decode bool
		noSpec bool
	)
	cmd := &cobra.Command{
		Use:   "tokenize --model DIR TEXT",
		Short: "Print the token ids of TEXT as a JSON array (--decode: the text of ids)",
		Long: `tokenize encodes TEXT with the byte-level BPE tokenizer of a model folder
(tokenizer.json, or vocab.json + merges.txt, as Hugging Face saves GPT-2) and
prints the ids as a JSON array, as Hugging Face's tokenizer.encode(TEXT)
does: added tokens, such as the special <|endoftext|>, in TEXT become their
ids (with tokenizer.json's lstrip, rstrip, single_word and normalized
options), and the ids tokenizer.json's post_processor adds are added
(Llama 3's <|begin_of_text|> first; GPT-2's add none). --no-special
encodes special tokens' text as ordinary text (split_special_tokens=True)
and adds no post-processor ids.

With --decode, TEXT is ids (a JSON array, or numbers separated by spaces or
commas) and the decoded text is printed as it is, bytes and all.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if model == "" {
				return fmt.Errorf("tokenize: --model DIR is required")
			}
			tk, err := tokenizer.Load(model)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if decode {
				ids, err := parseIDs(args[0])
				if err != nil {
					return err
				}
				text, err := tk.Decode(ids)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(out, text)
				return err
			}
			encode := tk.EncodeForModel
			if noSpec {
				encode = tk.EncodeOrdinary
			}
			ids, err := encodeText(encode, args[0])
			if err != nil {
				return err
			}
			if ids == nil {
				ids = []int{}
			}
			b, _ := json.Marshal(ids)
			_, err = fmt.Fprintln(out, string(b))
			return err
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "model folder with tokenizer.json or vocab.json + merges.txt")
	cmd.Flags().BoolVar(&decode, "decode", false, "read TEXT as token ids and print their text")
	cmd.Flags().BoolVar(&noSpec, "no-special", false, "encode special tokens' text as ordinary text and add no post-processor tokens")
	return cmd
}

// encodeText is encode(text), the *tokenizer.PatternTimeoutError with
// which a tokenizer.json's hostile Split pattern makes it panic an error.
func encodeText(encode func(string) []int, text string) (ids []int, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*tokenizer.PatternTimeoutError)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	return encode(text), nil
}

// parseIDs reads "[1, 2, 3]" or "1 2 3" or "1,2,3".
func parseIDs(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		var ids []int
		if err := json.Unmarshal([]byte(s), &ids); err != nil {
			return nil, fmt.Errorf("tokenize --decode: %q is not a JSON array of ids: %w", s, err)
		}
		return ids, nil
	}
	var ids []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("tokenize --decode: %q is not a token id", f)
		}
		ids = append(ids, n)
	}
	return ids, nil
}
