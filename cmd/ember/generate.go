package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/emberml/ember"
	"github.com/emberml/ember/hub"
	"github.com/emberml/ember/models/generate"
	"github.com/emberml/ember/models/gpt2"
	"github.com/emberml/ember/models/llama"
	"github.com/emberml/ember/tokenizer"
)

func init() { rootCmd.AddCommand(newGenerateCmd()) }

type generateOptions struct {
	model, prompt, device string
	dtype                 string
	maxNew, topK          int
	temperature, topP     float64
	seed                  uint64
	json, ignoreEOS       bool
}

func newGenerateCmd() *cobra.Command {
	var o generateOptions
	cmd := &cobra.Command{
		Use:   "generate --model DIR --prompt TEXT",
		Short: "Continue a prompt with a GPT-2 or Llama model from a Hugging Face folder",
		Long: `generate loads a causal language model from a Hugging Face model folder
(--model DIR, or a model id such as gpt2 or org/name found in the Hugging
Face hub cache, $HF_HUB_CACHE or $HF_HOME/hub; nothing is downloaded)
(config.json with model_type gpt2 or llama; model.safetensors, a sharded
model.safetensors.index.json or pytorch_model.bin; the tokenizer as
tokenizer.json or vocab.json + merges.txt), encodes the prompt as
Hugging Face's tokenizer(prompt) does (special tokens' text recognised,
and the post-processor's tokens added: Llama 3's <|begin_of_text|>
first), runs it once and then
one token at a time with a KV cache, printing the text as it is produced,
then the prompt's and the new tokens' counts and the speed (on stderr).

--temperature 0 is greedy decoding; otherwise tokens are sampled from the
softmax of logits/temperature, within the top-k tokens (and those tied
with the k-th) and the top-p nucleus, seeded by --seed. Generation stops
after --max-new-tokens, at the model's end-of-text token (eos_token_id,
any of a list; --ignore-eos continues), or when the sequence fills the
model's context (a note says so). A prompt longer than the context is an
error; an empty one starts from bos_token_id, as transformers' generate.

A generation_config.json in the folder is read: its
eos_token_id (and bos_token_id) replace config.json's, and its sampling
settings are the defaults that flags given on the command line override:
do_sample false is greedy decoding; do_sample true samples with its
temperature, top_k and top_p, transformers' defaults (1, 50, 1) for those
it lacks; without do_sample (where transformers would decode greedily:
most GPT-2 folders' file has only bos/eos), ember still samples, its
temperature, top_k and top_p replacing these flags' defaults.

Ids the tokenizer does not have (a model's vocabulary padded past the
tokenizer's) are left out of the text, as Hugging Face's decode does.

--json prints {"prompt_ids": [...], "ids": [...], "text": "..."} instead,
ids being the new tokens and text their decoding.

--dtype bf16 or fp16 loads the weights in that dtype (a checkpoint stored
so is kept as it is, not widened) and runs the model in it, as
from_pretrained's torch_dtype: matrix products and attention in float32
from the rounded operands, norms and softmax in float32, the sampling on
float32 logits. The default is fp32.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGenerate(cmd, o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.model, "model", "", "model folder (config.json, weights, tokenizer), or a model id in the Hugging Face cache")
	fl.StringVar(&o.prompt, "prompt", "", "the text to continue")
	fl.IntVar(&o.maxNew, "max-new-tokens", 64, "most tokens to generate")
	fl.Float64Var(&o.temperature, "temperature", 0.8, "sampling temperature (0: greedy)")
	fl.IntVar(&o.topK, "top-k", 0, "sample among the k most likely tokens (0: all)")
	fl.Float64Var(&o.topP, "top-p", 1, "sample within the smallest set of tokens of this total probability (1: all)")
	fl.Uint64Var(&o.seed, "seed", 0, "sampling seed")
	fl.StringVar(&o.device, "device", "auto", "auto, cpu or cuda:N")
	fl.BoolVar(&o.json, "json", false, `print {"prompt_ids", "ids", "text"} as JSON`)
	fl.BoolVar(&o.ignoreEOS, "ignore-eos", false, "do not stop at the end-of-text token")
	fl.StringVar(&o.dtype, "dtype", "fp32", "the weights' and the computation's dtype: fp32, bf16 or fp16")
	return cmd
}

// causalLM is what generate runs.
type causalLM interface {
	generate.Model
	EOSIDs() []int
}

// resolveModel is name itself when it is a folder, else the snapshot of
// the Hugging Face model id name ("gpt2", "org/name") in the hub cache.
func resolveModel(name string) (string, error) {
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return name, nil
	}
	dir, err := hub.HFSnapshot(name)
	if err != nil {
		return "", fmt.Errorf("generate: --model %s is not a folder, nor a model in the Hugging Face cache: %w", name, err)
	}
	return dir, nil
}

// modelDTypes are --dtype's values.
var modelDTypes = map[string]ember.DType{"fp32": ember.Float32, "bf16": ember.BFloat16, "fp16": ember.Float16}

// loadCausalLM loads the model folder dir by its config's model_type, its
// parameters in dt.
func loadCausalLM(dir string, dev ember.Device, dt ember.DType) (causalLM, error) {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	var c struct {
		ModelType string `json:"model_type"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "config.json"), err)
	}
	switch c.ModelType {
	case "gpt2":
		return gpt2.Load(dir, dev, gpt2.WithDType(dt))
	case "llama":
		return llama.Load(dir, dev, llama.WithDType(dt))
	case "":
		return nil, fmt.Errorf("%s: no model_type (want gpt2 or llama)", filepath.Join(dir, "config.json"))
	}
	return nil, fmt.Errorf("%s: model_type %q is not supported (gpt2, llama)", filepath.Join(dir, "config.json"), c.ModelType)
}

