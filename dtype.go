package ember

import "github.com/emberml/ember/backend"

// DType is a tensor's element type.
type DType = backend.DType

// The element types. Float32 is the default floating type, Int64 the default integer type.
const (
	Float32 = backend.Float32
	Float64 = backend.Float64
	Int64   = backend.Int64
	Int32   = backend.Int32
	Bool    = backend.Bool
	// BFloat16 and Float16 are two-byte floats (torch.bfloat16, torch.float16):
	// ops compute in float32 and round back once, reductions accumulate in float32.
	BFloat16 = backend.BFloat16
	Float16  = backend.Float16
)

// PromoteTypes returns the dtype that two tensors of types a and b combine
// into, as torch.promote_types.
func PromoteTypes(a, b DType) DType { return backend.Promote(a, b) }

// operand kinds for result-type computation (torch.result_type): tensors
// with dimensions outrank zero-dimensional tensors, which outrank Go scalars.
type operand struct {
	dt     DType
	zeroD  bool
	scalar bool
}

func resultType(ops ...operand) DType {
	var dims, zeros, scal DType
	var hasDims, hasZeros, hasScal bool
	fold := func(has *bool, acc *DType, dt DType) {
		if !*has {
			*acc, *has = dt, true
		} else {
			*acc = backend.Promote(*acc, dt)
		}
	}
	for _, o := range ops {
		switch {
		case o.scalar:
			fold(&hasScal, &scal, o.dt)
		case o.zeroD:
			fold(&hasZeros, &zeros, o.dt)
		default:
			fold(&hasDims, &dims, o.dt)
		}
	}
	res, has := dims, hasDims
	if hasZeros && (!has || zeros.Category() > res.Category()) {
		res, has = zeros, true
	}
	if hasScal && (!has || scal.Category() > res.Category()) {
		// A scalar only lifts the category, to that category's default type.
		switch scal.Category() {
		case 2:
			res = Float32
		case 1:
			res = Int64
		default:
			res = Bool
		}
		has = true
	}
	return res
}
