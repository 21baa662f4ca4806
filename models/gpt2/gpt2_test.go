package gpt2_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
	"github.com/emberml/ember/models/generate"
	"github.com/emberml/ember/models/gpt2"
	"github.com/emberml/ember/models/internal/modeltest"
)

// fixture is what models/testdata/gen_models.py records with PyTorch.
type fixture struct {
	IDs         [][]int   `json:"ids"`
	Logits      []float64 `json:"logits"`
	LogitsShape []int     `json:"logits_shape"`
	Prompt      string    `json:"prompt"`
	PromptIDs   []int     `json:"prompt_ids"`
	Greedy      []int     `json:"greedy"`
}

func readFixture(t *testing.T) fixture {
	t.Helper()
	b, err := os.ReadFile("testdata/tiny/fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func idsTensor(ids [][]int, dev ember.Device) *ember.Tensor {
	var flat []int
	for _, r := range ids {
		flat = append(flat, r...)
	}
	return ember.FromSlice(flat, ember.Shape{len(ids), len(ids[0])}, ember.On(dev))
}

func maxDiff(got []float32, want []float64) float64 {
	d := 0.0
	for i := range want {
		d = max(d, math.Abs(float64(got[i])-want[i]))
	}
	return d
}

// devices are the CPU and, when the g++ emulator can be built, an
// emulated cuda:0 (the CUDA backend's kernels run on the CPU).
func eachDevice(t *testing.T, f func(t *testing.T, dev ember.Device)) {
	t.Run("cpu", func(t *testing.T) { f(t, ember.CPU) })
	t.Run("cuda", func(t *testing.T) {
		if testing.Short() {
			t.Skip("emulated CUDA: in the full suite")
		}
		if ember.DeviceCount() == 0 {
			restore := cudatest.Use(t)
			defer restore()
		}
		f(t, ember.CUDA(0))
	})
}

func TestLogitsMatchPyTorch(t *testing.T) {
	fx := readFixture(t)
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		for _, dir := range []string{"tiny", "tiny-sharded", "tiny-bin"} {
			m, err := gpt2.Load(filepath.Join("testdata", dir), dev)
			if err != nil {
				t.Fatal(err)
			}
			var logits *ember.Tensor
			ember.NoGrad(func() { logits = m.Forward(idsTensor(fx.IDs, dev)) })
			if !slices.Equal([]int(logits.Shape()), fx.LogitsShape) {
				t.Fatalf("%s: logits shape %v, want %v", dir, logits.Shape(), fx.LogitsShape)
			}
			if d := maxDiff(logits.CPU().Float32s(), fx.Logits); d > 1e-4 {
				t.Errorf("%s on %s: logits differ from PyTorch's by %g", dir, dev, d)
			}
		}
	})
}

func TestGreedyMatchesPyTorch(t *testing.T) {
	fx := readFixture(t)
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		m, err := gpt2.Load("testdata/tiny", dev)
		if err != nil {
			t.Fatal(err)
		}
		got, stop, err := generate.Generate(m, fx.PromptIDs, generate.Options{MaxNewTokens: len(fx.Greedy), Device: dev}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, fx.Greedy) || stop != generate.StopMaxTokens {
			t.Errorf("greedy continuation %v (%s), PyTorch's %v", got, stop, fx.Greedy)
		}
	})
}

// TestCacheMatchesRecompute decodes with the KV cache in pieces (a prompt,
// single tokens, a chunk of three) and compares every position's logits
// with one full forward pass.
func TestCacheMatchesRecompute(t *testing.T) {
	fx := readFixture(t)
	m, err := gpt2.Load("testdata/tiny", ember.CPU)
	if err != nil {
		t.Fatal(err)
	}
	seq := append(slices.Clone(fx.PromptIDs), fx.Greedy...)
	ember.NoGrad(func() {
		full := m.Forward(ember.FromSlice(seq, ember.Shape{1, len(seq)})).Float32s()
		c := m.NewCache()
		var got []float32
		for _, piece := range [][2]int{{0, 5}, {5, 6}, {6, 7}, {7, 10}, {10, 11}, {11, len(seq)}} {
			ids := seq[piece[0]:piece[1]]
			got = append(got, m.ForwardCache(ember.FromSlice(ids, ember.Shape{1, len(ids)}), c).Float32s()...)
		}
		if c.Len() != len(seq) {
			t.Fatalf("cache holds %d positions, want %d", c.Len(), len(seq))
		}
		want := make([]float64, len(full))
		for i, v := range full {
			want[i] = float64(v)
		}
		if d := maxDiff(got, want); d > 1e-5 {
			t.Errorf("cached decoding differs from recomputing by %g", d)
		}
	})
}

