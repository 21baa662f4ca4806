package ember

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// SetMatmulPrecision sets the internal precision of float32 matrix
// products, as torch.set_float32_matmul_precision: "highest" (the default:
// float32), "high" (TF32 tensor cores on CUDA) or "medium" (bfloat16-based
// tensor cores allowed on CUDA). The CPU computes in float32 at every
// setting. It is process-wide, as in PyTorch; another value is a
// *ValueError.
func SetMatmulPrecision(p string) {
	switch p {
	case "highest":
		backend.SetMatmulPrecision(backend.PrecisionHighest)
	case "high":
		backend.SetMatmulPrecision(backend.PrecisionHigh)
	case "medium":
		backend.SetMatmulPrecision(backend.PrecisionMedium)
	default:
		panic(&ValueError{Op: "set_float32_matmul_precision", Msg: fmt.Sprintf("invalid precision %q: want highest, high or medium", p)})
	}
}

// MatmulPrecision returns the setting SetMatmulPrecision made
// (torch.get_float32_matmul_precision).
func MatmulPrecision() string {
	switch backend.CurrentMatmulPrecision() {
	case backend.PrecisionHigh:
		return "high"
	case backend.PrecisionMedium:
		return "medium"
	}
	return "highest"
}
