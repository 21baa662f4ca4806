// Package nninit is torch.nn.init: functions that fill a tensor in place
// (PyTorch's trailing-underscore functions) with values drawn from a
// distribution or set by a rule, under no-grad, and return it.
//
// (The package is not named init: Go reserves that name for functions.)
//
// The random draws use ember's generator of the tensor's device
// (ember.ManualSeed), so a seed gives the same values on the same device;
// the values are not PyTorch's (its CPU generator is a Mersenne twister),
// their distributions are. Every function works on every device (the meta
// device too, where there is nothing to fill) and on every floating dtype;
// the random ones refuse integer and bool tensors, as PyTorch does.
// Misuse panics with an *ember.ValueError (or *ember.DTypeError) carrying
// PyTorch's message.
package nninit

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/emberml/ember"
	"gonum.org/v1/gonum/mat"
)

func valueErr(op, format string, args ...any) {
	panic(&ember.ValueError{Op: "nninit." + op, Msg: fmt.Sprintf(format, args...)})
}

func live(op string, t *ember.Tensor) {
	if t == nil {
		valueErr(op, "tensor is nil")
	}
}

// torchName is PyTorch's name of a dtype in its "not implemented for"
// messages.
func torchName(dt ember.DType) string {
	switch dt {
	case ember.Int64:
		return "Long"
	case ember.Int32:
		return "Int"
	case ember.Bool:
		return "Bool"
	case ember.Float32:
		return "Float"
	case ember.Float64:
		return "Double"
	case ember.Float16:
		return "Half"
	case ember.BFloat16:
		return "BFloat16"
	}
	return dt.String()
}

// needFloat refuses a non-floating t as PyTorch's random kernels do.
func needFloat(op, kernel string, t *ember.Tensor) {
	if dt := t.DType(); !dt.IsFloat() {
		panic(&ember.DTypeError{Op: "nninit." + op, DTypes: []ember.DType{dt}, Msg: fmt.Sprintf("%q not implemented for '%s'", kernel, torchName(dt))})
	}
}

// drawType is the dtype the samples are drawn in: float64 for a float64
// tensor, float32 otherwise (rounded to a two-byte float on the copy).
func drawType(t *ember.Tensor) ember.DType {
	if t.DType() == ember.Float64 {
		return ember.Float64
	}
	return ember.Float32
}

// pyNum writes v as PyTorch's messages do (C++'s %g: 2, 0.5, 3e+38, inf,
// nan).
func pyNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// maxOf is the largest finite value of a floating dtype.
func maxOf(dt ember.DType) float64 {
	switch dt {
	case ember.Float64:
		return math.MaxFloat64
	case ember.Float16:
		return 65504
	case ember.BFloat16:
		return 3.3895313892515355e38
	}
	return math.MaxFloat32
}

// cName is the C++ type PyTorch's messages name for a floating dtype.
func cName(dt ember.DType) string {
	switch dt {
	case ember.Float64:
		return "double"
	case ember.Float16:
		return "c10::Half"
	case ember.BFloat16:
		return "c10::BFloat16"
	}
	return "float"
}

// fill copies src into t under no-grad and returns t.
func fill(t, src *ember.Tensor) *ember.Tensor {
	ember.NoGrad(func() { t.CopyFrom(src) })
	return t
}

// fromHost copies host values (t's shape, row-major) into t.
func fromHost(t *ember.Tensor, v []float64) *ember.Tensor {
	return fill(t, ember.FromSlice(v, t.Shape(), ember.On(t.Device())))
}

// CalculateGain returns the recommended gain for a nonlinearity, as
// torch.nn.init.calculate_gain: 1 for "linear", the conv and
// conv_transpose names and "sigmoid", 5/3 for "tanh", √2 for "relu",
// √(2/(1+slope²)) for "leaky_relu" (param is the negative slope, 0.01 when
// absent) and 3/4 for "selu". Another name panics with an
// *ember.ValueError.
func CalculateGain(nonlinearity string, param ...float64) float64 {
	switch nonlinearity {
	case "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "sigmoid":
		return 1
	case "tanh":
		return 5.0 / 3
	case "relu":
		return math.Sqrt(2.0)
	case "leaky_relu":
		slope := 0.01
		if len(param) > 0 {
			slope = param[0]
			if math.IsNaN(slope) {
				valueErr("CalculateGain", "negative_slope %v not a valid number", slope)
			}
		}
		return math.Sqrt(2.0 / (1 + slope*slope))
	case "selu":
		return 3.0 / 4
	}
	valueErr("CalculateGain", "Unsupported nonlinearity %s", nonlinearity)
	return 0
}