func writeDir(t *testing.T, config string, files map[string]string) string {
	t.Helper()
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "config.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func TestBadInput(t *testing.T) {
	cfg, err := os.ReadFile("testdata/tiny/config.json")
	if err != nil {
		t.Fatal(err)
	}
	weights := map[string]string{"model.safetensors": "testdata/tiny/model.safetensors"}
	for _, tc := range []struct {
		name, config string
		want         string
	}{
		{"unknown activation", strings.Replace(string(cfg), `"gelu_new"`, `"gelu_sparkly"`, 1), `unknown activation_function "gelu_sparkly"`},
		{"missing field", strings.Replace(string(cfg), `"n_head": 4,`, ``, 1), "missing n_head"},
		{"wrong shape", strings.Replace(string(cfg), `"n_positions": 32`, `"n_positions": 16`, 1), "weight transformer.wpe.weight has shape [32 32], want [16 32]"},
		// the scores would silently lack their 1/√d
		{"unscaled attention", strings.Replace(string(cfg), `"n_head": 4,`, `"n_head": 4, "scale_attn_weights": false,`, 1), "scale_attn_weights false"},
		{"untied head missing", strings.Replace(string(cfg), `"tie_word_embeddings": true`, `"tie_word_embeddings": false`, 1), "missing weight lm_head.weight"},
		// a hostile layer count: minutes and gigabytes before the check
		// against the weights
		{"millions of layers", strings.Replace(string(cfg), `"n_layer": 2`, `"n_layer": 10000000`, 1), "holds 28 tensors: too few for 10000000 layers"},
		// hostile sizes: refused past 2³¹; at 2³¹ the shapes computed from
		// them ([n_embd, 3·n_embd] has 1.4·10¹⁹ elements) were a
		// ShapeError panic out of Load
		{"n_embd 10¹²", strings.Replace(string(cfg), `"n_embd": 32`, `"n_embd": 1000000000000`, 1), "must be at most 2147483648"},
		{"n_embd 2³¹", strings.Replace(string(cfg), `"n_embd": 32`, `"n_embd": 2147483648`, 1), "weight transformer.h.0.attn.c_attn.weight has shape [32 96], want [2147483648 6442450944]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := writeDir(t, tc.config, weights)
			m, err := gpt2.Load(d, ember.CPU)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v, want an error containing %q", err, tc.want)
			}
			if m != nil {
				t.Error("a model came back with the error")
			}
		})
	}
	t.Run("no weights", func(t *testing.T) {
		d := writeDir(t, string(cfg), nil)
		if _, err := gpt2.Load(d, ember.CPU); err == nil || !strings.Contains(err.Error(), "no weights") {
			t.Fatalf("Load: %v", err)
		}
	})
	t.Run("misuse", func(t *testing.T) {
		m, err := gpt2.Load("testdata/tiny", ember.CPU)
		if err != nil {
			t.Fatal(err)
		}
		modeltest.Misuse(t, m, m.Config.VocabSize, m.Config.NPositions)
	})
	t.Run("prompt longer than the context", func(t *testing.T) {
		m, err := gpt2.Load("testdata/tiny", ember.CPU)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = generate.Generate(m, make([]int, 33), generate.Options{MaxNewTokens: 1}, nil)
		if err == nil || !strings.Contains(err.Error(), "33 tokens, the context is 32") {
			t.Fatalf("Generate: %v", err)
		}
		// generation that reaches the context stops there
		got, stop, err := generate.Generate(m, make([]int, 30), generate.Options{MaxNewTokens: 5}, nil)
		if err != nil || len(got) != 2 || stop != generate.StopContext {
			t.Fatalf("Generate at the context's end: %d tokens, %s, %v; want 2, context", len(got), stop, err)
		}
	})
}

// TestEOSIDs: a config.json's eos_token_id as a number, a list (which
// failed to load) or null; entries that are not ids are left out.
func TestEOSIDs(t *testing.T) {
	for _, c := range []struct {
		json string
		eos  int
		ids  []int
	}{
		{`{"eos_token_id": 50256}`, 50256, []int{50256}},
		{`{"eos_token_id": [50256, 7]}`, 50256, []int{50256, 7}},
		{`{"eos_token_id": [-1, 2.5, "x", 3]}`, 3, []int{3}},
		{`{"eos_token_id": null}`, -1, nil},
		{`{}`, -1, nil},
	} {
		var cfg gpt2.Config
		if err := json.Unmarshal([]byte(c.json), &cfg); err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		m := &gpt2.Model{Config: cfg}
		if m.EOS() != c.eos || !slices.Equal(m.EOSIDs(), c.ids) {
			t.Errorf("%s: EOS %d EOSIDs %v, want %d %v", c.json, m.EOS(), m.EOSIDs(), c.eos, c.ids)
		}
	}
}
