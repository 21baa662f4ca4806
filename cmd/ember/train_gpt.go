package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/emberml/ember"
	"github.com/emberml/ember/models/generate"
	"github.com/emberml/ember/models/gpt2"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/tokenizer"
	"github.com/emberml/ember/weights"
)

// gptOptions are ember train --model gpt's own flags (the shared ones,
// --batch, --lr, --weight-decay, --seed, --device, --out, --resume,
// --quiet, --limit, are trainFlags').
type gptOptions struct {
	nLayer, nHead, nEmbd, blockSize int
	maxSteps, evalInterval          int
	evalIters, warmup, sample       int
	gradClip, minLRFrac             float64
}

var gptFlags gptOptions

func init() {
	fl := trainCmd.Flags()
	g := &gptFlags
	fl.IntVar(&g.nLayer, "n-layer", 4, "gpt: transformer blocks")
	fl.IntVar(&g.nHead, "n-head", 4, "gpt: attention heads")
	fl.IntVar(&g.nEmbd, "n-embd", 128, "gpt: embedding width")
	fl.IntVar(&g.blockSize, "block-size", 128, "gpt: context length (characters)")
	fl.IntVar(&g.maxSteps, "max-steps", 1000, "gpt: optimizer steps")
	fl.IntVar(&g.evalInterval, "eval-interval", 100, "gpt: evaluate, write metrics and a checkpoint every N steps")
	fl.IntVar(&g.evalIters, "eval-iters", 20, "gpt: batches per loss estimate")
	fl.IntVar(&g.warmup, "warmup", 50, "gpt: linear warmup steps before the cosine decay")
	fl.IntVar(&g.sample, "sample", 0, "gpt: after each evaluation print a sample of N generated characters")
	fl.Float64Var(&g.gradClip, "grad-clip", 1, "gpt: clip the gradients' total norm (0: off)")
	fl.Float64Var(&g.minLRFrac, "min-lr-frac", 0.1, "gpt: the cosine decays to lr × this")
}

// textCorpus is a character-level (byte-level) data set: the bytes of the
// files, split into train and validation.
type textCorpus struct {
	train, val []byte
	files      int
}

// loadText reads path (a file, or a folder recursively: every regular file
// that is UTF-8 text without NUL bytes, skipping hidden folders and
// testdata) into a corpus: every tenth file goes to validation (a single
// file: its last tenth). limit > 0 stops after that many bytes.
func loadText(path string, limit int) (*textCorpus, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	c := &textCorpus{}
	if !st.IsDir() {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if limit > 0 && len(b) > limit {
			b = b[:limit]
		}
		cut := len(b) * 9 / 10
		c.train, c.val, c.files = b[:cut], b[cut:], 1
	} else {
		var tr, va bytes.Buffer
		n := 0
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != path && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || (limit > 0 && tr.Len()+va.Len() >= limit) {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if len(b) == 0 || bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
				return nil
			}
			if n%10 == 9 {
				va.Write(b)
			} else {
				tr.Write(b)
			}
			n++
			return nil
		})
		if err != nil {
			return nil, err
		}
		c.train, c.val, c.files = tr.Bytes(), va.Bytes(), n
	}
	if len(c.train) < 2 || len(c.val) < 2 {
		return nil, fmt.Errorf("text:%s: too little text (%d bytes to train on, %d to validate)", path, len(c.train), len(c.val))
	}
	return c, nil
}

// batch draws b windows of t+1 bytes from data: inputs [b, t] and targets
// (shifted by one) [b·t].
func batch(data []byte, b, t int, rng *rand.Rand, dev ember.Device) (x, y *ember.Tensor) {
	xs, ys := make([]int64, b*t), make([]int64, b*t)
	for i := range b {
		o := rng.IntN(len(data) - t)
		for j := range t {
			xs[i*t+j] = int64(data[o+j])
			ys[i*t+j] = int64(data[o+j+1])
		}
	}
	return ember.FromSlice(xs, ember.Shape{b, t}, ember.On(dev)), ember.FromSlice(ys, ember.Shape{b * t}, ember.On(dev))
}

// gptRow is one evaluation's line of metrics.csv.
type gptRow struct {
	step                     int
	trainLoss, valLoss, lr   float64
	seconds, tokensPerSecond float64
}

