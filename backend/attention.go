package backend

// Optional fused attention kernels (FlashAttention-style: the L×S matrix
// of scores is never stored). ember's ScaledDotProductAttention calls them
// where a backend implements Attender and reports the case supported, and
// builds the same op from MatMul, Softmax and elementwise kernels
// elsewhere.

// AttentionMask says what kind of mask an attention call has.
type AttentionMask uint8

const (
	// NoMask: every key takes part (apart from the causal triangle).
	NoMask AttentionMask = iota
	// BoolMask: a Bool mask, true where the key takes part.
	BoolMask
	// AddMask: a mask of the inputs' dtype added to the scaled scores.
	AddMask
)

// AttentionParams are an attention call's scale (multiplying q·k), its
// mask kind and whether it is causal: query i sees keys j ≤ i (the
// top-left aligned lower triangle of the L×S matrix, as torch.tril).
type AttentionParams struct {
	Scale  float64
	Mask   AttentionMask
	Causal bool
}

// Attender is implemented by backends with fused attention kernels.
// Shapes: q [B, L, E], k [B, S, E], v [B, S, Ev], out and gout
// [B, L, Ev], lse [B, L], mask [B, L, S] (batch, row and column strides
// may be 0: a broadcast mask). q, k, v, gout and mask may have any
// strides; out, lse and the gradients are contiguous. lse has the
// accumulation dtype: Float64 for Float64 inputs, else Float32.
//
// A row whose keys are all masked out has lse = −Inf and NaN outputs
// and gradients, as the explicit softmax(q·kᵀ·scale + mask)·v gives.
type Attender interface {
	// AttentionSupported reports whether the kernels take inputs of
	// dtype dt with head dims e (q, k) and ev (v).
	AttentionSupported(dt DType, e, ev int) bool
	// AttentionForward writes out = softmax(q·kᵀ·scale + mask)·v and
	// each row's logsumexp of the scaled, masked scores into lse.
	AttentionForward(out, lse, q, k, v, mask View, p AttentionParams)
	// AttentionBackward writes the gradients of q, k and v given the
	// forward's inputs, out and lse and the output's gradient gout,
	// recomputing the scores tile by tile.
	AttentionBackward(gq, gk, gv, gout, q, k, v, mask, out, lse View, p AttentionParams)
}