// Uniform fills t with samples of U(a, b) (torch.nn.init.uniform_). a > b
// panics with an *ember.ValueError.
func Uniform(t *ember.Tensor, a, b float64) *ember.Tensor {
	live("Uniform", t)
	needFloat("Uniform", "check_uniform_bounds", t)
	if a > b {
		valueErr("Uniform", "uniform_ expects to return a [from, to) range, but found from=%s > to=%s", pyNum(a), pyNum(b))
	}
	max := maxOf(t.DType())
	if math.Abs(a) > max {
		valueErr("Uniform", "from is out of bounds for %s", cName(t.DType()))
	}
	if math.Abs(b) > max {
		valueErr("Uniform", "to is out of bounds for %s", cName(t.DType()))
	}
	if b-a > max {
		valueErr("Uniform", "uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found to=%s and from=%s which result in to-from to exceed the limit", torchName(t.DType()), pyNum(b), pyNum(a))
	}
	r := ember.Rand(t.Shape(), ember.On(t.Device()), ember.Dtype(drawType(t)))
	return fill(t, r.MulScalar(b-a).AddScalar(a))
}

// Normal fills t with samples of N(mean, std²) (torch.nn.init.normal_).
// A negative std panics with an *ember.ValueError.
func Normal(t *ember.Tensor, mean, std float64) *ember.Tensor {
	live("Normal", t)
	needFloat("Normal", "normal_kernel_cpu", t)
	if !(std >= 0) {
		valueErr("Normal", "normal expects std >= 0.0, but found std %s", pyNum(std))
	}
	r := ember.Randn(t.Shape(), ember.On(t.Device()), ember.Dtype(drawType(t)))
	if std != 1 {
		r = r.MulScalar(std)
	}
	if mean != 0 {
		r = r.AddScalar(mean)
	}
	return fill(t, r)
}

// TruncNormal fills t with samples of N(mean, std²) truncated to [a, b]
// (torch.nn.init.trunc_normal_): uniform samples of the normal's CDF
// between a and b mapped back through the inverse CDF, then clamped to
// [a, b], as PyTorch computes them.
func TruncNormal(t *ember.Tensor, mean, std, a, b float64) *ember.Tensor {
	live("TruncNormal", t)
	needFloat("TruncNormal", "check_uniform_bounds", t)
	// PyTorch's check is uniform_'s, on the range it draws from: a > b,
	// or a negative std, fails it.
	if lo, hi := truncRange(mean, std, a, b); lo > hi {
		valueErr("TruncNormal", "uniform_ expects to return a [from, to) range, but found from=%s > to=%s", pyNum(lo), pyNum(hi))
	}
	r := ember.Rand(t.Shape(), ember.On(t.Device()), ember.Dtype(drawType(t)))
	return fill(t, truncFrom(r, mean, std, a, b))
}

// truncRange is the range trunc_normal_ draws its uniform samples from:
// 2·cdf(a)-1 to 2·cdf(b)-1 of the standardised bounds.
func truncRange(mean, std, a, b float64) (lo, hi float64) {
	cdf := func(x float64) float64 { return (1 + math.Erf(x/math.Sqrt2)) / 2 }
	return 2*cdf((a-mean)/std) - 1, 2*cdf((b-mean)/std) - 1
}

// truncFrom maps uniform [0, 1) samples r to trunc_normal_'s values.
func truncFrom(r *ember.Tensor, mean, std, a, b float64) *ember.Tensor {
	lo, hi := truncRange(mean, std, a, b)
	return r.MulScalar(hi-lo).AddScalar(lo).Erfinv().MulScalar(std*math.Sqrt2).AddScalar(mean).Clamp(a, b)
}

// Constant fills t with v (torch.nn.init.constant_).
func Constant(t *ember.Tensor, v float64) *ember.Tensor {
	live("Constant", t)
	ember.NoGrad(func() { t.FillInPlace(v) })
	return t
}

// Zeros fills t with 0 (torch.nn.init.zeros_).
func Zeros(t *ember.Tensor) *ember.Tensor { live("Zeros", t); return Constant(t, 0) }

// Ones fills t with 1 (torch.nn.init.ones_).
func Ones(t *ember.Tensor) *ember.Tensor { live("Ones", t); return Constant(t, 1) }

