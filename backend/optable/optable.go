// Package optable is ember's op table: one row per elementwise op and per
// reduction, the single definition from which `go generate ./backend/...`
// (backend/internal/opgen) writes
//
//   - the op enums of package backend with their names, dtype classes,
//     costs, PyTorch and grad_fn names (backend/zz_ops.go),
//   - the CPU kernels, one loop per (op, dtype) (backend/cpu/zz_kernels.go),
//   - the CUDA op chains and op constants (backend/cuda/kernels/zz_ops.cuh,
//     zz_ops.go), whose support tables are the same as the CPU's by
//     construction,
//   - the Tensor methods of the root package (zz_ops.go), the nn activation
//     modules (nn/zz_activations.go) and the conformance suite's op list
//     (embertest/zz_ops.go),
//   - testdata/ops.json, from which testdata/gen_fixtures.py makes PyTorch's
//     expected values for every row that names a Fixture.
//
// An op supports exactly the dtypes for which its row gives an expression:
// GoF/CF for floats, GoI/CI for integers, GoB/CB for bool. Go and C must
// agree on which; the generator refuses a row where they do not.
//
// Expressions see the operand(s) x (and y), the parameters p1, p2, p3
// (float64 in Go, double in C) and T, the element type. In C, F is true for
// floating T and M<T> holds the math functions of T's precision
// (common.cuh); helpers live in backend/cpu/scalar.go and
// backend/cuda/kernels/scalar.cuh.
//
// This package is data only: it imports nothing of ember's, so every
// generator and the runtime code can read it.
package optable

import "math"

// Class says which dtypes an op accepts and how ember promotes its operands
// before the kernel runs (the PyTorch behaviour each class copies is named).
type Class uint8

const (
	// Float ops compute in a floating dtype: integer and bool operands
	// promote to Float32 first (torch.exp, torch.div).
	Float Class = iota
	// FloatStrict ops take floating operands only; others are a
	// *DTypeError naming the op (torch.nn.functional.silu, torch.hypot).
	FloatStrict
	// Numeric ops keep integer and floating dtypes; bool promotes to Int64
	// unless the row sets NoBool (torch.abs, torch.add).
	Numeric
	// All ops keep every dtype, bool included (torch.nan_to_num).
	All
	// Logical ops cast their operands to Bool and write Bool
	// (torch.logical_not, torch.logical_and).
	Logical
	// Predicate unary ops take every dtype and write Bool (torch.isnan).
	Predicate
	// Compare binary ops promote as Numeric and write Bool (torch.eq).
	Compare
)

var classNames = [...]string{"float", "float-strict", "numeric", "all", "logical", "predicate", "compare"}

func (c Class) String() string { return classNames[c] }

// BoolOut reports whether the class writes Bool results.
func (c Class) BoolOut() bool { return c == Logical || c == Predicate || c == Compare }

// Cost is a rough per-element cost: it decides how much work a CPU thread
// gets (backend/cpu) and which fixtures compare with the looser tolerance
// of transcendental functions.
type Cost uint8

const (
	Cheap          Cost = 1 // a few instructions
	Transcendental Cost = 8 // exp, log, pow, ... (compared with the looser tolerance)
)

// Saves says which tensors a gradient rule needs kept from the forward pass.
type Saves uint8

const (
	SaveNone Saves = 0
	SaveX    Saves = 1 << iota // the (promoted) input(s)
	SaveY                      // the result
	// SaveCross keeps each input only when the other one needs a
	// gradient (a product's rule: d(a·b)/da needs b alone).
	SaveCross
)

// Unary is one elementwise op of one operand.
type Unary struct {
	Name   string   // ember's name: the op's String(), the CUDA constant U_<NAME>, fixtures' "op"
	Const  string   // the Go constant in package backend
	Method string   // the generated Tensor method, "" when the root writes it by hand
	Params []string // parameter names of the method (p1, p2, p3 in order), as the fixtures' args
	Doc    string   // the method's doc comment, after its name
	Torch  string   // PyTorch's function
	GradFn string   // PyTorch's grad_fn name; "" for an op without a gradient
	Saves  Saves    // what the gradient rule uses
	Class  Class
	NoBool bool // with Numeric: a bool operand is a *DTypeError (torch.trunc)
	Cost   Cost

	GoF, GoI, GoB string // Go expressions per dtype kind
	GoVec         string // a package vec call for contiguous float rows (dd, aa), if any
	CF, CI, CB    string // C++ expressions per dtype kind

	// Module names the nn activation layer generated for the op ("" none).
	Module string

	// Tests.
	Fixture string      // Python: PyTorch's value as an expression of x and the params ("" = hand-written cases)
	Args    [][]float64 // parameter sets that fixtures and gradchecks use
	Domain  [2]float64  // gradcheck inputs are drawn from this range ({0,0}: [-1.9, 1.9])
}

// Binary is one elementwise op of two operands of one dtype (ember
// promotes them first).
type Binary struct {
	Name   string
	Const  string
	Method string
	Doc    string
	Torch  string
	GradFn string
	Saves  Saves
	Class  Class
	Cost   Cost

	GoF, GoI, GoB string
	GoVec         string // the vec.Op of a vectorised float loop (Add, Sub, Mul, Div), if any
	CF, CI, CB    string

	Fixture string     // Python expression of x and y
	Domain  [2]float64 // gradcheck range of both operands ({0,0}: [0.2, 2])
}

// Reduce is one reduction kind (the kernels are hand-written: these rows
// give the enum, names and dtypes).
type Reduce struct {
	Name  string
	Const string
	Out   string // "same", "int64" or "bool"
	Ints  bool   // accepts integer (and float) sources
	Bools bool   // accepts (only) bool sources
}