// cosineLR is the learning rate at step (0-based): linear warmup to lr,
// then a cosine to lr·minFrac at maxSteps.
func cosineLR(step, warmup, maxSteps int, lr, minFrac float64) float64 {
	if step < warmup {
		return lr * float64(step+1) / float64(warmup)
	}
	p := float64(step-warmup) / float64(max(1, maxSteps-warmup))
	return lr*minFrac + 0.5*(1+math.Cos(math.Pi*min(p, 1)))*(lr-lr*minFrac)
}

func validateGPTFlags(f trainOptions, g gptOptions) error {
	switch {
	case g.nLayer < 1 || g.nHead < 1 || g.nEmbd < 1 || g.blockSize < 1:
		return fmt.Errorf("--n-layer %d, --n-head %d, --n-embd %d, --block-size %d: want positive values", g.nLayer, g.nHead, g.nEmbd, g.blockSize)
	case g.nEmbd%g.nHead != 0:
		return fmt.Errorf("--n-embd %d is not a multiple of --n-head %d", g.nEmbd, g.nHead)
	case g.maxSteps < 1 || g.evalInterval < 1 || g.evalIters < 1 || g.warmup < 0 || g.sample < 0:
		return fmt.Errorf("--max-steps %d, --eval-interval %d, --eval-iters %d: want at least 1; --warmup %d, --sample %d: 0 or more", g.maxSteps, g.evalInterval, g.evalIters, g.warmup, g.sample)
	case f.batch < 1:
		return fmt.Errorf("--batch %d: want at least 1", f.batch)
	case !(f.lr > 0) || !(f.weightDecay >= 0) || !(g.gradClip >= 0): // (NaNs too)
		return fmt.Errorf("--lr %v must be positive, --weight-decay %v and --grad-clip %v not negative", f.lr, f.weightDecay, g.gradClip)
	case !(g.minLRFrac >= 0 && g.minLRFrac <= 1):
		return fmt.Errorf("--min-lr-frac %v: want 0 to 1 (the cosine decays to lr × it)", g.minLRFrac)
	case f.ddp:
		return fmt.Errorf("--model gpt does not support --ddp yet")
	case f.amp != "" && f.amp != "bf16" && f.amp != "fp16":
		return fmt.Errorf("--amp %q: want bf16 or fp16", f.amp)
	}
	return nil
}

