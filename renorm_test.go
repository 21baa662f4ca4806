package ember

import (
	"math"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

// TestGradFixturesEmbeddingMaxNorm: embedding with max_norm (2-, 1-, ∞-
// and 3-norms, repeated indices, a row under the limit, padding_idx) as
// EmbeddingRenorm then the lookup, against PyTorch's output, weight
// gradient and renormalised weight (testdata/gen_pad_fixtures.py).
func TestGradFixturesEmbeddingMaxNorm(t *testing.T) {
	var after fixTensor
	runGradFixtures(t, "embedding_max_norm", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var maxNorm float64
		var normType any
		var pad *int
		c.param(t, "max_norm", &maxNorm)
		c.param(t, "norm_type", &normType)
		c.param(t, "padding_idx", &pad)
		c.param(t, "weight_after", &after)
		p := math.Inf(1)
		if f, ok := normType.(float64); ok {
			p = f
		}
		EmbeddingRenorm(in["weight"], in["indices"], maxNorm, p)
		if pad != nil {
			return EmbeddingPadded(in["indices"], in["weight"], *pad)
		}
		return Embedding(in["indices"], in["weight"])
	}, func(t *testing.T, c gradFixture, in map[string]*Tensor) {
		closeTo(t, "weight after renorm", in["weight"], after)
	})
}

// TestEmbeddingRenormErrors: torch.embedding_renorm_'s argument checks, an
// empty index, and the version bump that makes a graph which saved the
// weight refuse Backward (PyTorch: "modified by an inplace operation").
func TestEmbeddingRenormErrors(t *testing.T) {
	for _, dev := range append(testDevices(), Meta) {
		w := Ones(Shape{3, 2}, On(dev))
		testenv.Raises[*DTypeError](t, "float indices", func() { EmbeddingRenorm(w, Zeros(Shape{1}, On(dev)), 1, 2) })
		testenv.Raises[*ShapeError](t, "3-D weight", func() { EmbeddingRenorm(Ones(Shape{3, 2, 1}, On(dev)), Zeros(Shape{1}, On(dev), Dtype(Int64)), 1, 2) })
		testenv.Raises[*DTypeError](t, "int weight", func() { EmbeddingRenorm(w.Cast(Int64), Zeros(Shape{1}, On(dev), Dtype(Int64)), 1, 2) })
		if dev != Meta {
			testenv.Raises[*IndexError](t, "index past the rows", func() {
				EmbeddingRenorm(w, FromSlice([]int64{0, 5}, Shape{2}, On(dev)), 1, 2).Float64s() // (a device's check is read at the sync)
			})
		}
		EmbeddingRenorm(w, Zeros(Shape{0}, On(dev), Dtype(Int64)), 1, 2)
	}
	// hand-worked: row 0 (3, 4) has 2-norm 5 → (3, 4)·1/(5 + 1e-7); row 1
	// (0.3, 0.4) stays
	w := FromSlice([]float64{3, 4, 0.3, 0.4}, Shape{2, 2}).SetRequiresGrad(true)
	EmbeddingRenorm(w, FromSlice([]int64{1, 0, 0}, Shape{3}), 1, 2)
	wantGrad(t, "renormalised rows", w, []float64{3 / (5 + 1e-7), 4 / (5 + 1e-7), 0.3, 0.4})
	y := w.Mul(w).Sum()
	EmbeddingRenorm(w, FromSlice([]int64{0}, Shape{1}), 0.5, 2)
	testenv.Raises[*AutogradError](t, "weight saved then renormalised", func() { y.Backward() })
}

// TestEmbeddingRenormOnEmulatedCUDA reruns the max_norm fixtures and
// checks with an emulated cuda:0.
func TestEmbeddingRenormOnEmulatedCUDA(t *testing.T) {
	onEmulatedCUDA(t)
	TestGradFixturesEmbeddingMaxNorm(t)
	TestEmbeddingRenormErrors(t)
}