func runGenerate(cmd *cobra.Command, o generateOptions) error {
	if o.model == "" {
		return errors.New("generate: --model DIR is required")
	}
	if o.maxNew < 0 {
		return fmt.Errorf("generate: --max-new-tokens %d: want 0 or more", o.maxNew)
	}
	switch {
	case !(o.temperature >= 0): // (NaN too)
		return fmt.Errorf("generate: --temperature %v: want 0 (greedy) or more", o.temperature)
	case o.topK < 0:
		return fmt.Errorf("generate: --top-k %d: want 0 (all tokens) or more", o.topK)
	case !(o.topP >= 0 && o.topP <= 1):
		return fmt.Errorf("generate: --top-p %v: want 0 to 1", o.topP)
	}
	dt, ok := modelDTypes[o.dtype]
	if !ok {
		return fmt.Errorf("generate: --dtype %q: want fp32, bf16 or fp16", o.dtype)
	}
	dir, err := resolveModel(o.model)
	if err != nil {
		return err
	}
	o.model = dir
	dev, err := pickDevice(o.device)
	if err != nil {
		return err
	}
	tk, err := tokenizer.Load(o.model) // first: a missing tokenizer loads no weights
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	m, err := loadCausalLM(o.model, dev, dt)
	if err != nil {
		return err
	}
	prompt, err := encodeText(tk.EncodeForModel, o.prompt) // with the tokens the tokenizer puts first (Llama 3's <|begin_of_text|>)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	gc, err := readGenerationConfig(o.model)
	if err != nil {
		return err
	}
	gc.apply(cmd, &o)
	if len(prompt) == 0 { // transformers' generate starts from bos_token_id
		if gc.bos == nil {
			return fmt.Errorf("generate: an empty prompt needs the model's bos_token_id to start from, and neither %s nor config.json has one", generationConfigFile)
		}
		prompt = []int{*gc.bos}
	}
	if v := vocabSize(m); v > 0 {
		for _, id := range prompt {
			if id >= v {
				return fmt.Errorf("generate: the prompt's token %d is past the model's vocabulary of %d (vocab_size): the tokenizer has tokens the model lacks", id, v)
			}
		}
	}
	var eos []int // all of a list of eos_token_id (Llama 3.2 Instruct's end of turn)
	if !o.ignoreEOS {
		eos = m.EOSIDs()
		if gc.hasEOS {
			eos = gc.eos
		}
	}
	out, diag := cmd.OutOrStdout(), cmd.ErrOrStderr()
	var pending []byte // bytes of a character not yet complete
	emit := func(id int) bool {
		if o.json {
			return true
		}
		s, err := tk.Decode([]int{id})
		if err != nil {
			return true
		}
		pending = append(pending, s...)
		n := len(pending)
		// hold back an incomplete UTF-8 sequence at the end
		for i := 1; i <= min(3, len(pending)); i++ {
			c := pending[len(pending)-i]
			if utf8.RuneStart(c) {
				if !utf8.FullRune(pending[len(pending)-i:]) {
					n = len(pending) - i
				}
				break
			}
		}
		out.Write(pending[:n])
		pending = append(pending[:0], pending[n:]...)
		return true
	}
	// the prompt is echoed before the first new token: check first what
	// Generate would refuse, so an error is never printed after it
	if len(prompt) == 0 {
		return errors.New("generate: empty prompt (a model needs at least one token to continue)")
	}
	if ctx := m.ContextLength(); ctx > 0 && len(prompt) > ctx {
		return fmt.Errorf("generate: %w: %d tokens, the context is %d", generate.ErrPromptTooLong, len(prompt), ctx)
	}
	if !o.json {
		fmt.Fprint(out, o.prompt)
	}
	t0 := time.Now()
	ids, stop, err := generate.Generate(m, prompt, generate.Options{MaxNewTokens: o.maxNew, Temperature: o.temperature,
		TopK: o.topK, TopP: o.topP, Seed: o.seed, EOS: eos, Device: dev}, emit)
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	text := decodeKnown(tk, ids)
	if o.json {
		if ids == nil {
			ids = []int{}
		}
		if prompt == nil {
			prompt = []int{}
		}
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		return enc.Encode(struct {
			PromptIDs []int  `json:"prompt_ids"`
			IDs       []int  `json:"ids"`
			Text      string `json:"text"`
		}{prompt, ids, text})
	}
	out.Write(pending)
	fmt.Fprintln(out)
	note := ""
	switch stop {
	case generate.StopEOS:
		note = ", stopped at the end-of-text token"
	case generate.StopContext:
		note = fmt.Sprintf(", stopped: the sequence filled the model's context of %d tokens", m.ContextLength())
	}
	where := dev.String()
	if o.dtype != "fp32" {
		where += ", " + o.dtype
	}
	fmt.Fprintf(diag, "prompt tokens %d, new tokens %d, %.1f tokens/s (%s, %.2fs)%s\n", len(prompt), len(ids), float64(len(ids))/secs, where, secs, note)
	return nil
}

