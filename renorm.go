package ember

import "fmt"

// EmbeddingRenorm is torch.embedding_renorm_: in place, under no-grad,
// each row of weight [V, D] that idx (an integer tensor of any shape)
// looks up whose normType-norm exceeds maxNorm is scaled by
// maxNorm / (norm + 1e-7). It is what torch.nn.functional.embedding does
// with max_norm before the lookup; weight's version is bumped, so a graph
// that saved it fails Backward, as in PyTorch. It returns weight.
func EmbeddingRenorm(weight, idx *Tensor, maxNorm, normType float64) *Tensor {
	const name = "embedding_renorm_"
	weight.nonNil(name)
	idx.nonNil(name)
	weight.live(name)
	idx.live(name)
	sameDevice(name, weight, idx)
	if !idx.dtype.IsInt() {
		panic(&DTypeError{Op: name, DTypes: []DType{idx.dtype}, Msg: fmt.Sprintf("Expected tensor for argument #2 'indices' to have one of the following scalar types: Long, Int; but got %s instead", torchTypeName(idx.dtype))})
	}
	if weight.Dim() != 2 {
		shapeErr(name, fmt.Sprintf("Expected 2-dimensional tensor, but got %d-dimensional tensor for argument #1 'self'", weight.Dim()), weight.shape)
	}
	if !weight.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{weight.dtype}, Msg: "embedding_renorm_ needs a floating weight"})
	}
	flat := idx.Detach().Cast(Int64).Reshape(-1)
	checkRange(name, flat, 0, weight.shape[0])
	NoGrad(func() {
		weight.inPlace(name)
		if flat.NumElements() == 0 {
			return
		}
		n, d := flat.NumElements(), weight.shape[1]
		rows := gatherRaw(weight.Detach(), 0, flat, lineIndex(flat, 0, Shape{n, d}), Shape{n, d})
		norms := rows.Norm(normType, Dims(1), KeepDim())
		scale := Where(norms.GtScalar(maxNorm), norms.AddScalar(1e-7).Reciprocal().MulScalar(maxNorm), OnesLike(norms))
		// a repeated index writes the same scaled row each time
		scaled := rows.Mul(scale)
		scatterRaw(weight, 0, lineIndex(flat, 0, scaled.shape), scaled.view(), false)
	})
	return weight
}
