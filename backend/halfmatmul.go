package backend

// HalfMatMuler is implemented by backends that multiply two-byte float
// matrices into a float32 result. MatMulHalfF32 is MatMul with a and b of
// one two-byte dtype (BFloat16 or Float16) and dst of Float32
// (contiguous): each element the float32 accumulation of the products,
// unrounded, for the caller to add to (a bias) and round once, as
// PyTorch's bf16 addmm does. It returns false, having written
// nothing, for dtypes or layouts it leaves to the caller.
type HalfMatMuler interface {
	MatMulHalfF32(dst, a, b View) bool
}
