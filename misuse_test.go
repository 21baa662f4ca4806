package ember

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

// tryTyped runs f through Try, failing the test when it does not panic or
// panics with anything but an error of want's type (a runtime.Error in
// particular).
func tryTyped[E error](t *testing.T, name string, f func()) {
	t.Helper()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("escaped ember.Try: %T %v", r, r)
				if re, ok := r.(runtime.Error); ok {
					err = fmt.Errorf("runtime.Error escaped ember.Try: %v", re)
				}
			}
		}()
		if e := Try(f); e != nil {
			err = e
		} else {
			err = errors.New("no error")
		}
	}()
	var want E
	if !errors.As(err, &want) {
		t.Errorf("%s: got %v, want %T", name, err, want)
	}
}

// TestMisuseIsTyped enumerates misuse of the public API (shape, dtype,
// device, index, size, values) and checks that each reaches the caller as a
// typed error through Try, never as a runtime error or a fatal allocation.
func TestMisuseIsTyped(t *testing.T) {
	x := Ones(Shape{2, 3})
	i64 := func(v ...int64) *Tensor { return FromSlice(v, nil) }
	shape := map[string]func(){
		"zeros overflow":         func() { Zeros(Shape{1<<62 + 1, 4}) },
		"zeros overflow 2":       func() { Zeros(Shape{1 << 31, 1 << 31, 1 << 31}) },
		"zeros negative":         func() { Zeros(Shape{2, -1}) },
		"from_slice negative":    func() { FromSlice([]float32{1, 2, 3, 4, 5, 6}, Shape{-2, -3}) },
		"from_slice wrong count": func() { FromSlice([]float32{1, 2}, Shape{3}) },
		"empty negative":         func() { Empty(Shape{-1}) },
		"full overflow":          func() { Full(Shape{1 << 40, 1 << 40}, 1) },
		"randn overflow":         func() { Randn(Shape{1 << 62, 2}) },
		"eye negative":           func() { Eye(-3) },
		"eye overflow":           func() { Eye(1 << 31) },
		"arange huge":            func() { Arange(0, 1e300, 1) },
		"arange 2^60":            func() { Arange(0, 1<<60, 1) },
		"arange sign":            func() { Arange(0, 10, -1) },
		"arange step 0":          func() { Arange(0, 10, 0) },
		"linspace negative":      func() { Linspace(0, 1, -1) },
		"expand negative":        func() { Ones(Shape{1, 3}).Expand(-2, 3) },
		"expand negative lead":   func() { Ones(Shape{3}).Expand(-2, 3) },
		"expand overflow":        func() { Ones(Shape{1, 1}).Expand(1<<40, 1<<40) },
		"expand mismatch":        func() { x.Expand(4, 3) },
		"view overflow":          func() { Ones(Shape{4}).View(1<<32, 1<<32, 4) },
		"view negative":          func() { x.View(-2, -3) },
		"view wrong size":        func() { x.View(4) },
		"reshape overflow":       func() { x.Reshape(1<<62, 1<<62, 0, -1) },
		"index too many":         func() { x.Index(0, 0, 0) },
		"index 0-d":              func() { Scalar(1).Index(0) },
		"index out of range":     func() { x.Index(2) },
		"select dim":             func() { x.Select(2, 0) },
		"narrow past end":        func() { x.Narrow(1, 2, 2) },
		"slice step":             func() { x.Slice(1, 0, 3, 0) },
		"narrow start overflow":  func() { x.Narrow(0, 1, 1).Narrow(0, math.MaxInt, 1) },
		"narrow length overflow": func() { x.Narrow(1, 1, math.MaxInt) },
		"narrow start below":     func() { x.Narrow(1, -10, 1) },
		"narrow 0-d":             func() { Scalar(1).Narrow(0, 0, 1) },
		"slice 0-d":              func() { Scalar(1).Slice(0, 0, 1, 1) },
		"select 0-d":             func() { Scalar(2).Select(0, 0) },
		"size 0-d":               func() { Scalar(2).Size(0) },
		"roll 0-d dim":           func() { Scalar(2).Roll([]int{1}, []int{0}) },
		"cat 0-d":                func() { Cat([]*Tensor{Scalar(2), Scalar(2)}, 0) },
		"eye -1":                 func() { Eye(-1) },
		"linear bias":            func() { Linear(x, Ones(Shape{4, 3}), Ones(Shape{3})) },
		"max_pool2d kernel -1":   func() { MaxPool2d(Ones(Shape{1, 1, 4, 4}), [2]int{-1, -1}, [2]int{1, 1}, [2]int{}) },
		"one_hot huge index":     func() { OneHot(i64(math.MaxInt64), -1) },
		"conv2d no filters": func() {
			Conv2d(Ones(Shape{1, 1, 4, 4}), Ones(Shape{0, 1, 1, 1}), nil, [2]int{1, 1}, [2]int{}, [2]int{1, 1}, 1)
		},
		"conv2d no input channels": func() { // was a string panic from the GEMM
			Conv2d(Ones(Shape{1, 0, 4, 4}), Ones(Shape{2, 0, 3, 3}), nil, [2]int{1, 1}, [2]int{}, [2]int{1, 1}, 1)
		},
		"adaptive_avg_pool2d empty plane": func() { AdaptiveAvgPool2d(Ones(Shape{1, 1, 0, 2}), 1, 1) },
		"max_pool2d empty plane": func() { // padding made a window over nothing: a slice out of range
			MaxPool2d(Ones(Shape{1, 2, 0, 4}), [2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1})
		},
		"avg_pool2d empty plane": func() { AvgPool2d(Ones(Shape{1, 2, 4, 0}), [2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, true) },
		"conv2d empty plane": func() { // a string panic from the GEMM
			Conv2d(Ones(Shape{1, 2, 0, 4}), Ones(Shape{2, 2, 1, 1}), nil, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 1)
		},
		"max_pool2d huge padding": func() { // padding*2 overflowed past the check: a slice out of range
			MaxPool2d(Ones(Shape{1, 2, 4, 4}), [2]int{1, 1}, [2]int{1, 1}, [2]int{math.MaxInt, math.MaxInt})
		},
		"conv2d empty kernel": func() {
			Conv2d(Ones(Shape{1, 1, 4, 4}), Ones(Shape{2, 1, 0, 1}), nil, [2]int{1, 1}, [2]int{}, [2]int{1, 1}, 1)
		},
		"split 0-d":                  func() { Scalar(2).Split(1, 0) },
		"chunk 0-d":                  func() { Scalar(2).Chunk(2, 0) },
		"size dim":                   func() { x.Size(5) },
		"transpose dim":              func() { x.Transpose(0, 3) },
		"permute":                    func() { x.Permute(0, 0) },
		"squeeze dim":                func() { x.Squeeze(4) },
		"unsqueeze dim":              func() { x.Unsqueeze(5) },
		"cat empty":                  func() { Cat(nil, 0) },
		"cat shapes":                 func() { Cat([]*Tensor{x, Ones(Shape{2, 4})}, 0) },
		"stack shapes":               func() { Stack([]*Tensor{x, Ones(Shape{3, 2})}, 0) },
		"split 0":                    func() { x.Split(0, 0) },
		"chunk 0":                    func() { x.Chunk(0, 0) },
		"broadcast":                  func() { x.Add(Ones(Shape{4})) },
		"matmul":                     func() { x.MatMul(x) },
		"item":                       func() { x.Item() },
		"sum dim":                    func() { x.Sum(Dims(3)) },
		"softmax dim":                func() { x.Softmax(2) },
		"as_strided past storage":    func() { x.AsStrided(Shape{2, 3}, []int{3, 1}, 1) },
		"as_strided negative stride": func() { x.AsStrided(Shape{2}, []int{-1}, 2) },
		"as_strided rank":            func() { x.AsStrided(Shape{2}, []int{1, 1}, 0) },
		"as_strided stride overflow": func() { x.AsStrided(Shape{2, 2}, []int{1 << 62, 1}, 0) },
		"cross_entropy target shape": func() { CrossEntropy(x, i64(0, 1, 2), 0, "mean") },
		"cross_entropy smoothing":    func() { CrossEntropy(x, i64(0, 1), 2, "mean") },
		"cross_entropy 0-d logits":   func() { CrossEntropy(Scalar(1), Scalar(0, Dtype(Int64)), 0, "mean") }, // was an index out of range
		"nll_loss 0-d input":         func() { NLLLoss(Scalar(1), Scalar(0, Dtype(Int64)), "mean") },
	}
	for name, f := range shape {
		tryTyped[*ShapeError](t, name, f)
	}
	dtype := map[string]func(){
		"cast invalid":         func() { x.Cast(DType(9)) },
		"zeros invalid":        func() { Zeros(Shape{2}, Dtype(DType(7))) },
		"randn int":            func() { Randn(Shape{2}, Dtype(Int64)) },
		"sub bool":             func() { Ones(Shape{2}, Dtype(Bool)).Sub(Ones(Shape{2}, Dtype(Bool))) },
		"nll float target":     func() { NLLLoss(x, Ones(Shape{2}), "mean") },
		"from_slice cast bad":  func() { FromSlice([]float32{1}, nil, Dtype(DType(200))) },
		"full invalid":         func() { Full(Shape{1}, 1, Dtype(DType(15))) },
		"arange invalid dtype": func() { Arange(0, 3, 1, Dtype(DType(16))) },
		"softmax int":          func() { i64(1, 2).Softmax(0) },
		"log_softmax int":      func() { i64(1, 2).LogSoftmax(0) },
		"set_grad dtype":       func() { Ones(Shape{2}, WithGrad()).SetGrad(Ones(Shape{2}, Dtype(Int64))) },
	}
	for name, f := range dtype {
		tryTyped[*DTypeError](t, name, f)
	}
	oom := map[string]func(){
		"zeros 8 PiB":   func() { Zeros(Shape{1 << 50}) },
		"randn 4 PiB":   func() { Randn(Shape{1 << 40, 1 << 10}) },
		"eye 2^50":      func() { Eye(1 << 25) },
		"arange 2^50":   func() { Arange(0, 1<<50, 1) },
		"empty 2^48":    func() { Empty(Shape{1 << 48}, Dtype(Float64)) },
		"ones int 2^47": func() { Ones(Shape{1 << 47}, Dtype(Int32)) },
		"expand copy":   func() { Ones(Shape{1, 1}).Expand(1<<25, 1<<25).Contiguous() },
	}
	for name, f := range oom {
		tryTyped[*OutOfMemoryError](t, name, f)
	}
	device := map[string]func(){
		"meta and cpu": func() { x.Add(Ones(Shape{2, 3}, On(Meta))) },
		"where":        func() { Where(Ones(Shape{2, 3}, Dtype(Bool), On(Meta)), x, x) },
	}
	for name, f := range device {
		tryTyped[*DeviceMismatchError](t, name, f)
	}
	if !CUDAAvailable() {
		tryTyped[*DeviceError](t, "absent cuda", func() { Ones(Shape{2}, On(CUDA(7))) })
		tryTyped[*DeviceError](t, "to absent cuda", func() { x.To(CUDA(3)) })
	}
	values := map[string]func(){
		"remainder by 0":    func() { i64(5, 3).Remainder(i64(2, 0)) },
		"floor_divide by 0": func() { i64(5, 3).FloorDivide(i64(0, 1)) },
		"fmod by 0":         func() { i64(5, 3).Fmod(i64(0)) },
		"remainder 0-d 0":   func() { i64(5, 3).Remainder(FromSlice([]int64{0}, Shape{})) },
		"int32 floor_div 0": func() { FromSlice([]int32{7}, nil).FloorDivide(FromSlice([]int32{0}, nil)) },
		"broadcast divisor": func() { i64(1, 2, 3).FloorDivide(FromSlice([]int64{0}, Shape{})) },
		"nll target >= C":   func() { NLLLoss(x.LogSoftmax(1), i64(0, 3), "mean") },
		"nll target < 0":    func() { NLLLoss(x.LogSoftmax(1), i64(-1, 0), "sum") },
		"ce target >= C":    func() { CrossEntropy(x, i64(5, 0), 0, "mean") },
		"ce target smooth":  func() { CrossEntropy(x, i64(0, -7), 0.1, "none") },
		"ce int32 target":   func() { CrossEntropy(x, FromSlice([]int32{0, 3}, nil), 0, "mean") },
		"full int64 NaN":    func() { Full(Shape{2}, math.NaN(), Dtype(Int64)) },
		"full int64 inf":    func() { Full(Shape{2}, math.Inf(1), Dtype(Int64)) },
		"full int64 2^63":   func() { Full(Shape{2}, 1<<63, Dtype(Int64)) },
		"full int32 3e9":    func() { Full(Shape{2}, 3e9, Dtype(Int32)) },
		"full float16 1e10": func() { Full(Shape{2}, 1e10, Dtype(Float16)) },
		"full float32 1e39": func() { Full(Shape{2}, 1e39) },
		"fill_ int64 NaN":   func() { Zeros(Shape{2}, Dtype(Int64)).FillInPlace(math.NaN()) },
		"masked_fill NaN":   func() { Zeros(Shape{2}, Dtype(Int64)).MaskedFill(Ones(Shape{2}, Dtype(Bool)), math.NaN()) },
	}
	for name, f := range values {
		tryTyped[*ValueError](t, name, f)
	}
}

// TestDivisionByZeroMessages checks the values around the new checks: float
// division by zero is still IEEE (torch gives nan/inf), nonzero integer
// divisors still work, and ignore_index still counts for nothing.
func TestDivisionByZeroValues(t *testing.T) {
	a := FromSlice([]int64{7, -7}, nil)
	if got := a.FloorDivide(FromSlice([]int64{2, 2}, nil)).Int64s(); got[0] != 3 || got[1] != -4 {
		t.Errorf("7//2, -7//2 = %v, want [3 -4]", got)
	}
	if got := a.Remainder(FromSlice([]int64{2, 2}, nil)).Int64s(); got[0] != 1 || got[1] != 1 {
		t.Errorf("7%%2, -7%%2 = %v, want [1 1]", got)
	}
	f := FromSlice([]float32{1}, nil).FloorDivide(FromSlice([]float32{0}, nil)).Float32s()
	if f[0] < 1e38 {
		t.Errorf("1.0 // 0.0 = %v, want +inf", f[0])
	}
	// [2, 3] logits of ones: every class has log-probability -log 3.
	l := CrossEntropy(Ones(Shape{2, 3}), FromSlice([]int64{IgnoreIndex, 2}, nil), 0, "mean").Item()
	if want := 1.0986123; l < want-1e-6 || l > want+1e-6 {
		t.Errorf("cross entropy with one ignored target = %v, want log 3 = %v", l, want)
	}
}

// TestNilTensorMethods calls every exported method of *Tensor on a nil
// receiver and on the zero Tensor value (a tensor argument a real one, the
// rest zero values) and checks that each panics with a *ShapeError naming
// an op, as an op given a nil operand does, never with a runtime error;
// String says "<nil tensor>" or "<zero Tensor>" and Release does nothing.
func TestNilTensorMethods(t *testing.T) {
	for _, c := range []struct {
		recv     *Tensor
		str, msg string
	}{
		{nil, "<nil tensor>", "nil tensor"},
		{&Tensor{}, "<zero Tensor>", "the zero Tensor value holds no tensor (make one with Zeros, FromSlice, ...)"},
	} {
		for _, m := range testenv.CallMethods(c.recv, func(at reflect.Type) reflect.Value {
			if at == reflect.TypeFor[*Tensor]() {
				return reflect.ValueOf(Ones(Shape{2, 2}))
			}
			return reflect.Zero(at) // (a variadic parameter gets none)
		}) {
			r := m.Panic
			if m.Name == "String" && r == nil {
				if s := m.Out[0].String(); s != c.str {
					t.Errorf("%s.String() = %q, want %s", c.str, s, c.str)
				}
			}
			switch m.Name {
			case "String", "Release":
				if r != nil {
					t.Errorf("%s.%s panicked: %v", c.str, m.Name, r)
				}
				continue
			}
			var se *ShapeError
			if err, ok := r.(error); !ok || !errors.As(err, &se) || se.Op == "" || se.Msg != c.msg {
				t.Errorf("%s.%s: panic %T %v, want a *ShapeError naming the op: %s", c.str, m.Name, r, r, c.msg)
			}
		}
	}
}

// TestNilFunctions: a nil function given to the functions that run one
// (grad mode, autocast, scopes, streams, Try, hooks, callbacks) is a
// *ValueError, not a runtime error; WithStream's nil stream leaves the
// current streams (torch.cuda.stream(None)).
func TestNilFunctions(t *testing.T) {
	leaf := Ones(Shape{2}, WithGrad())
	for name, f := range map[string]func(){
		"NoGrad":                         func() { NoGrad(nil) },
		"EnableGrad":                     func() { EnableGrad(nil) },
		"SetGradEnabled":                 func() { SetGradEnabled(false, nil) },
		"Autocast":                       func() { Autocast(CPU, BFloat16, nil) },
		"AutocastDisabled":               func() { AutocastDisabled(nil) },
		"Scope":                          func() { Scope(nil) },
		"WithStream":                     func() { WithStream(nil, nil) },
		"QueueCallback":                  func() { QueueCallback(nil) },
		"RegisterPostAccumulateGradHook": func() { leaf.RegisterPostAccumulateGradHook(nil) },
	} {
		tryTyped[*ValueError](t, name, f)
	}
	var ve *ValueError
	if err := Try(nil); !errors.As(err, &ve) {
		t.Errorf("Try(nil) = %v, want a *ValueError", err)
	}
	ran := false
	WithStream(nil, func() { ran = true })
	if !ran {
		t.Error("WithStream(nil, f) did not run f")
	}
	// the hook's refusal left the leaf's backward working
	leaf.Mul(leaf).Sum().Backward()
	if g := leaf.Grad().Sum().Item(); g != 4 {
		t.Errorf("grad sum = %v, want 4", g)
	}
}

// TestNilOperands: the package's functions given a nil tensor where one is
// needed panic with a *ShapeError (nil tensor), and Apply a nil Function
// with a *ValueError, never with a runtime error.
func TestNilOperands(t *testing.T) {
	x, m := Ones(Shape{1, 2, 4, 4}), Ones(Shape{2, 2})
	var n *Tensor
	k, z, one := [2]int{2, 2}, [2]int{}, [2]int{1, 1}
	for name, f := range map[string]func(){
		"AvgPool2d":                 func() { AvgPool2d(n, k, k, z, true) },
		"MaxPool2d":                 func() { MaxPool2d(n, k, k, z) },
		"Conv2d x":                  func() { Conv2d(n, Ones(Shape{2, 2, 1, 1}), nil, one, z, one, 1) },
		"Conv2d w":                  func() { Conv2d(x, n, nil, one, z, one, 1) },
		"LayerNorm":                 func() { LayerNorm(n, []int{2}, nil, nil, 1e-5) },
		"OnesLike":                  func() { OnesLike(n) },
		"ZerosLike":                 func() { ZerosLike(n) },
		"ScaledDotProductAttention": func() { ScaledDotProductAttention(n, m, m, AttentionOptions{}) },
		"BatchNorm":                 func() { BatchNorm(n, nil, nil, nil, nil, true, 0.1, 1e-5) },
		"Linear":                    func() { Linear(n, m, nil) },
		"Stack":                     func() { Stack([]*Tensor{m, n}, 0) },
		"Where":                     func() { Where(n, m, m) },
		"IndexWith":                 func() { m.IndexWith(n) },
		"DivInPlace of an integer":  func() { FromSlice([]int64{1}, nil).DivInPlace(n) },
	} {
		tryTyped[*ShapeError](t, name, f)
	}
	tryTyped[*ValueError](t, "Apply(nil)", func() { Apply(nil, m) })
	tryTyped[*ValueError](t, "Dropout(NaN)", func() { Dropout(m, math.NaN(), true) })
	tryTyped[*ValueError](t, "Dropout(1.5)", func() { Dropout(m, 1.5, true) })
	tryTyped[*ValueError](t, "OneHot(-5)", func() { OneHot(FromSlice([]int64{1}, nil), -5) })
	ac := func() { ScaledDotProductAttention(n, m, m, AttentionOptions{}) }
	tryTyped[*ShapeError](t, "ScaledDotProductAttention under autocast", func() { Autocast(CPU, BFloat16, ac) })
}

// TestScalarEdgeValues: values PyTorch 1.13 accepts at the edges of the
// checks above: a fractional fill truncates into an integer dtype, an
// infinity fills a floating one, the int64 extremes fit, and a NaN clamp
// bound makes every element NaN.
func TestScalarEdgeValues(t *testing.T) {
	if got := Full(Shape{2}, -2.7, Dtype(Int64)).Int64s(); got[0] != -2 || got[1] != -2 {
		t.Errorf("full(-2.7, int64) = %v, want [-2 -2]", got)
	}
	if got := Full(Shape{1}, math.MinInt64, Dtype(Int64)).Int64s(); got[0] != math.MinInt64 {
		t.Errorf("full(MinInt64) = %v", got)
	}
	if got := Full(Shape{1}, math.Inf(-1), Dtype(Float16)).Float32s(); !math.IsInf(float64(got[0]), -1) {
		t.Errorf("full(-inf, float16) = %v", got)
	}
	for _, x := range []*Tensor{Arange(0, 5, 1, Dtype(Float32)), Arange(0, 5, 1)} {
		for _, b := range [][2]float64{{math.NaN(), 4}, {1, math.NaN()}} {
			got := x.Clamp(b[0], b[1])
			if got.DType() != Float32 && got.DType() != x.DType() || got.IsNaN().All().Item() != 1 {
				t.Errorf("%v.Clamp(%v, %v) = %v, want all NaN (torch)", x.DType(), b[0], b[1], got)
			}
		}
	}
	if got := Arange(0, 5, 1, Dtype(Float32)).Clamp(3, 1).Float32s(); got[0] != 1 || got[4] != 1 { // torch: min > max gives max
		t.Errorf("clamp(3, 1) = %v, want all 1", got)
	}
}

// TestNilStreamEventCtx: a nil *Stream, *Event or *FunctionCtx: Release
// does nothing, methods that return an error return a *ValueError, the
// others panic with one; never a nil dereference.
func TestNilStreamEventCtx(t *testing.T) {
	for _, recv := range []any{(*Stream)(nil), (*Event)(nil), (*FunctionCtx)(nil)} {
		typ := reflect.TypeOf(recv)
		for _, m := range testenv.CallMethods(recv, func(at reflect.Type) reflect.Value {
			if at == reflect.TypeFor[[]*Tensor]() {
				return reflect.ValueOf([]*Tensor{Ones(Shape{1})})
			}
			return reflect.Zero(at)
		}) {
			r, out := m.Panic, m.Out
			if m.Name == "Release" {
				if r != nil || len(out) == 1 && !out[0].IsNil() {
					t.Errorf("nil %v.Release: %v %v, want nothing done", typ, r, out)
				}
				continue
			}
			if r == nil {
				if n := len(out); n > 0 && out[n-1].Type() == reflect.TypeOf((*error)(nil)).Elem() {
					r = out[n-1].Interface()
				}
			}
			if _, ok := r.(*ValueError); !ok {
				t.Errorf("nil %v.%s: %T %v, want a *ValueError", typ, m.Name, r, r)
			}
		}
	}
}