// Eye fills the 2-D t with the identity matrix (ones on the main
// diagonal, torch.nn.init.eye_); t may be rectangular.
func Eye(t *ember.Tensor) *ember.Tensor {
	live("Eye", t)
	s := t.Shape()
	if len(s) != 2 {
		valueErr("Eye", "Only tensors with 2 dimensions are supported")
	}
	v := make([]float64, s.NumElements())
	for i := 0; i < s[0] && i < s[1]; i++ {
		v[i*s[1]+i] = 1
	}
	return fromHost(t, v)
}

// Dirac fills the 3-, 4- or 5-D t with the Dirac delta (torch.nn.init.
// dirac_): a convolution with it keeps its input's first channels; with
// groups > 1 each group of out channels does so. groups must divide
// t.Size(0).
func Dirac(t *ember.Tensor, groups int) *ember.Tensor {
	live("Dirac", t)
	s := t.Shape()
	if len(s) < 3 || len(s) > 5 {
		valueErr("Dirac", "Only tensors with 3, 4, or 5 dimensions are supported")
	}
	if groups <= 0 {
		valueErr("Dirac", "groups must be positive, got %d", groups)
	}
	if s[0]%groups != 0 {
		valueErr("Dirac", "dim 0 must be divisible by groups")
	}
	per := s[0] / groups
	v := make([]float64, s.NumElements())
	strides := make([]int, len(s))
	st := 1
	for d := len(s) - 1; d >= 0; d-- {
		strides[d] = st
		st *= s[d]
	}
	centre := 0
	for d := 2; d < len(s); d++ {
		centre += s[d] / 2 * strides[d]
	}
	for g := 0; g < groups; g++ {
		for d := 0; d < per && d < s[1]; d++ {
			v[(g*per+d)*strides[0]+d*strides[1]+centre] = 1
		}
	}
	return fromHost(t, v)
}

