package ember

import "github.com/emberml/ember/backend"

// autocastState is one goroutine's autocast setting: which device type it
// applies to and the low-precision dtype (off: none).
type autocastState struct {
	on  bool
	dev backend.DeviceType
	dt  DType
}

var autocastSt local[autocastState]

// Autocast runs f with automatic mixed precision for tensors on dev's
// device type, as torch.autocast(device_type, dtype): matrix products
// (MatMul, Bmm, Baddbmm, Linear, Conv2d, ScaledDotProductAttention) cast
// their float32 and two-byte inputs to dt (BFloat16 or Float16) and
// return dt, float64 inputs keeping their dtype (as PyTorch's, which
// casts only floating tensors that are not double); Softmax,
// LogSoftmax, Sum, LayerNorm and the losses run in Float32; other ops take
// their inputs as they come, mixed inputs promoting to the widest. Casts
// are differentiable, so gradients reach float32 parameters as float32;
// a cast no autograd graph keeps is released when its op returns.
// Autocast nests (the innermost setting holds) and, as NoGrad, applies to
// the calling goroutine only: a goroutine f starts runs without it unless
// it calls Autocast itself. Any other dt is a *DTypeError.
func Autocast(dev Device, dt DType, f func()) {
	if !dt.IsHalf() {
		panic(&DTypeError{Op: "autocast", DTypes: []DType{dt}, Msg: "autocast's dtype must be BFloat16 or Float16"})
	}
	autocastSt.with("autocast", autocastState{on: true, dev: dev.Type, dt: dt}, f)
}

// AutocastDisabled runs f with autocast off on the calling goroutine, also
// inside Autocast (torch.autocast(..., enabled=False)).
func AutocastDisabled(f func()) { autocastSt.with("autocast", autocastState{}, f) }

// AutocastDType returns the low-precision dtype autocast applies to tensors
// on dev on the calling goroutine, and whether it is on.
func AutocastDType(dev Device) (DType, bool) {
	s, ok := autocastSt.get()
	if !ok || !s.on || s.dev != dev.Type {
		return 0, false
	}
	return s.dt, true
}

// autocastLow returns the low dtype when autocast applies to t's device and
// some eligible operand (autocastEligible) is not already in it.
func autocastLow(ts ...*Tensor) (DType, bool) {
	if len(ts) == 0 || ts[0] == nil {
		return 0, false
	}
	dt, on := AutocastDType(ts[0].dev)
	if !on {
		return 0, false
	}
	for _, t := range ts {
		if autocastEligible(t) && t.dtype != dt {
			return dt, true
		}
	}
	return 0, false
}

// autocastEligible is PyTorch's is_eligible: autocast casts floating
// tensors other than float64 (float32 and the two-byte floats); a
// float64 tensor keeps its dtype, inside the low-precision ops too.
func autocastEligible(t *Tensor) bool {
	return t != nil && t.dtype.IsFloat() && t.dtype != Float64
}

// autocastCast is autocast's cast of an operand to dt: eligible tensors
// (autocastEligible) are cast, others (nil, integers, float64) pass as
// they are.
func autocastCast(t *Tensor, dt DType) *Tensor {
	if !autocastEligible(t) {
		return t
	}
	return t.Cast(dt)
}

// releaseCasts returns out, an op's result, after releasing the casts the
// op made of its operands (casts[i] of orig[i]; nil or orig[i] itself when
// none was made) where nothing can reach them any more: out is outside
// autograd (no node saved them) and shares no storage with them, and
// neither does any operand.
// PyTorch's reference counting frees such temporaries when the op
// returns; without this they would wait for the garbage collector, and a
// loop under Autocast would keep taking fresh memory for its weights'
// casts (a ResNet-18 forward casts 47 MB of float32 weights).
func releaseCasts(out *Tensor, orig, casts []*Tensor) *Tensor {
	if out == nil || out.ag != nil {
		return out
	}
	for _, c := range casts {
		if c != nil && c.ag == nil && c.st != out.st && !sharesStorage(c, orig) {
			c.Release()
		}
	}
	return out
}

// sharesStorage reports whether t shares its storage with one of ts (a
// cast that is its operand itself, or an op that handed an operand back).
func sharesStorage(t *Tensor, ts []*Tensor) bool {
	for _, o := range ts {
		if o != nil && o.st == t.st {
			return true
		}
	}
	return false
}

// castFloat casts a floating t (nil stays nil) to dt.
func castFloat(t *Tensor, dt DType) *Tensor {
	if t == nil || !t.dtype.IsFloat() {
		return t
	}
	return t.Cast(dt)
}

// onCasts returns f's result on autocast's casts of ts to dt
// (autocastCast: nil, non-floating and float64 ones as they are), the
// casts released where nothing needs them (releaseCasts).
func onCasts(dt DType, ts []*Tensor, f func(cs []*Tensor) *Tensor) *Tensor {
	return castsThen(autocastCast, dt, ts, f)
}

// castsThen returns f's result on cast(t, dt) of each of ts, the casts
// released where nothing needs them (releaseCasts).
func castsThen(cast func(*Tensor, DType) *Tensor, dt DType, ts []*Tensor, f func(cs []*Tensor) *Tensor) *Tensor {
	cs := make([]*Tensor, len(ts))
	for i, t := range ts {
		cs[i] = cast(t, dt)
	}
	return releaseCasts(f(cs), ts, cs)
}

// inFloat32 runs f on the float32 casts of ts (castFloat) with autocast off
// and rounds its result to dt once: the two-byte floats' path through the
// kernels that only exist for float32/float64 (pooling, batch norm,
// convolution, attention). f's float32 result is released too where
// nothing needs it.
func inFloat32(dt DType, ts []*Tensor, f func(cs []*Tensor) *Tensor) *Tensor {
	var out *Tensor
	AutocastDisabled(func() {
		r := castsThen(castFloat, Float32, ts, f)
		out = releaseCasts(r.Cast(dt), ts, []*Tensor{r})
	})
	return out
}

// autocastF32 reports whether autocast's float32 policy applies to t: it is
// on for t's device and t is a two-byte float.
func autocastF32(t *Tensor) bool {
	if t == nil || !t.dtype.IsHalf() {
		return false
	}
	_, on := AutocastDType(t.dev)
	return on
}