// runTrainGPT is ember train --model gpt: a nanoGPT-shaped character-level
// GPT-2 (models/gpt2 with a 256-byte vocabulary) trained with AdamW
// (weight decay on the matrices only), warmup + cosine, gradient
// clipping; every --eval-interval steps it estimates the train and
// validation loss, writes metrics.csv, plot.png and a checkpoint that is
// also a Hugging Face GPT-2 folder (config.json, model.safetensors,
// vocab.json, merges.txt: ember generate --model OUT runs it), and with
// --sample prints a generated sample.
func runTrainGPT(cmd *cobra.Command) error {
	f, g := trainFlags, gptFlags
	fl := cmd.Flags()
	// the shared flags' defaults are the CNN's: the GPT's are nanoGPT's
	if !fl.Changed("lr") {
		f.lr = 1e-3
	}
	if !fl.Changed("weight-decay") {
		f.weightDecay = 0.1
	}
	if !fl.Changed("batch") {
		f.batch = 32
	}
	if err := validateGPTFlags(f, g); err != nil {
		return err
	}
	path, ok := strings.CutPrefix(f.dataset, "text:")
	if !ok {
		return fmt.Errorf("--model gpt trains on text: --dataset text:PATH (a file, or a folder read recursively), not %q", f.dataset)
	}
	dev, err := pickDevice(f.device)
	if err != nil {
		return err
	}
	out, diag := cmd.OutOrStdout(), cmd.ErrOrStderr()
	corpus, err := loadText(path, f.limit)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "text:%s: %d files, %d bytes to train on, %d to validate (byte level: vocabulary 256)\n", path, corpus.files, len(corpus.train), len(corpus.val))
	// a window is --block-size bytes and the next one: each split needs one
	if n := min(len(corpus.train), len(corpus.val)); n <= g.blockSize {
		return fmt.Errorf("text:%s: %d bytes to train on and %d to validate, but --block-size %d needs more than %d in each: use a smaller --block-size or more text",
			path, len(corpus.train), len(corpus.val), g.blockSize, g.blockSize)
	}
	ember.ManualSeed(f.seed)
	cfg := gpt2.Config{VocabSize: 256, NPositions: g.blockSize, NEmbd: g.nEmbd, NLayer: g.nLayer, NHead: g.nHead, Activation: "gelu_new", LayerNormEps: 1e-5}
	if err := cfg.Validate(); err != nil { // (New panics on it)
		return err
	}
	m := gpt2.New(cfg)
	m.To(dev)
	var decay, noDecay []optim.Param
	nParams := 0
	for _, p := range optim.ModuleParams(m) {
		nParams += p.Tensor.NumElements()
		if p.Tensor.Dim() >= 2 {
			decay = append(decay, p)
		} else {
			noDecay = append(noDecay, p)
		}
	}
	fmt.Fprintf(out, "gpt: %d layers, %d heads, %d wide, block %d: %.2fM parameters on %s; batch %d, lr %g, %d steps\n",
		g.nLayer, g.nHead, g.nEmbd, g.blockSize, float64(nParams)/1e6, dev, f.batch, f.lr, g.maxSteps)
	opts := []*optim.Adam{
		optim.NewAdamW(decay, nil, f.lr, 0.9, 0.99, 1e-8, f.weightDecay),
		optim.NewAdamW(noDecay, nil, f.lr, 0.9, 0.99, 1e-8, 0),
	}
	params := m.Parameters()
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	modelPath, optPath := filepath.Join(f.out, "model.safetensors"), filepath.Join(f.out, "optim.safetensors")
	start := 0
	var rows []gptRow
	if f.resume {
		sd, meta, err := loadWeights(modelPath)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		if meta["model"] != "gpt" {
			return fmt.Errorf("resume: %s is not a checkpoint of ember train --model gpt", modelPath)
		}
		if err := m.LoadStateDict(sd, true); err != nil {
			return fmt.Errorf("resume: %s (were the --n-* or --block-size flags changed?): %w", modelPath, err)
		}
		osd, err := weights.LoadSafetensors(optPath)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		for i, o := range opts {
			part := map[string]*ember.Tensor{}
			pre := fmt.Sprintf("group%d.", i)
			for k, v := range osd {
				if s, ok := strings.CutPrefix(k, pre); ok {
					part[s] = v
				}
			}
			if err := o.LoadStateDict(part); err != nil {
				return fmt.Errorf("resume: %s: %w", optPath, err)
			}
		}
		if start, err = strconv.Atoi(meta["step"]); err != nil || start < 0 {
			return fmt.Errorf("resume: %s has no step in its metadata (or a negative one)", modelPath)
		}
		rows, _ = readGPTMetrics(filepath.Join(f.out, "metrics.csv"))
		fmt.Fprintf(out, "resume: %s: step %d of %d\n", modelPath, start, g.maxSteps)
		if start >= g.maxSteps {
			fmt.Fprintf(out, "nothing to do: the run in %s has done %d steps (--max-steps %d)\n", f.out, start, g.maxSteps)
			return nil
		}
	}
	save := func(step int) error {
		meta := map[string]string{"model": "gpt", "dataset": f.dataset, "step": strconv.Itoa(step)}
		if err := weights.SaveSafetensorsMeta(modelPath, m.StateDict(), meta); err != nil {
			return err
		}
		osd := map[string]*ember.Tensor{}
		for i, o := range opts {
			for k, v := range o.StateDict() {
				osd[fmt.Sprintf("group%d.%s", i, k)] = v
			}
		}
		if err := weights.SaveSafetensors(optPath, osd); err != nil {
			return err
		}
		return writeGPTFolder(f.out, cfg)
	}
	rng := rand.New(rand.NewPCG(f.seed, uint64(start)))
	evalLoss := func(data []byte) float64 {
		r := rand.New(rand.NewPCG(f.seed+1, 7)) // the same batches at every evaluation
		sum := 0.0
		m.Eval()
		ember.NoGrad(func() {
			for range g.evalIters {
				x, y := batch(data, f.batch, g.blockSize, r, dev)
				logits := m.Forward(x)
				sum += nn.CrossEntropyLoss{}.Loss(logits.Reshape(-1, 256), y).Item()
			}
		})
		m.Train(true)
		return sum / float64(g.evalIters)
	}
	ctx, stop := interruptContext()
	defer stop()
	ce := nn.CrossEntropyLoss{}
	// --amp: the forward pass and the loss under Autocast (the matrix
	// products and attention in the low dtype, LayerNorm, softmax and the
	// loss in float32, the parameters and the optimizer state float32);
	// fp16 scales the loss with a GradScaler, unscaling before clipping.
	var scaler *optim.GradScaler
	forward := func(x, y *ember.Tensor) *ember.Tensor { return ce.Loss(m.Forward(x).Reshape(-1, 256), y) }
	if f.amp != "" {
		dt := ember.BFloat16
		if f.amp == "fp16" {
			dt, scaler = ember.Float16, optim.NewGradScaler()
		}
		plain := forward
		forward = func(x, y *ember.Tensor) (loss *ember.Tensor) {
			ember.Autocast(dev, dt, func() { loss = plain(x, y) })
			return loss
		}
		fmt.Fprintf(out, "amp: autocast to %v%s; evaluation in float32\n", dt, map[bool]string{true: " with a GradScaler", false: ""}[scaler != nil])
	}
	m.Train(true)
	t0 := time.Now()
	step := start
	for step < g.maxSteps {
		n := min(g.evalInterval-step%g.evalInterval, g.maxSteps-step)
		var bar *progress
		if !f.quiet {
			bar = newProgress(diag, n, fmt.Sprintf("steps %d-%d/%d", step+1, step+n, g.maxSteps))
		}
		tc := time.Now()
		lossSum := 0.0
		for i := range n {
			if ctx.Err() != nil {
				if bar != nil {
					bar.finish()
				}
				if err := save(step); err != nil {
					return err
				}
				return &exitError{code: 130, msg: fmt.Sprintf("interrupted at step %d: saved to %s (--resume continues from it)", step, modelPath)}
			}
			lr := cosineLR(step, g.warmup, g.maxSteps, f.lr, g.minLRFrac)
			for _, o := range opts {
				o.SetLR(lr)
				o.ZeroGrad()
			}
			x, y := batch(corpus.train, f.batch, g.blockSize, rng, dev)
			loss := forward(x, y)
			if scaler != nil {
				scaler.ScaleLoss(loss).Backward()
				if g.gradClip > 0 {
					for _, o := range opts {
						scaler.Unscale(o)
					}
				}
			} else {
				loss.Backward()
			}
			if g.gradClip > 0 {
				nn.ClipGradNorm(params, g.gradClip, 2)
			}
			for _, o := range opts {
				if scaler != nil {
					scaler.Step(o)
				} else {
					o.Step()
				}
			}
			if scaler != nil {
				scaler.Update()
			}
			l := loss.Item()
			lossSum += l
			step++
			if bar != nil {
				bar.add(fmt.Sprintf("loss %.4f lr %.2e %.0f tokens/s", lossSum/float64(i+1), lr,
					float64((i+1)*f.batch*g.blockSize)/time.Since(tc).Seconds()))
			}
		}
		secs := time.Since(tc).Seconds()
		if bar != nil {
			bar.finish()
		}
		row := gptRow{step, evalLoss(corpus.train), evalLoss(corpus.val), cosineLR(step-1, g.warmup, g.maxSteps, f.lr, g.minLRFrac),
			time.Since(t0).Seconds(), float64(n*f.batch*g.blockSize) / secs}
		rows = append(rows, row)
		fmt.Fprintf(out, "step %d: train loss %.4f | val loss %.4f | %.0fs, %.0f tokens/s\n", row.step, row.trainLoss, row.valLoss, row.seconds, row.tokensPerSecond)
		if err := writeGPTMetrics(filepath.Join(f.out, "metrics.csv"), rows); err != nil {
			return err
		}
		if err := writeGPTPlot(filepath.Join(f.out, "plot.png"), rows); err != nil {
			return err
		}
		if err := save(step); err != nil {
			return err
		}
		if g.sample > 0 {
			if err := printSample(out, m, dev, g.sample, f.seed+uint64(step)); err != nil {
				return err
			}
		}
	}
	return nil
}