// The standard C helpers for floats: M<T>::f(x).
func cm(f string) string { return "M<T>::" + f + "(x)" }

func gm(f string) string { return "T(math." + f + "(float64(x)))" }

// Unaries is the table of unary ops, in enum order.
var Unaries = []Unary{
	{Name: "neg", Const: "Neg", Method: "Neg", Doc: "returns -t.", Torch: "torch.neg", GradFn: "NegBackward0", Class: Numeric, Cost: Cheap,
		GoF: "-x", GoI: "-x", GoVec: "vec.BinaryScalar(vec.Mul, dd, aa, -1)", CF: "-x", CI: "-x"},
	{Name: "abs", Const: "Abs", Method: "Abs", Doc: "returns |t|.", Torch: "torch.abs", GradFn: "AbsBackward0", Saves: SaveX, Class: Numeric, Cost: Cheap,
		GoF: gm("Abs"), GoI: "absI(x)", CF: cm("abs"), CI: "x < 0 ? -x : x"},
	{Name: "exp", Const: "Exp", Method: "Exp", Doc: "returns e**t.", Torch: "torch.exp", GradFn: "ExpBackward0", Saves: SaveY, Class: Float, Cost: Transcendental,
		GoF: gm("Exp"), CF: cm("exp")},
	{Name: "log", Const: "Log", Method: "Log", Doc: "returns the natural logarithm.", Torch: "torch.log", GradFn: "LogBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: "T(logSub(float64(x)))", CF: cm("log"), Domain: [2]float64{0.3, 2.5}},
	{Name: "sqrt", Const: "Sqrt", Method: "Sqrt", Doc: "returns the square root.", Torch: "torch.sqrt", GradFn: "SqrtBackward0", Saves: SaveY, Class: Float, Cost: Transcendental,
		GoF: gm("Sqrt"), CF: cm("sqrt"), Domain: [2]float64{0.3, 2.5}},
	{Name: "rsqrt", Const: "Rsqrt", Method: "Rsqrt", Doc: "returns 1/sqrt(t).", Torch: "torch.rsqrt", GradFn: "RsqrtBackward0", Saves: SaveY, Class: Float, Cost: Transcendental,
		GoF: "T(1 / math.Sqrt(float64(x)))", CF: "(T)1 / M<T>::sqrt(x)", Domain: [2]float64{0.3, 2.5}},
	{Name: "sin", Const: "Sin", Method: "Sin", Doc: "returns the sine.", Torch: "torch.sin", GradFn: "SinBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Sin"), CF: cm("sin")},
	{Name: "cos", Const: "Cos", Method: "Cos", Doc: "returns the cosine.", Torch: "torch.cos", GradFn: "CosBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Cos"), CF: cm("cos")},
	{Name: "tanh", Const: "Tanh", Method: "Tanh", Doc: "returns the hyperbolic tangent.", Torch: "torch.tanh", GradFn: "TanhBackward0", Saves: SaveY, Class: Float, Cost: Transcendental,
		GoF: gm("Tanh"), CF: cm("tanh")},
	{Name: "sigmoid", Const: "Sigmoid", Method: "Sigmoid", Doc: "returns 1/(1+e**-t).", Torch: "torch.sigmoid", GradFn: "SigmoidBackward0", Saves: SaveY, Class: Float, Cost: Transcendental,
		GoF: "T(1 / (1 + math.Exp(-float64(x))))", CF: "(T)1 / ((T)1 + M<T>::exp(-x))"},
	{Name: "relu", Const: "ReLU", Method: "ReLU", Doc: "returns max(t, 0).", Torch: "torch.relu", GradFn: "ReluBackward0", Saves: SaveY, Class: Numeric, Cost: Cheap,
		GoF: "reluF(x)", GoI: "reluI(x)", GoVec: "vec.ReLU(dd, aa)", CF: "ember_relu(x)", CI: "ember_relu(x)"},
	{Name: "sign", Const: "Sign", Method: "Sign", Doc: "returns -1, 0 or 1.", Torch: "torch.sign", GradFn: "SignBackward0", Class: Numeric, Cost: Cheap,
		GoF: "signF(x)", GoI: "signI(x)", CF: "ember_sign(x)", CI: "ember_sign(x)"},
	{Name: "square", Const: "Square", Method: "Square", Doc: "returns t*t.", Torch: "torch.square", GradFn: "PowBackward0", Saves: SaveX, Class: Numeric, Cost: Cheap,
		GoF: "x * x", GoI: "x * x", GoVec: "vec.Binary(vec.Mul, dd, aa, aa)", CF: "x * x", CI: "x * x"},
	{Name: "floor", Const: "Floor", Method: "Floor", Doc: "rounds down.", Torch: "torch.floor", GradFn: "FloorBackward0", Class: Numeric, Cost: Cheap,
		GoF: gm("Floor"), GoI: "x", CF: cm("floor"), CI: "x"},
	{Name: "ceil", Const: "Ceil", Method: "Ceil", Doc: "rounds up.", Torch: "torch.ceil", GradFn: "CeilBackward0", Class: Numeric, Cost: Cheap,
		GoF: gm("Ceil"), GoI: "x", CF: cm("ceil"), CI: "x"},
	{Name: "round", Const: "Round", Method: "Round", Doc: "rounds half to even, as torch.round.", Torch: "torch.round", GradFn: "RoundBackward0", Class: Numeric, Cost: Cheap,
		GoF: gm("RoundToEven"), GoI: "x", CF: cm("rint"), CI: "x"},
	{Name: "log1p", Const: "Log1p", Method: "Log1p", Doc: "returns log(1+t).", Torch: "torch.log1p", GradFn: "Log1PBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Log1p"), CF: cm("log1p"), Domain: [2]float64{0.3, 2.5}},
	{Name: "expm1", Const: "Expm1", Method: "Expm1", Doc: "returns e**t - 1.", Torch: "torch.expm1", GradFn: "Expm1Backward0", Saves: SaveY, Class: Float, Cost: Transcendental,
		GoF: gm("Expm1"), CF: cm("expm1")},
	{Name: "erf", Const: "Erf", Method: "Erf", Doc: "returns the error function.", Torch: "torch.erf", GradFn: "ErfBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Erf"), CF: cm("erf")},
	{Name: "reciprocal", Const: "Reciprocal", Method: "Reciprocal", Doc: "returns 1/t.", Torch: "torch.reciprocal", GradFn: "ReciprocalBackward0", Saves: SaveY, Class: Float, Cost: Cheap,
		GoF: "1 / x", GoVec: "vec.ScalarBinary(vec.Div, dd, 1, aa)", CF: "(T)1 / x", Domain: [2]float64{0.3, 2.5}},
	{Name: "logical_not", Const: "LogicalNot", Method: "LogicalNot", Doc: "returns !t (nonzero is true), as Bool.", Torch: "torch.logical_not", Class: Logical, Cost: Cheap,
		GoB: "!x", CB: "!x"},
	{Name: "clamp", Const: "Clamp", Params: []string{"min", "max"}, Torch: "torch.clamp", GradFn: "ClampBackward1", Saves: SaveX, Class: Numeric, Cost: Cheap,
		GoF: "T(clampF(float64(x), p1, p2))", GoI: "clampI(x, p1, p2)", CF: "ember_clampf(x, p1, p2)", CI: "ember_clampi(x, p1, p2)",
		Args: [][]float64{{-0.5, 0.6}}},
	{Name: "pow", Const: "PowScalar", Params: []string{"exponent"}, Torch: "torch.pow", GradFn: "PowBackward0", Saves: SaveX, Class: Numeric, Cost: Transcendental,
		GoF: "T(math.Pow(float64(x), p1))", GoI: "ipow(x, T(p1))", CF: "M<T>::pow(x, (T)p1)", CI: "ember_ipow(x, (T)p1)",
		Args: [][]float64{{3}, {2}, {-1}}, Domain: [2]float64{0.3, 2.5}},
	{Name: "leaky_relu", Const: "LeakyReLU", Method: "LeakyReLU", Params: []string{"slope"}, Doc: "returns t where positive, else slope*t.", Torch: "torch.nn.functional.leaky_relu", GradFn: "LeakyReluBackward0", Saves: SaveX, Class: Float, Cost: Cheap,
		GoF: "leakyF(x, T(p1))", CF: "x > 0 ? x : x * (T)p1", Args: [][]float64{{0.1}}},

	// Added through the table (issue 12).
	{Name: "silu", Const: "SiLU", Method: "SiLU", Doc: "returns t·sigmoid(t), the sigmoid-weighted linear unit (swish).", Torch: "torch.nn.functional.silu", GradFn: "SiluBackward0", Saves: SaveX, Class: FloatStrict, Cost: Transcendental,
		GoF: "x / (1 + T(math.Exp(-float64(x))))", CF: "x / ((T)1 + M<T>::exp(-x))", Module: "SiLU",
		Fixture: "F.silu(x)"},
	{Name: "softplus", Const: "Softplus", Method: "Softplus", Params: []string{"beta", "threshold"}, Doc: "returns log(1+e**(beta·t))/beta, and t itself where beta·t > threshold (PyTorch's defaults are beta 1, threshold 20).", Torch: "torch.nn.functional.softplus", GradFn: "SoftplusBackward0", Saves: SaveX, Class: FloatStrict, Cost: Transcendental,
		GoF: "softplusF(x, p1, p2)", CF: "ember_softplus(x, p1, p2)", Module: "Softplus",
		Fixture: "F.softplus(x, beta, threshold)", Args: [][]float64{{1, 20}, {2, 1}, {0.5, 3}}},
	{Name: "mish", Const: "Mish", Method: "Mish", Doc: "returns t·tanh(softplus(t)).", Torch: "torch.nn.functional.mish", GradFn: "MishBackward0", Saves: SaveX, Class: FloatStrict, Cost: Transcendental,
		GoF: "x * T(math.Tanh(float64(softplusF(x, 1, 20))))", CF: "x * M<T>::tanh(ember_softplus(x, 1.0, 20.0))", Module: "Mish",
		Fixture: "F.mish(x)"},
	{Name: "hardswish", Const: "Hardswish", Method: "Hardswish", Doc: "returns t·relu6(t+3)/6.", Torch: "torch.nn.functional.hardswish", GradFn: "HardswishBackward0", Saves: SaveX, Class: FloatStrict, Cost: Cheap,
		GoF: "x * relu6F(x+3) / 6", CF: "x * ember_relu6(x + (T)3) / (T)6", Module: "Hardswish",
		Fixture: "F.hardswish(x)", Domain: [2]float64{-3.7, 3.7}},
	{Name: "hardsigmoid", Const: "Hardsigmoid", Method: "Hardsigmoid", Doc: "returns relu6(t+3)/6.", Torch: "torch.nn.functional.hardsigmoid", GradFn: "HardsigmoidBackward0", Saves: SaveX, Class: FloatStrict, Cost: Cheap,
		GoF: "relu6F(x+3) / 6", CF: "ember_relu6(x + (T)3) / (T)6", Module: "Hardsigmoid",
		Fixture: "F.hardsigmoid(x)", Domain: [2]float64{-3.7, 3.7}},
	{Name: "elu", Const: "ELU", Method: "ELU", Params: []string{"alpha"}, Doc: "returns t where positive, else alpha·(e**t - 1) (PyTorch's default alpha is 1).", Torch: "torch.nn.functional.elu", GradFn: "EluBackward0", Saves: SaveX, Class: FloatStrict, Cost: Transcendental,
		GoF: "eluF(x, p1)", CF: "x > 0 ? x : (T)p1 * M<T>::expm1(x)", Module: "ELU",
		Fixture: "F.elu(x, alpha)", Args: [][]float64{{1}, {0.5}}},
	{Name: "gelu_tanh", Const: "GELUTanh", Method: "GELUTanh", Doc: "returns GELU's tanh approximation, t/2·(1+tanh(√(2/π)·(t+0.044715·t³))) (approximate=\"tanh\").", Torch: "torch.nn.functional.gelu", GradFn: "GeluBackward0", Saves: SaveX, Class: FloatStrict, Cost: Transcendental,
		GoF: "T(geluTanhF(float64(x)))", CF: "ember_gelu_tanh(x)",
		Fixture: "F.gelu(x, approximate='tanh')"},
	{Name: "log2", Const: "Log2", Method: "Log2", Doc: "returns the base-2 logarithm.", Torch: "torch.log2", GradFn: "Log2Backward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Log2"), CF: cm("log2"), Fixture: "torch.log2(x)", Domain: [2]float64{0.3, 2.5}},
	{Name: "log10", Const: "Log10", Method: "Log10", Doc: "returns the base-10 logarithm.", Torch: "torch.log10", GradFn: "Log10Backward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: "T(log10F(float64(x)))", CF: cm("log10"), Fixture: "torch.log10(x)", Domain: [2]float64{0.3, 2.5}},
	{Name: "exp2", Const: "Exp2", Method: "Exp2", Doc: "returns 2**t.", Torch: "torch.exp2", GradFn: "Exp2Backward0", Saves: SaveY, Class: Float, Cost: Transcendental,
		GoF: gm("Exp2"), CF: cm("exp2"), Fixture: "torch.exp2(x)"},
	{Name: "trunc", Const: "Trunc", Method: "Trunc", Doc: "rounds toward zero.", Torch: "torch.trunc", GradFn: "TruncBackward0", Class: Numeric, NoBool: true, Cost: Cheap,
		GoF: gm("Trunc"), GoI: "x", CF: cm("trunc"), CI: "x", Fixture: "torch.trunc(x)"},
	{Name: "isnan", Const: "IsNaN", Method: "IsNaN", Doc: "reports, as Bool, where t is NaN.", Torch: "torch.isnan", Class: Predicate, Cost: Cheap,
		GoF: "x != x", GoI: "false", GoB: "false", CF: "x != x", CI: "false", CB: "false", Fixture: "torch.isnan(x)"},
	{Name: "isinf", Const: "IsInf", Method: "IsInf", Doc: "reports, as Bool, where t is +Inf or -Inf.", Torch: "torch.isinf", Class: Predicate, Cost: Cheap,
		GoF: "math.IsInf(float64(x), 0)", GoI: "false", GoB: "false", CF: "(x == M<T>::inf() || x == -M<T>::inf())", CI: "false", CB: "false", Fixture: "torch.isinf(x)"},
	{Name: "nan_to_num", Const: "NanToNum", Method: "NanToNum", Params: []string{"nan", "posinf", "neginf"}, Doc: "replaces NaN by nan, +Inf by posinf and -Inf by neginf. As torch.nan_to_num's default (None), posinf = +Inf means the dtype's largest finite value and neginf = -Inf its lowest; integer and bool tensors are returned unchanged in value.", Torch: "torch.nan_to_num", GradFn: "NanToNumBackward0", Saves: SaveX, Class: All, Cost: Cheap,
		GoF: "nanToNumF(x, p1, p2, p3)", GoI: "x", GoB: "x", CF: "ember_nan_to_num(x, p1, p2, p3)", CI: "x", CB: "x",
		Fixture: "torch.nan_to_num(x, nan, None if posinf == float('inf') else posinf, None if neginf == float('-inf') else neginf)",
		Args:    [][]float64{{0, inf, -inf}, {-1, 100, -100}, {2.5, 1e30, -7}}},
	{Name: "tan", Const: "Tan", Method: "Tan", Doc: "returns the tangent.", Torch: "torch.tan", GradFn: "TanBackward0", Saves: SaveY, Class: Float, Cost: Transcendental,
		GoF: gm("Tan"), CF: cm("tan"), Fixture: "torch.tan(x)", Domain: [2]float64{-1.2, 1.2}},
	{Name: "asin", Const: "Asin", Method: "Asin", Doc: "returns the arcsine (NaN outside [-1, 1]).", Torch: "torch.asin", GradFn: "AsinBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Asin"), CF: cm("asin"), Fixture: "torch.asin(x)", Domain: [2]float64{-0.9, 0.9}},
	{Name: "acos", Const: "Acos", Method: "Acos", Doc: "returns the arccosine (NaN outside [-1, 1]).", Torch: "torch.acos", GradFn: "AcosBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Acos"), CF: cm("acos"), Fixture: "torch.acos(x)", Domain: [2]float64{-0.9, 0.9}},
	{Name: "atan", Const: "Atan", Method: "Atan", Doc: "returns the arctangent.", Torch: "torch.atan", GradFn: "AtanBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Atan"), CF: cm("atan"), Fixture: "torch.atan(x)"},
	{Name: "sinh", Const: "Sinh", Method: "Sinh", Doc: "returns the hyperbolic sine.", Torch: "torch.sinh", GradFn: "SinhBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Sinh"), CF: cm("sinh"), Fixture: "torch.sinh(x)"},
	{Name: "cosh", Const: "Cosh", Method: "Cosh", Doc: "returns the hyperbolic cosine.", Torch: "torch.cosh", GradFn: "CoshBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Cosh"), CF: cm("cosh"), Fixture: "torch.cosh(x)"},
	{Name: "asinh", Const: "Asinh", Method: "Asinh", Doc: "returns the inverse hyperbolic sine.", Torch: "torch.asinh", GradFn: "AsinhBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Asinh"), CF: cm("asinh"), Fixture: "torch.asinh(x)"},
	{Name: "acosh", Const: "Acosh", Method: "Acosh", Doc: "returns the inverse hyperbolic cosine (NaN below 1).", Torch: "torch.acosh", GradFn: "AcoshBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Acosh"), CF: cm("acosh"), Fixture: "torch.acosh(x)", Domain: [2]float64{1.2, 3}},
	{Name: "atanh", Const: "Atanh", Method: "Atanh", Doc: "returns the inverse hyperbolic tangent (NaN outside [-1, 1]).", Torch: "torch.atanh", GradFn: "AtanhBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Atanh"), CF: cm("atanh"), Fixture: "torch.atanh(x)", Domain: [2]float64{-0.9, 0.9}},

	// Special functions: digamma, erfinv and polygamma's zeta in float64 for every float dtype, Go and C alike.
	{Name: "lgamma", Const: "Lgamma", Method: "Lgamma", Doc: "returns log|Γ(t)|, the log of the gamma function's absolute value (+Inf at 0 and the negative integers).", Torch: "torch.lgamma", GradFn: "LgammaBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: "T(lgammaF(float64(x)))", CF: cm("lgamma"), Fixture: "torch.lgamma(x)", Domain: [2]float64{0.3, 3}},
	{Name: "digamma", Const: "Digamma", Method: "Digamma", Doc: "returns ψ(t), the derivative of lgamma (∓Inf at ±0, NaN at the negative integers).", Torch: "torch.digamma", GradFn: "DigammaBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: "T(digammaF(float64(x)))", CF: "(T)ember_digamma((double)x)", Fixture: "torch.digamma(x)", Domain: [2]float64{0.3, 3}},
	{Name: "polygamma", Const: "Polygamma", Params: []string{"n"}, Torch: "torch.polygamma", GradFn: "PolygammaBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: "polygammaF(p1, x)", CF: "ember_polygamma(p1, x)", Fixture: "torch.polygamma(int(n), x)",
		Args: [][]float64{{0}, {1}, {2}, {3}}, Domain: [2]float64{0.3, 3}},
	{Name: "erfc", Const: "Erfc", Method: "Erfc", Doc: "returns the complementary error function, 1 - erf(t) without its cancellation.", Torch: "torch.erfc", GradFn: "ErfcBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: gm("Erfc"), CF: cm("erfc"), Fixture: "torch.erfc(x)"},
	{Name: "erfinv", Const: "Erfinv", Method: "Erfinv", Doc: "returns the inverse error function (±Inf at ±1, NaN outside [-1, 1]).", Torch: "torch.erfinv", GradFn: "ErfinvBackward0", Saves: SaveY, Class: Float, Cost: Transcendental,
		GoF: "T(erfinvF(float64(x)))", CF: "(T)ember_erfinv((double)x)", Fixture: "torch.erfinv(x)", Domain: [2]float64{-0.9, 0.9}},
	{Name: "sinc", Const: "Sinc", Method: "Sinc", Doc: "returns the normalized sinc, sin(πt)/(πt), and 1 at 0.", Torch: "torch.sinc", GradFn: "SincBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: "sincF(x)", CF: "ember_sinc(x)", Fixture: "torch.sinc(x)"},
	{Name: "logit", Const: "Logit", Method: "Logit", Params: []string{"eps"}, Doc: "returns log(t/(1-t)), t first clamped to [eps, 1-eps]; a negative eps clamps nothing (torch.logit's eps=None).", Torch: "torch.logit", GradFn: "LogitBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: "logitF(x, T(p1), p1 < 0)", CF: "ember_logit(x, p1)", Fixture: "torch.logit(x, None if eps < 0 else eps)",
		Args: [][]float64{{-1}, {0.1}, {0}}, Domain: [2]float64{0.2, 0.8}},

	// Small elementwise ops (torch 1.13 parity).
	{Name: "bitwise_not", Const: "BitwiseNot", Method: "BitwiseNot", Doc: "returns ~t, the bitwise complement of an integer tensor, or logical not of a Bool one (floats are a *DTypeError).", Torch: "torch.bitwise_not", Class: All, Cost: Cheap,
		GoI: "^x", GoB: "!x", CI: "~x", CB: "!x", Fixture: "torch.bitwise_not(x)"},
	{Name: "deg2rad", Const: "Deg2rad", Method: "Deg2rad", Doc: "converts angles in degrees to radians, t·π/180.", Torch: "torch.deg2rad", GradFn: "Deg2RadBackward0", Class: Float, Cost: Cheap,
		GoF: "x * T(math.Pi/180)", CF: "x * (T)0.017453292519943295", Fixture: "torch.deg2rad(x)"},
	{Name: "rad2deg", Const: "Rad2deg", Method: "Rad2deg", Doc: "converts angles in radians to degrees, t·180/π.", Torch: "torch.rad2deg", GradFn: "Rad2DegBackward0", Class: Float, Cost: Cheap,
		GoF: "x * T(180/math.Pi)", CF: "x * (T)57.29577951308232", Fixture: "torch.rad2deg(x)"},
	{Name: "isfinite", Const: "IsFinite", Method: "IsFinite", Doc: "reports, as Bool, where t is neither NaN nor ±Inf (always true for integers and Bool).", Torch: "torch.isfinite", Class: Predicate, Cost: Cheap,
		GoF: "x == x && !math.IsInf(float64(x), 0)", GoI: "true", GoB: "true", CF: "(x == x && x != M<T>::inf() && x != -M<T>::inf())", CI: "true", CB: "true", Fixture: "torch.isfinite(x)"},
	{Name: "isposinf", Const: "IsPosInf", Method: "IsPosInf", Doc: "reports, as Bool, where t is +Inf.", Torch: "torch.isposinf", Class: Predicate, Cost: Cheap,
		GoF: "math.IsInf(float64(x), 1)", GoI: "false", GoB: "false", CF: "x == M<T>::inf()", CI: "false", CB: "false", Fixture: "torch.isposinf(x)"},
	{Name: "isneginf", Const: "IsNegInf", Method: "IsNegInf", Doc: "reports, as Bool, where t is -Inf.", Torch: "torch.isneginf", Class: Predicate, Cost: Cheap,
		GoF: "math.IsInf(float64(x), -1)", GoI: "false", GoB: "false", CF: "x == -M<T>::inf()", CI: "false", CB: "false", Fixture: "torch.isneginf(x)"},
	{Name: "signbit", Const: "Signbit", Method: "Signbit", Doc: "reports, as Bool, where t's sign bit is set (true for -0 and a negative NaN).", Torch: "torch.signbit", Class: Predicate, Cost: Cheap,
		GoF: "signbitF(x)", GoI: "x < 0", GoB: "false", CF: "M<T>::signbit(x)", CI: "x < 0", CB: "false", Fixture: "torch.signbit(x)"},
}

var inf = math.Inf(1)

// Binaries is the table of binary ops, in enum order.
var Binaries = []Binary{
	{Name: "add", Const: "Add", Method: "Add", Doc: "returns t + o, broadcast.", Torch: "torch.add", GradFn: "AddBackward0", Class: Numeric, Cost: Cheap,
		GoF: "x + y", GoI: "x + y", GoVec: "Add", CF: "x + y", CI: "x + y"},
	{Name: "sub", Const: "Sub", Method: "Sub", Doc: "returns t - o, broadcast.", Torch: "torch.sub", GradFn: "SubBackward0", Class: Numeric, Cost: Cheap,
		GoF: "x - y", GoI: "x - y", GoVec: "Sub", CF: "x - y", CI: "x - y"},
	{Name: "mul", Const: "Mul", Method: "Mul", Doc: "returns t * o, broadcast.", Torch: "torch.mul", GradFn: "MulBackward0", Saves: SaveCross, Class: Numeric, Cost: Cheap,
		GoF: "x * y", GoI: "x * y", GoVec: "Mul", CF: "x * y", CI: "x * y"},
	{Name: "div", Const: "Div", Method: "Div", Doc: "returns t / o (true division: integers give Float32), broadcast.", Torch: "torch.div", GradFn: "DivBackward0", Saves: SaveX, Class: Float, Cost: Cheap,
		GoF: "x / y", GoVec: "Div", CF: "x / y"},
	{Name: "pow", Const: "Pow", Method: "Pow", Doc: "returns t ** o, broadcast.", Torch: "torch.pow", GradFn: "PowBackward1", Saves: SaveX | SaveY, Class: Numeric, Cost: Transcendental,
		GoF: "T(math.Pow(float64(x), float64(y)))", GoI: "ipow(x, y)", CF: "M<T>::pow(x, y)", CI: "ember_ipow(x, y)"},
	{Name: "maximum", Const: "Maximum", Method: "Maximum", Doc: "returns the elementwise maximum (NaN propagates).", Torch: "torch.maximum", GradFn: "MaximumBackward0", Saves: SaveX, Class: Numeric, Cost: Cheap,
		GoF: "maxF(x, y)", GoI: "max(x, y)", CF: "ember_maxf(x, y)", CI: "x > y ? x : y"},
	{Name: "minimum", Const: "Minimum", Method: "Minimum", Doc: "returns the elementwise minimum (NaN propagates).", Torch: "torch.minimum", GradFn: "MinimumBackward0", Saves: SaveX, Class: Numeric, Cost: Cheap,
		GoF: "minF(x, y)", GoI: "min(x, y)", CF: "ember_minf(x, y)", CI: "x < y ? x : y"},
	{Name: "atan2", Const: "Atan2", Method: "Atan2", Doc: "returns atan2(t, o).", Torch: "torch.atan2", GradFn: "Atan2Backward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: "T(math.Atan2(float64(x), float64(y)))", CF: "M<T>::atan2(x, y)"},
	{Name: "remainder", Const: "Remainder", Method: "Remainder", Doc: "returns t mod o with the sign of o (torch.remainder); an integer divisor of 0 panics with a *ValueError (ZeroDivisionError).", Torch: "torch.remainder", GradFn: "RemainderBackward1", Saves: SaveX, Class: Numeric, Cost: Transcendental,
		GoF: "T(remF(float64(x), float64(y)))", GoI: "remI(x, y)", CF: "(T)ember_remf((double)x, (double)y)", CI: "ember_remi(x, y)"},
	{Name: "floor_divide", Const: "FloorDiv", Method: "FloorDivide", Doc: "returns t // o, floor(t / o) as Python and torch.floor_divide compute it (the quotient of t - fmod(t, o): 1 // 0.1 is 9, -5 // inf is -1); an integer divisor of 0 panics with a *ValueError (ZeroDivisionError).", Torch: "torch.floor_divide", Class: Numeric, Cost: Cheap,
		GoF: "T(floorDivF(float64(x), float64(y)))", GoI: "floorDivI(x, y)", CF: "(T)ember_floordivf((double)x, (double)y)", CI: "ember_floordivi(x, y)"},
	{Name: "logical_and", Const: "LogicalAnd", Method: "LogicalAnd", Doc: "is the elementwise and (nonzero is true), as Bool.", Torch: "torch.logical_and", Class: Logical, Cost: Cheap,
		GoB: "x && y", CB: "x && y"},
	{Name: "logical_or", Const: "LogicalOr", Method: "LogicalOr", Doc: "is the elementwise or (nonzero is true), as Bool.", Torch: "torch.logical_or", Class: Logical, Cost: Cheap,
		GoB: "x || y", CB: "x || y"},
	{Name: "logical_xor", Const: "LogicalXor", Method: "LogicalXor", Doc: "is the elementwise exclusive or (nonzero is true), as Bool.", Torch: "torch.logical_xor", Class: Logical, Cost: Cheap,
		GoB: "x != y", CB: "x != y"},
	{Name: "eq", Const: "Eq", Method: "Eq", Doc: "returns t == o elementwise, as Bool.", Torch: "torch.eq", Class: Compare, Cost: Cheap,
		GoF: "x == y", GoI: "x == y", GoB: "x == y", CF: "x == y", CI: "x == y", CB: "x == y"},
	{Name: "ne", Const: "Ne", Method: "Ne", Doc: "returns t != o elementwise, as Bool.", Torch: "torch.ne", Class: Compare, Cost: Cheap,
		GoF: "x != y", GoI: "x != y", GoB: "x != y", CF: "x != y", CI: "x != y", CB: "x != y"},
	{Name: "lt", Const: "Lt", Method: "Lt", Doc: "returns t < o elementwise, as Bool.", Torch: "torch.lt", Class: Compare, Cost: Cheap,
		GoF: "x < y", GoI: "x < y", CF: "x < y", CI: "x < y"},
	{Name: "le", Const: "Le", Method: "Le", Doc: "returns t <= o elementwise, as Bool.", Torch: "torch.le", Class: Compare, Cost: Cheap,
		GoF: "x <= y", GoI: "x <= y", CF: "x <= y", CI: "x <= y"},
	{Name: "gt", Const: "Gt", Method: "Gt", Doc: "returns t > o elementwise, as Bool.", Torch: "torch.gt", Class: Compare, Cost: Cheap,
		GoF: "x > y", GoI: "x > y", CF: "x > y", CI: "x > y"},
	{Name: "ge", Const: "Ge", Method: "Ge", Doc: "returns t >= o elementwise, as Bool.", Torch: "torch.ge", Class: Compare, Cost: Cheap,
		GoF: "x >= y", GoI: "x >= y", CF: "x >= y", CI: "x >= y"},

	// Added through the table (issue 12).
	{Name: "fmod", Const: "Fmod", Method: "Fmod", Doc: "returns the remainder of t / o with the sign of t (C's fmod, torch.fmod); an integer divisor of 0 panics with a *ValueError (ZeroDivisionError).", Torch: "torch.fmod", GradFn: "FmodBackward1", Saves: SaveX, Class: Numeric, Cost: Transcendental,
		GoF: "T(math.Mod(float64(x), float64(y)))", GoI: "fmodI(x, y)", CF: "M<T>::fmod(x, y)", CI: "ember_fmodi(x, y)",
		Fixture: "torch.fmod(x, y)", Domain: [2]float64{0.3, 2.3}},
	{Name: "hypot", Const: "Hypot", Method: "Hypot", Doc: "returns sqrt(t² + o²) without overflow.", Torch: "torch.hypot", GradFn: "HypotBackward0", Saves: SaveX | SaveY, Class: FloatStrict, Cost: Transcendental,
		GoF: "T(math.Hypot(float64(x), float64(y)))", CF: "M<T>::hypot(x, y)", Fixture: "torch.hypot(x, y)"},
	{Name: "copysign", Const: "Copysign", Method: "Copysign", Doc: "returns |t| with the sign of o (integers give Float32).", Torch: "torch.copysign", GradFn: "CopysignBackward0", Saves: SaveX | SaveY, Class: Float, Cost: Cheap,
		GoF: "T(math.Copysign(float64(x), float64(y)))", CF: "M<T>::copysign(x, y)", Fixture: "torch.copysign(x, y)"},
	{Name: "xlogy", Const: "Xlogy", Method: "Xlogy", Doc: "returns t·log(o), 0 where t is 0 (unless o is NaN), broadcast.", Torch: "torch.xlogy", GradFn: "XlogyBackward0", Saves: SaveX, Class: Float, Cost: Transcendental,
		GoF: "xlogyF(x, y)", CF: "ember_xlogy(x, y)", Fixture: "torch.xlogy(x, y)"},

	// Small elementwise ops (torch 1.13 parity). The kernels have no
	// Bool-to-Bool loops outside the Logical class: for two Bool operands
	// the root runs fmax, fmin, heaviside and bitwise_and/or/xor as the
	// logical op of the same truth table (ops.go's binary).
	{Name: "logaddexp", Const: "Logaddexp", Method: "Logaddexp", Doc: "returns log(e**t + e**o) without overflow, broadcast.", Torch: "torch.logaddexp", GradFn: "LogaddexpBackward0", Saves: SaveX, Class: FloatStrict, Cost: Transcendental,
		GoF: "logaddexpF(x, y, false)", CF: "ember_logaddexp(x, y, false)", Fixture: "torch.logaddexp(x, y)"},
	{Name: "logaddexp2", Const: "Logaddexp2", Method: "Logaddexp2", Doc: "returns log2(2**t + 2**o) without overflow, broadcast.", Torch: "torch.logaddexp2", GradFn: "Logaddexp2Backward0", Saves: SaveX, Class: FloatStrict, Cost: Transcendental,
		GoF: "logaddexpF(x, y, true)", CF: "ember_logaddexp(x, y, true)", Fixture: "torch.logaddexp2(x, y)"},
	{Name: "fmax", Const: "Fmax", Method: "Fmax", Doc: "returns the elementwise maximum ignoring NaN: the other operand where one is NaN, NaN only where both are.", Torch: "torch.fmax", GradFn: "FmaxBackward0", Saves: SaveX, Class: All, Cost: Cheap,
		GoF: "fmaxF(x, y)", GoI: "max(x, y)", CF: "ember_fmax(x, y)", CI: "x > y ? x : y", Fixture: "torch.fmax(x, y)"},
	{Name: "fmin", Const: "Fmin", Method: "Fmin", Doc: "returns the elementwise minimum ignoring NaN: the other operand where one is NaN, NaN only where both are.", Torch: "torch.fmin", GradFn: "FminBackward0", Saves: SaveX, Class: All, Cost: Cheap,
		GoF: "fminF(x, y)", GoI: "min(x, y)", CF: "ember_fmin(x, y)", CI: "x < y ? x : y", Fixture: "torch.fmin(x, y)"},
	{Name: "heaviside", Const: "Heaviside", Torch: "torch.heaviside", Class: All, Cost: Cheap,
		GoF: "heaviside(x, y)", GoI: "heaviside(x, y)", CF: "(x == (T)0 ? y : (T)(x > (T)0))", CI: "(x == 0 ? y : (T)(x > 0))"},
	{Name: "bitwise_and", Const: "BitwiseAnd", Method: "BitwiseAnd", Doc: "returns t & o of integer or Bool tensors, broadcast (floats are a *DTypeError).", Torch: "torch.bitwise_and", Class: All, Cost: Cheap,
		GoI: "x & y", CI: "x & y", Fixture: "torch.bitwise_and(x, y)"},
	{Name: "bitwise_or", Const: "BitwiseOr", Method: "BitwiseOr", Doc: "returns t | o of integer or Bool tensors, broadcast (floats are a *DTypeError).", Torch: "torch.bitwise_or", Class: All, Cost: Cheap,
		GoI: "x | y", CI: "x | y", Fixture: "torch.bitwise_or(x, y)"},
	{Name: "bitwise_xor", Const: "BitwiseXor", Method: "BitwiseXor", Doc: "returns t ^ o of integer or Bool tensors, broadcast (floats are a *DTypeError).", Torch: "torch.bitwise_xor", Class: All, Cost: Cheap,
		GoI: "x ^ y", CI: "x ^ y", Fixture: "torch.bitwise_xor(x, y)"},
	{Name: "bitwise_left_shift", Const: "LeftShift", Method: "LeftShift", Doc: "returns t << o of integer tensors (Bool promotes to Int64), broadcast; the shift count is taken modulo the bit width, as torch 1.13 on the CPU computes it.", Torch: "torch.bitwise_left_shift", Class: Numeric, Cost: Cheap,
		GoI: "shlI(x, y)", CI: "ember_shl(x, y)", Fixture: "torch.bitwise_left_shift(x, y)"},
	{Name: "bitwise_right_shift", Const: "RightShift", Method: "RightShift", Doc: "returns t >> o (arithmetic) of integer tensors (Bool promotes to Int64), broadcast; the shift count is taken modulo the bit width, as torch 1.13 on the CPU computes it.", Torch: "torch.bitwise_right_shift", Class: Numeric, Cost: Cheap,
		GoI: "shrI(x, y)", CI: "ember_shr(x, y)", Fixture: "torch.bitwise_right_shift(x, y)"},
	{Name: "gcd", Const: "Gcd", Method: "Gcd", Doc: "returns the greatest common divisor of integer tensors (non-negative, except for the lowest integer), broadcast.", Torch: "torch.gcd", Class: Numeric, Cost: Transcendental,
		GoI: "gcdI(x, y)", CI: "ember_gcd(x, y)", Fixture: "torch.gcd(x, y)"},
	{Name: "lcm", Const: "Lcm", Method: "Lcm", Doc: "returns the least common multiple of integer tensors, |t/gcd·o| (0 where either is 0), broadcast.", Torch: "torch.lcm", Class: Numeric, Cost: Transcendental,
		GoI: "lcmI(x, y)", CI: "ember_lcm(x, y)", Fixture: "torch.lcm(x, y)"},
}

// Reduces is the table of reductions, in enum order.
var Reduces = []Reduce{
	{Name: "sum", Const: "Sum", Out: "same", Ints: true},
	{Name: "prod", Const: "Prod", Out: "same", Ints: true},
	{Name: "max", Const: "Max", Out: "same", Ints: true},
	{Name: "min", Const: "Min", Out: "same", Ints: true},
	{Name: "argmax", Const: "ArgMax", Out: "int64", Ints: true},
	{Name: "argmin", Const: "ArgMin", Out: "int64", Ints: true},
	{Name: "any", Const: "Any", Out: "bool", Bools: true},
	{Name: "all", Const: "All", Out: "bool", Bools: true},
}