// decodeKnown is the text of ids, those the tokenizer does not have left
// out, as the tokenizers library's decode does (a model's vocabulary may
// be padded past the tokenizer's: an id there is not an error once the
// text before it has been printed).
func decodeKnown(tk *tokenizer.Tokenizer, ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if s, err := tk.Decode([]int{id}); err == nil {
			b.WriteString(s)
		}
	}
	return b.String()
}

// generationConfigFile is where transformers saves a model's generation
// settings.
const generationConfigFile = "generation_config.json"

// generationConfig is what generate reads of generation_config.json, and
// config.json's bos_token_id.
type generationConfig struct {
	eos    []int
	hasEOS bool
	bos    *int
	// the sampling settings, nil where the file has none
	doSample    *bool
	temperature *float64
	topK        *int
	topP        *float64
}

// readGenerationConfig reads dir's generation_config.json (none: no
// settings) and the bos_token_id of it or of config.json.
func readGenerationConfig(dir string) (generationConfig, error) {
	var gc generationConfig
	var raw struct {
		EOS         json.RawMessage `json:"eos_token_id"`
		BOS         *int            `json:"bos_token_id"`
		DoSample    *bool           `json:"do_sample"`
		Temperature *float64        `json:"temperature"`
		TopK        *int            `json:"top_k"`
		TopP        *float64        `json:"top_p"`
	}
	path := filepath.Join(dir, generationConfigFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return gc, fmt.Errorf("generate: %w", err)
	default:
		if err := json.Unmarshal(b, &raw); err != nil {
			return gc, fmt.Errorf("generate: %s: %w", path, err)
		}
		if len(raw.EOS) > 0 && string(raw.EOS) != "null" {
			var one int
			if json.Unmarshal(raw.EOS, &one) == nil {
				gc.eos = []int{one}
			} else if err := json.Unmarshal(raw.EOS, &gc.eos); err != nil {
				return gc, fmt.Errorf("generate: %s: eos_token_id %s is neither an id nor a list of ids", path, raw.EOS)
			}
			gc.hasEOS = true
		}
		gc.bos, gc.doSample, gc.temperature, gc.topK, gc.topP = raw.BOS, raw.DoSample, raw.Temperature, raw.TopK, raw.TopP
	}
	if gc.bos == nil { // config.json's, as transformers' GenerationConfig.from_model_config
		var c struct {
			BOS *int `json:"bos_token_id"`
		}
		if b, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil && json.Unmarshal(b, &c) == nil {
			gc.bos = c.BOS
		}
	}
	if gc.bos != nil && *gc.bos < 0 {
		return gc, fmt.Errorf("generate: bos_token_id %d is not a token id", *gc.bos)
	}
	return gc, nil
}

// apply makes gc's sampling settings o's, where no flag on the command
// line set them: do_sample false is greedy; do_sample true samples with
// the file's settings and transformers' defaults (temperature 1, top_k
// 50, top_p 1) for those it lacks; without do_sample the file's settings
// replace the flags' defaults.
func (gc generationConfig) apply(cmd *cobra.Command, o *generateOptions) {
	set := cmd.Flags().Changed
	temperature, topK, topP := gc.temperature, gc.topK, gc.topP
	if gc.doSample != nil && *gc.doSample {
		one, fifty := 1.0, 50
		temperature = cmp.Or(temperature, &one)
		topK = cmp.Or(topK, &fifty)
		topP = cmp.Or(topP, &one)
	}
	if temperature != nil && !set("temperature") {
		o.temperature = *temperature
	}
	if topK != nil && !set("top-k") {
		o.topK = *topK
	}
	if topP != nil && !set("top-p") {
		o.topP = *topP
	}
	if gc.doSample != nil && !*gc.doSample && !set("temperature") {
		o.temperature = 0
	}
}

// vocabSize is the model's vocab_size (0 if unknown).
func vocabSize(m causalLM) int {
	switch m := m.(type) {
	case *gpt2.Model:
		return m.Config.VocabSize
	case *llama.Model:
		return m.Config.VocabSize
	}
	return 0
}
