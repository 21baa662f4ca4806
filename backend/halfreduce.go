package backend

// HalfReducer is implemented by backends that reduce bfloat16 and float16
// data without a float32 copy of the whole operand. ReduceHalf is Reduce
// with src of BFloat16 or Float16 and dst of Float32 (src's rank, size 1
// over the reduced dims): the reduction is accumulated in float32 (sums as
// the backend's float32 Sum accumulates) and written unrounded, for the
// caller to round once. op is Sum, Prod, Max or Min. It returns false,
// having written nothing, for the layouts or ops it leaves to the caller's
// float32 copy.
type HalfReducer interface {
	ReduceHalf(op ReduceOp, dst, src View) bool
}