// printSample prints n characters the model generates after "func " (its
// end, in a context shorter than 6: at least one character is generated).
// A model whose logits are NaN (a diverged run) gets a note, not an error
// that would end the run.
func printSample(w io.Writer, m *gpt2.Model, dev ember.Device, n int, seed uint64) error {
	prompt := []byte("func ")
	ctx := m.ContextLength()
	prompt = prompt[len(prompt)-max(1, min(len(prompt), ctx-1)):]
	ids := make([]int, len(prompt))
	for i, b := range prompt {
		ids[i] = int(b)
	}
	m.Eval()
	defer m.Train(true)
	// the context bounds a sample: the cache cannot pass the block size
	n = min(n, ctx-len(ids))
	got, _, err := generate.Generate(m, ids, generate.Options{MaxNewTokens: n, Temperature: 0.8, Seed: seed, Device: dev}, nil)
	if errors.Is(err, generate.ErrBadLogits) {
		fmt.Fprintf(w, "--- sample ---\n(none: %v)\n--------------\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	text := append([]byte(nil), prompt...)
	for _, id := range got {
		text = append(text, byte(id))
	}
	fmt.Fprintf(w, "--- sample ---\n%s\n--------------\n", strings.ToValidUTF8(string(text), "\uFFFD"))
	return nil
}

// writeGPTFolder writes config.json, vocab.json and merges.txt next to
// model.safetensors, making the run folder a Hugging Face GPT-2 folder: a
// byte-level BPE with no merges is the byte (character) tokenizer.
func writeGPTFolder(dir string, c gpt2.Config) error {
	tied := true
	c.TieWordEmbeddings = &tied
	cfg := map[string]any{"model_type": "gpt2", "architectures": []string{"GPT2LMHeadModel"}, "vocab_size": c.VocabSize,
		"n_positions": c.NPositions, "n_ctx": c.NPositions, "n_embd": c.NEmbd, "n_layer": c.NLayer, "n_head": c.NHead,
		"activation_function": c.Activation, "layer_norm_epsilon": c.LayerNormEps, "tie_word_embeddings": true}
	b, err := json.MarshalIndent(cfg, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	vocab := map[string]int{}
	for i := range 256 {
		vocab[tokenizer.ByteToken(byte(i))] = i
	}
	if b, err = json.Marshal(vocab); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "vocab.json"), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "merges.txt"), []byte("#version: 0.2\n"), 0o644)
}

