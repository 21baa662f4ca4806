package llama_test

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
	"github.com/emberml/ember/models/internal/modeltest"
	"github.com/emberml/ember/models/llama"
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
		for _, dir := range []string{"tiny"} {
			m, err := llama.Load(filepath.Join("testdata", dir), dev)
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
		m, err := llama.Load("testdata/tiny", dev)
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
	m, err := llama.Load("testdata/tiny", ember.CPU)
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
		{"unknown activation", strings.Replace(string(cfg), `"silu"`, `"gelu_sparkly"`, 1), `unknown hidden_act "gelu_sparkly"`},
		{"missing field", strings.Replace(string(cfg), `"num_attention_heads": 4,`, ``, 1), "missing num_attention_heads"},
		{"wrong shape", strings.Replace(string(cfg), `"intermediate_size": 48`, `"intermediate_size": 40`, 1), "weight model.layers.0.mlp.gate_proj.weight has shape [48 32], want [40 32]"},
		{"rope scaling", strings.Replace(string(cfg), `"rope_scaling": null`, `"rope_scaling": {"type": "dynamic", "factor": 2}`, 1), "rope_scaling map[factor:2 type:dynamic] is not supported"},
		{"rope scaling llama3 without its factors", strings.Replace(string(cfg), `"rope_scaling": null`, `"rope_scaling": {"rope_type": "llama3", "factor": 8}`, 1), `rope_scaling "llama3" needs a positive low_freq_factor`},
		{"kv heads", strings.Replace(string(cfg), `"num_key_value_heads": 2`, `"num_key_value_heads": 3`, 1), "num_attention_heads 4 is not a multiple of num_key_value_heads 3"},
		// a hostile layer count: a makeslice panic (10¹⁸) or minutes and
		// gigabytes (10⁷) before the check against the weights
		{"layers past the weights", strings.Replace(string(cfg), `"num_hidden_layers": 2`, `"num_hidden_layers": 1000000000000000000`, 1), "too few for 1000000000000000000 layers"},
		{"millions of layers", strings.Replace(string(cfg), `"num_hidden_layers": 2`, `"num_hidden_layers": 10000000`, 1), "holds 21 tensors: too few for 10000000 layers"},
		// hostile sizes: refused past 2³¹ or when negative; a head_dim of
		// 2³¹ sized the rotary table (8 GiB: the process died out of
		// memory) before the weights could refute it
		{"hidden 10¹²", strings.Replace(string(cfg), `"hidden_size": 32`, `"hidden_size": 1000000000000`, 1), "must be at most 2147483648"},
		{"head_dim 2³¹", strings.Replace(string(cfg), `"hidden_act"`, `"head_dim": 2147483648, "hidden_act"`, 1), "the head dimension 2147483648 is more than the 51616 values the weights hold"},
		{"negative kv heads", strings.Replace(string(cfg), `"num_key_value_heads": 2`, `"num_key_value_heads": -1`, 1), "may not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := writeDir(t, tc.config, weights)
			m, err := llama.Load(d, ember.CPU)
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
		if _, err := llama.Load(d, ember.CPU); err == nil || !strings.Contains(err.Error(), "no weights") {
			t.Fatalf("Load: %v", err)
		}
	})
	t.Run("misuse", func(t *testing.T) {
		m, err := llama.Load("testdata/tiny", ember.CPU)
		if err != nil {
			t.Fatal(err)
		}
		modeltest.Misuse(t, m, m.Config.VocabSize, m.Config.MaxPositionEmbeddings)
	})
	t.Run("prompt longer than the context", func(t *testing.T) {
		m, err := llama.Load("testdata/tiny", ember.CPU)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = generate.Generate(m, make([]int, 65), generate.Options{MaxNewTokens: 1}, nil)
		if err == nil || !strings.Contains(err.Error(), "65 tokens, the context is 64") {
			t.Fatalf("Generate: %v", err)
		}
		// generation that reaches the context stops there
		got, stop, err := generate.Generate(m, make([]int, 62), generate.Options{MaxNewTokens: 5}, nil)
		if err != nil || len(got) != 2 || stop != generate.StopContext {
			t.Fatalf("Generate at the context's end: %d tokens, %s, %v; want 2, context", len(got), stop, err)
		}
	})
}

// TestRopeScalingMatchesPyTorch: rope_scaling "llama3" (Llama 3.1 and
// 3.2's) and "linear" on the tiny Llama's weights: the last position's
// logits of 40 ids and the greedy continuation are those of
// models/testdata/gen_models.py's plain-torch model with transformers'
// scaled frequencies; such configs were refused.
func TestRopeScalingMatchesPyTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/rope_scaling.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		RopeScaling map[string]any `json:"rope_scaling"`
		IDs         [][]int        `json:"ids"`
		LastLogits  []float64      `json:"last_logits"`
		Greedy      []int          `json:"greedy"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile("testdata/tiny/config.json")
	if err != nil {
		t.Fatal(err)
	}
	fx := readFixture(t)
	for _, c := range cases {
		rs, _ := json.Marshal(c.RopeScaling)
		d := writeDir(t, strings.Replace(string(cfg), `"rope_scaling": null`, `"rope_scaling": `+string(rs), 1),
			map[string]string{"model.safetensors": "testdata/tiny/model.safetensors"})
		m, err := llama.Load(d, ember.CPU)
		if err != nil {
			t.Fatalf("%s: %v", rs, err)
		}
		var last []float32
		ember.NoGrad(func() {
			logits := m.Forward(idsTensor(c.IDs, ember.CPU))
			last = logits.Narrow(1, len(c.IDs[0])-1, 1).Contiguous().Float32s()
		})
		if diff := maxDiff(last, c.LastLogits); diff > 1e-4 {
			t.Errorf("%s: logits differ from PyTorch's by %g", rs, diff)
		}
		got, _, err := generate.Generate(m, fx.PromptIDs, generate.Options{MaxNewTokens: len(c.Greedy)}, nil)
		if err != nil || !slices.Equal(got, c.Greedy) {
			t.Errorf("%s: greedy %v (%v), PyTorch's %v", rs, got, err, c.Greedy)
		}
	}
}

// TestEOSIDs: eos_token_id as a number, a list (EOS its first, EOSIDs
// all) or null.
func TestEOSIDs(t *testing.T) {
	for _, c := range []struct {
		json string
		eos  int
		ids  []int
	}{
		{`7`, 7, []int{7}},
		{`[128001, 128008, 128009]`, 128001, []int{128001, 128008, 128009}},
		{`null`, -1, nil},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.json), &v); err != nil {
			t.Fatal(err)
		}
		m := &llama.Model{Config: llama.Config{EOSTokenID: v}}
		if m.EOS() != c.eos || !slices.Equal(m.EOSIDs(), c.ids) {
			t.Errorf("%s: EOS %d EOSIDs %v, want %d %v", c.json, m.EOS(), m.EOSIDs(), c.eos, c.ids)
		}
	}
}
