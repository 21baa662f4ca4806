package nn

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/emberml/ember"
)

// TestEmbeddingMaxNormModule runs nn.Embedding with MaxNorm and NormType
// on PyTorch's F.embedding max_norm cases (testdata/gen_pad_fixtures.py):
// the output and the weight renormalised in place, and the repr.
func TestEmbeddingMaxNormModule(t *testing.T) {
	b, err := os.ReadFile("../testdata/fixtures/grad/grad_embedding_max_norm.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []struct {
		Params struct {
			MaxNorm     float64    `json:"max_norm"`
			NormType    any        `json:"norm_type"`
			PaddingIdx  *int       `json:"padding_idx"`
			WeightAfter jsonTensor `json:"weight_after"`
		} `json:"params"`
		Inputs struct {
			Weight  jsonTensor `json:"weight"`
			Indices struct {
				Shape []int   `json:"shape"`
				Ints  []int64 `json:"ints"`
			} `json:"indices"`
		} `json:"inputs"`
		Output jsonTensor `json:"output"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		w := c.Inputs.Weight.f64()
		e := NewEmbedding(w.Shape()[0], w.Shape()[1])
		if c.Params.PaddingIdx != nil {
			e = NewEmbeddingPadded(w.Shape()[0], w.Shape()[1], *c.Params.PaddingIdx)
		}
		e.Weight = w.SetRequiresGrad(true)
		e.MaxNorm = c.Params.MaxNorm
		e.NormType = math.Inf(1)
		if f, ok := c.Params.NormType.(float64); ok {
			e.NormType = f
		}
		y := e.Forward(ember.FromSlice(c.Inputs.Indices.Ints, ember.Shape(c.Inputs.Indices.Shape)))
		closeToJSON(t, e.String()+" output", y, c.Output)
		closeToJSON(t, e.String()+" weight", e.Weight, c.Params.WeightAfter)
	}
	for _, c := range []struct {
		e    *Embedding
		want string
	}{
		{func() *Embedding { e := NewEmbedding(10, 3); e.MaxNorm = 1; return e }(), "Embedding(10, 3, max_norm=1.0)"},
		{func() *Embedding { e := NewEmbeddingPadded(7, 2, 2); e.MaxNorm, e.NormType = 1, 3; return e }(), "Embedding(7, 2, padding_idx=2, max_norm=1.0, norm_type=3.0)"},
		{func() *Embedding { e := NewEmbedding(5, 3); e.MaxNorm, e.NormType = 0.8, math.Inf(1); return e }(), "Embedding(5, 3, max_norm=0.8, norm_type=inf)"},
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("repr %q, PyTorch %q", got, c.want)
		}
	}
}
