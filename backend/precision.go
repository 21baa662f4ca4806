package backend

import "sync/atomic"

// MatmulPrecision is torch.set_float32_matmul_precision's setting for
// float32 matrix products: PrecisionHighest computes in float32,
// PrecisionHigh lets CUDA use TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32),
// PrecisionMedium also allows bfloat16-based ones
// (CUBLAS_COMPUTE_32F_FAST_16BF). The CPU always computes in float32.
type MatmulPrecision int32

// The precisions.
const (
	PrecisionHighest MatmulPrecision = iota
	PrecisionHigh
	PrecisionMedium
)

var matmulPrecision atomic.Int32

// SetMatmulPrecision sets the process-wide float32 matmul precision.
func SetMatmulPrecision(p MatmulPrecision) { matmulPrecision.Store(int32(p)) }

// CurrentMatmulPrecision is the process-wide float32 matmul precision.
func CurrentMatmulPrecision() MatmulPrecision { return MatmulPrecision(matmulPrecision.Load()) }