var gptMetricsHeader = []string{"step", "train_loss", "val_loss", "lr", "seconds", "tokens_per_s"}

func writeGPTMetrics(path string, rows []gptRow) error {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 7, 64) }
	recs := make([][]string, len(rows))
	for i, r := range rows {
		recs[i] = []string{strconv.Itoa(r.step), g(r.trainLoss), g(r.valLoss), g(r.lr), g(r.seconds), g(r.tokensPerSecond)}
	}
	return writeCSV(path, gptMetricsHeader, recs)
}

func readGPTMetrics(path string) ([]gptRow, error) {
	vs, err := readCSVFloats(path, len(gptMetricsHeader))
	var rows []gptRow
	for _, v := range vs {
		rows = append(rows, gptRow{int(v[0]), v[1], v[2], v[3], v[4], v[5]})
	}
	return rows, err
}

func writeGPTPlot(path string, rows []gptRow) error {
	p := plot.New()
	p.Title.Text = "gpt training"
	p.X.Label.Text = "step"
	p.Y.Label.Text = "loss (nats/char)"
	series := func(get func(gptRow) float64) plotter.XYs {
		xy := make(plotter.XYs, 0, len(rows))
		for _, r := range rows {
			xy = appendFinite(xy, float64(r.step), get(r)) // a diverged run's NaN: a gap
		}
		return xy
	}
	train, val := series(func(r gptRow) float64 { return r.trainLoss }), series(func(r gptRow) float64 { return r.valLoss })
	if err := plotutil.AddLinePoints(p, "train loss", train, "val loss", val); err != nil {
		return err
	}
	if len(rows) > 0 {
		p.X.Min, p.X.Max = xRange(float64(rows[0].step), float64(rows[len(rows)-1].step))
	}
	if len(train)+len(val) == 0 { // nothing finite to scale the y axis by
		p.Y.Min, p.Y.Max = 0, 1
	}
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}