// Fans returns t's fan_in and fan_out as PyTorch computes them: dims 1 and
// 0 times the product of the dims after them (a conv's receptive field).
// A t of fewer than 2 dims panics with an *ember.ValueError.
func Fans(t *ember.Tensor) (fanIn, fanOut int) {
	live("Fans", t)
	s := t.Shape()
	if len(s) < 2 {
		valueErr("Fans", "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
	}
	rf := 1
	for _, d := range s[2:] {
		rf *= d
	}
	return s[1] * rf, s[0] * rf
}

// XavierUniform fills t with U(-a, a), a = gain·√(6/(fan_in+fan_out))
// (Glorot's init, torch.nn.init.xavier_uniform_).
func XavierUniform(t *ember.Tensor, gain float64) *ember.Tensor {
	in, out := Fans(t)
	if t.NumElements() == 0 {
		return t
	}
	a := math.Sqrt(3.0) * gain * math.Sqrt(2.0/float64(in+out))
	return Uniform(t, -a, a)
}

// XavierNormal fills t with N(0, std²), std = gain·√(2/(fan_in+fan_out))
// (torch.nn.init.xavier_normal_).
func XavierNormal(t *ember.Tensor, gain float64) *ember.Tensor {
	in, out := Fans(t)
	if t.NumElements() == 0 {
		return t
	}
	return Normal(t, 0, gain*math.Sqrt(2.0/float64(in+out)))
}

// kaimingStd is gain(nonlinearity, a)/√fan; it returns ok=false for a
// tensor with no elements, which PyTorch leaves as it is.
func kaimingStd(op string, t *ember.Tensor, a float64, mode, nonlinearity string) (float64, bool) {
	live(op, t)
	if t.NumElements() == 0 {
		return 0, false
	}
	mode = strings.ToLower(mode) // as PyTorch's _calculate_correct_fan
	if mode != "fan_in" && mode != "fan_out" {
		valueErr(op, "Mode %s not supported, please use one of ['fan_in', 'fan_out']", mode)
	}
	in, out := Fans(t)
	fan := in
	if mode == "fan_out" {
		fan = out
	}
	return CalculateGain(nonlinearity, a) / math.Sqrt(float64(fan)), true
}

// KaimingUniform fills t with U(-bound, bound), bound =
// gain·√(3/fan) (He's init, torch.nn.init.kaiming_uniform_): a is the
// negative slope given to CalculateGain for "leaky_relu" (PyTorch's
// defaults: a=0, mode "fan_in", nonlinearity "leaky_relu"), mode is
// "fan_in" or "fan_out" (in any case, as PyTorch lower-cases it). A t
// with no elements is left as it is.
func KaimingUniform(t *ember.Tensor, a float64, mode, nonlinearity string) *ember.Tensor {
	std, ok := kaimingStd("KaimingUniform", t, a, mode, nonlinearity)
	if !ok {
		return t
	}
	bound := math.Sqrt(3.0) * std
	return Uniform(t, -bound, bound)
}

// KaimingNormal fills t with N(0, std²), std = gain/√fan
// (torch.nn.init.kaiming_normal_), with KaimingUniform's arguments.
func KaimingNormal(t *ember.Tensor, a float64, mode, nonlinearity string) *ember.Tensor {
	std, ok := kaimingStd("KaimingNormal", t, a, mode, nonlinearity)
	if !ok {
		return t
	}
	return Normal(t, 0, std)
}

// Orthogonal fills t (2 or more dims, viewed as [t.Size(0), the rest])
// with a (semi-)orthogonal matrix times gain (torch.nn.init.orthogonal_):
// the Q of the QR decomposition of a standard normal matrix, its columns'
// signs set so that R's diagonal is positive. The QR runs on the host.
func Orthogonal(t *ember.Tensor, gain float64) *ember.Tensor {
	live("Orthogonal", t)
	if t.Dim() < 2 {
		valueErr("Orthogonal", "Only tensors with 2 or more dimensions are supported")
	}
	needFloat("Orthogonal", "normal_kernel_cpu", t)
	if t.NumElements() == 0 {
		return t
	}
	rows := t.Size(0)
	cols := t.NumElements() / rows
	a := ember.Randn(ember.Shape{rows, cols}, ember.On(t.Device()), ember.Dtype(drawType(t)))
	if t.Device().Type == ember.MetaType {
		return t
	}
	q := orthogonalFrom(a.Float64s(), rows, cols)
	for i := range q {
		q[i] *= gain
	}
	return fromHost(t, q)
}

// orthogonalFrom returns PyTorch's orthogonal_ result (gain 1) for the
// normal matrix a [rows, cols]: Q·diag(sign(diag R)) of the reduced QR of
// a (of aᵀ when rows < cols, then transposed back), row-major.
func orthogonalFrom(a []float64, rows, cols int) []float64 {
	m, n := rows, cols
	wide := rows < cols
	if wide {
		m, n = cols, rows
	}
	d := mat.NewDense(m, n, nil)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if wide {
				d.Set(j, i, a[i*cols+j])
			} else {
				d.Set(i, j, a[i*cols+j])
			}
		}
	}
	var qr mat.QR
	qr.Factorize(d)
	var q, r mat.Dense
	qr.QTo(&q)
	qr.RTo(&r)
	out := make([]float64, rows*cols)
	for j := 0; j < n; j++ { // the first n columns of Q, signed by R's diagonal
		sign := 1.0
		switch rd := r.At(j, j); {
		case rd < 0:
			sign = -1
		case rd == 0:
			sign = 0 // torch.sign(0)
		}
		for i := 0; i < m; i++ {
			v := q.At(i, j) * sign
			if wide {
				out[j*cols+i] = v
			} else {
				out[i*cols+j] = v
			}
		}
	}
	return out
}

// Sparse fills the 2-D t with N(0, std²) samples and then zeroes
// ⌈sparsity·rows⌉ elements of every column, the rows drawn at random
// (torch.nn.init.sparse_, Martens' sparse init).
func Sparse(t *ember.Tensor, sparsity, std float64) *ember.Tensor {
	live("Sparse", t)
	s := t.Shape()
	if len(s) != 2 {
		valueErr("Sparse", "Only tensors with 2 dimensions are supported")
	}
	Normal(t, 0, std)
	rows, cols := s[0], s[1]
	zeros := int(math.Ceil(sparsity * float64(rows)))
	if zeros <= 0 || t.NumElements() == 0 {
		return t
	}
	// A random permutation of the rows per column: the ranks of uniform
	// draws; the rows ranked below zeros are zeroed.
	r := ember.Rand(ember.Shape{cols, rows}, ember.On(t.Device()))
	if t.Device().Type == ember.MetaType {
		return t
	}
	order := r.Argsort(1, false).Int64s()
	keep := make([]float64, rows*cols)
	for i := range keep {
		keep[i] = 1
	}
	for c := 0; c < cols; c++ {
		for k := 0; k < zeros && k < rows; k++ {
			keep[int(order[c*rows+k])*cols+c] = 0
		}
	}
	mask := ember.FromSlice(keep, s, ember.On(t.Device()), ember.Dtype(t.DType()))
	ember.NoGrad(func() { t.MulInPlace(mask) })
	return t
}
