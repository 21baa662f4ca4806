package gpt2_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/models/generate"
	"github.com/emberml/ember/models/gpt2"
	"github.com/emberml/ember/weights"
)

// halfFixture is what models/testdata/gen_half.py records with PyTorch:
// per dtype, the logits of fixture.json's ids and the greedy continuation.
type halfFixture struct {
	IDs           [][]int `json:"ids"`
	PromptIDs     []int   `json:"prompt_ids"`
	GreedyFloat32 []int   `json:"greedy_float32"`
	ByDType       map[string]struct {
		Logits      []float64 `json:"logits"`
		LogitsShape []int     `json:"logits_shape"`
		Greedy      []int     `json:"greedy"`
		DiffFrom32  float64   `json:"max_abs_diff_from_float32"`
	}
}

func readHalfFixture(t *testing.T) halfFixture {
	t.Helper()
	b, err := os.ReadFile("testdata/tiny-bf16/fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	var f halfFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var by map[string]json.RawMessage
	json.Unmarshal(b, &by)
	f.ByDType = map[string]struct {
		Logits      []float64 `json:"logits"`
		LogitsShape []int     `json:"logits_shape"`
		Greedy      []int     `json:"greedy"`
		DiffFrom32  float64   `json:"max_abs_diff_from_float32"`
	}{}
	for _, k := range []string{"bfloat16", "float16"} {
		v := f.ByDType[k]
		if err := json.Unmarshal(by[k], &v); err != nil {
			t.Fatal(err)
		}
		f.ByDType[k] = v
	}
	return f
}

// TestHalfMatchesPyTorch loads the bf16 checkpoint in bfloat16 and float16
// (WithDType) and compares the logits with PyTorch's forward in that dtype
// and the greedy continuation with PyTorch's (which is also the float32
// model's on this fixture).
func TestHalfMatchesPyTorch(t *testing.T) {
	fx := readHalfFixture(t)
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		for _, dt := range []ember.DType{ember.BFloat16, ember.Float16} {
			want := fx.ByDType[dt.String()]
			m, err := gpt2.Load("testdata/tiny-bf16", dev, gpt2.WithDType(dt))
			if err != nil {
				t.Fatal(err)
			}
			if m.DType() != dt {
				t.Fatalf("%v: parameters in %v", dt, m.DType())
			}
			var logits *ember.Tensor
			ember.NoGrad(func() { logits = m.Forward(idsTensor(fx.IDs, dev)) })
			if logits.DType() != dt || !slices.Equal([]int(logits.Shape()), want.LogitsShape) {
				t.Fatalf("%v: logits %v %v, want %v", dt, logits.DType(), logits.Shape(), want.LogitsShape)
			}
			// the same roundings as PyTorch's: equal in bf16 here, a
			// float16 ulp or two apart (the float32 model is DiffFrom32 away)
			d := maxDiff(logits.CPU().Float32s(), want.Logits)
			t.Logf("%v on %s: max |ember - torch| %.4g (torch's %v vs float32: %.4g)", dt, dev, d, dt, want.DiffFrom32)
			if d > 0.01 {
				t.Errorf("%v on %s: logits differ from PyTorch's by %g", dt, dev, d)
			}
			got, _, err := generate.Generate(m, fx.PromptIDs, generate.Options{MaxNewTokens: len(want.Greedy), Device: dev}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want.Greedy) || !slices.Equal(got, fx.GreedyFloat32) {
				t.Errorf("%v on %s: greedy %v, PyTorch's %v (float32: %v)", dt, dev, got, want.Greedy, fx.GreedyFloat32)
			}
		}
	})
}

// TestBF16CheckpointKept: a bf16 file loaded in bf16 keeps the file's bits
// (no float32 copy); loaded by default it is widened to float32 exactly.
func TestBF16CheckpointKept(t *testing.T) {
	sd, err := weights.LoadSafetensors("testdata/tiny-bf16/model.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	file := sd["h.0.mlp.c_fc.weight"]
	if file.DType() != ember.BFloat16 {
		t.Fatalf("the fixture holds %v", file.DType())
	}
	m, err := gpt2.Load("testdata/tiny-bf16", ember.CPU, gpt2.WithDType(ember.BFloat16))
	if err != nil {
		t.Fatal(err)
	}
	w := m.StateDict()["transformer.h.0.mlp.c_fc.weight"]
	if w.DType() != ember.BFloat16 || !slices.Equal(w.Bits(), file.Bits()) {
		t.Errorf("bf16 load: %v, bits equal %v", w.DType(), slices.Equal(w.Bits(), file.Bits()))
	}
	m32, err := gpt2.Load("testdata/tiny-bf16", ember.CPU)
	if err != nil {
		t.Fatal(err)
	}
	w32 := m32.StateDict()["transformer.h.0.mlp.c_fc.weight"]
	if w32.DType() != ember.Float32 || !slices.Equal(w32.Float32s(), file.Float32s()) {
		t.Errorf("default load: %v", w32.DType())
	}
	if _, err := gpt2.Load("testdata/tiny-bf16", ember.CPU, gpt2.WithDType(ember.Int64)); err == nil {
		t.Error("WithDType(Int64) loaded")
	}
}

// TestHalfCacheMatchesRecompute: in bf16 the KV cache holds the rounded
// keys and values the full pass computes, so decoding in pieces gives the
// full pass's logits to a bf16 ulp (|logit| < 8: 0.03125).
func TestHalfCacheMatchesRecompute(t *testing.T) {
	fx := readHalfFixture(t)
	m, err := gpt2.Load("testdata/tiny-bf16", ember.CPU, gpt2.WithDType(ember.BFloat16))
	if err != nil {
		t.Fatal(err)
	}
	seq := append(slices.Clone(fx.PromptIDs), fx.GreedyFloat32...)
	ember.NoGrad(func() {
		full := m.Forward(ember.FromSlice(seq, ember.Shape{1, len(seq)})).Float32s()
		c := m.NewCache()
		var got []float32
		for _, piece := range [][2]int{{0, 5}, {5, 6}, {6, 9}, {9, len(seq)}} {
			ids := seq[piece[0]:piece[1]]
			got = append(got, m.ForwardCache(ember.FromSlice(ids, ember.Shape{1, len(ids)}), c).Float32s()...)
		}
		want := make([]float64, len(full))
		for i, v := range full {
			want[i] = float64(v)
		}
		if d := maxDiff(got, want); d > 0.03125 {
			t.Errorf("cached bf16 decoding differs from recomputing by %g", d)
		}
	})
}
