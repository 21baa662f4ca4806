package embertest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/emberml/ember"
)

// Case is one fixture case written by testdata/gen_fixtures.py.
type Case struct {
	File      string         `json:"-"`
	Name      string         `json:"name"`
	Op        string         `json:"op"`
	Inputs    []Input        `json:"inputs"`
	Args      map[string]any `json:"args"`
	Out       *Result        `json:"out"`
	Outs      []Result       `json:"outs"`
	Error     string         `json:"error"`
	ViewOK    *bool          `json:"view_ok"`
	ViewShape []any          `json:"view_shape"`
	Str       *string        `json:"str"`
	// Gradient cases: the grad_fn PyTorch recorded and the gradients of
	// sum(out · GradW) with respect to each input.
	GradFn string   `json:"grad_fn"`
	GradW  []any    `json:"grad_w"`
	Grads  []Result `json:"grads"`
}

// Input is a contiguous base tensor and the view steps that make the operand.
type Input struct {
	Shape  []int   `json:"shape"`
	DType  string  `json:"dtype"`
	Data   []any   `json:"data"`
	Views  [][]any `json:"views"`
	Arange *struct {
		Div float64 `json:"div"`
		Mod float64 `json:"mod"`
	} `json:"arange"`
}

// Result is PyTorch's output.
type Result struct {
	Shape   []int  `json:"shape"`
	DType   string `json:"dtype"`
	Data    []any  `json:"data"`
	Strides []int  `json:"strides"`
}

// FixtureDir is the folder holding the fixture files: $EMBER_FIXTURES_DIR
// when set (for test binaries run away from the source tree, as in
// scripts/gpu-check.sh's bundle), else testdata/fixtures next to the source.
func FixtureDir() string {
	if d := os.Getenv("EMBER_FIXTURES_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "fixtures")
}

var (
	loadOnce sync.Once
	loaded   []Case
	loadErr  error
)

// Cases returns every fixture case, in file then case order.
func Cases() ([]Case, error) {
	loadOnce.Do(func() {
		files, err := filepath.Glob(filepath.Join(FixtureDir(), "*.json"))
		if err != nil || len(files) == 0 {
			loadErr = fmt.Errorf("no fixtures in %s (run /usr/bin/python3 testdata/gen_fixtures.py): %v", FixtureDir(), err)
			return
		}
		sort.Strings(files)
		for _, f := range files {
			if strings.HasPrefix(filepath.Base(f), "grad_") {
				continue // the autograd fixtures, read by the root package's gradient tests
			}
			b, err := os.ReadFile(f)
			if err != nil {
				loadErr = err
				return
			}
			var ff struct {
				Cases []Case `json:"cases"`
			}
			if err := json.Unmarshal(b, &ff); err != nil {
				loadErr = fmt.Errorf("%s: %w", f, err)
				return
			}
			for i := range ff.Cases {
				ff.Cases[i].File = filepath.Base(f)
			}
			loaded = append(loaded, ff.Cases...)
		}
	})
	return loaded, loadErr
}

func dtypeOf(s string) ember.DType {
	switch s {
	case "float32":
		return ember.Float32
	case "float64":
		return ember.Float64
	case "int64":
		return ember.Int64
	case "int32":
		return ember.Int32
	case "bool":
		return ember.Bool
	}
	panic("unknown dtype " + s)
}

// num decodes a JSON number, bool or "nan"/"inf"/"-inf".
func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
		return 0
	case string:
		switch x {
		case "nan":
			return math.NaN()
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		}
	case nil:
		return 0
	}
	panic(fmt.Sprintf("bad fixture value %v (%T)", v, v))
}

func nums(data []any) []float64 {
	out := make([]float64, len(data))
	for i, v := range data {
		out[i] = num(v)
	}
	return out
}

// values returns the input's base values.
func (in Input) values() []float64 {
	if in.Arange == nil {
		return nums(in.Data)
	}
	n := ember.Shape(in.Shape).NumElements()
	out := make([]float64, n)
	for i := range out {
		v := float64(i)
		if in.Arange.Mod != 0 {
			v = math.Mod(v, in.Arange.Mod)
		}
		div := in.Arange.Div
		if div == 0 {
			div = 1
		}
		out[i] = v / div
	}
	return out
}

// build makes the operand on dev: FromSlice of the base, then the view steps.
func (in Input) build(dev ember.Device) *ember.Tensor {
	vals := in.values()
	shape := ember.Shape(append([]int{}, in.Shape...))
	var t *ember.Tensor
	switch dtypeOf(in.DType) {
	case ember.Float32:
		d := make([]float32, len(vals))
		for i, v := range vals {
			d[i] = float32(v)
		}
		t = ember.FromSlice(d, shape, ember.On(dev))
	case ember.Float64:
		t = ember.FromSlice(vals, shape, ember.On(dev))
	case ember.Int64:
		d := make([]int64, len(vals))
		for i, v := range vals {
			d[i] = int64(v)
		}
		t = ember.FromSlice(d, shape, ember.On(dev))
	case ember.Int32:
		d := make([]int32, len(vals))
		for i, v := range vals {
			d[i] = int32(v)
		}
		t = ember.FromSlice(d, shape, ember.On(dev))
	case ember.Bool:
		d := make([]bool, len(vals))
		for i, v := range vals {
			d[i] = v != 0
		}
		t = ember.FromSlice(d, shape, ember.On(dev))
	}
	for _, v := range in.Views {
		switch v[0] {
		case "transpose":
			t = t.Transpose(int(num(v[1])), int(num(v[2])))
		case "slice":
			start, end := sliceBounds(v[2], v[3])
			t = t.Slice(int(num(v[1])), start, end, int(num(v[4])))
		case "expand":
			t = t.Expand(intList(v[1])...)
		default:
			panic(fmt.Sprintf("unknown view step %v", v))
		}
	}
	return t
}

// sliceBounds maps Python's None bounds to ember's clamped ints.
func sliceBounds(s, e any) (int, int) {
	start, end := 0, math.MaxInt32
	if s != nil {
		start = int(num(s))
	}
	if e != nil {
		end = int(num(e))
	}
	return start, end
}

func intList(v any) []int {
	if v == nil {
		return nil
	}
	l := v.([]any)
	out := make([]int, len(l))
	for i, x := range l {
		out[i] = int(num(x))
	}
	return out
}

func (c Case) arg(name string) any { return c.Args[name] }

func (c Case) intArg(name string) int { return int(num(c.Args[name])) }

func (c Case) boolArg(name string) bool {
	b, _ := c.Args[name].(bool)
	return b
}

func (c Case) floatArg(name string) float64 { return num(c.Args[name]) }

func (c Case) reduceOpts() []ember.ReduceOption {
	var opts []ember.ReduceOption
	if d, ok := c.Args["dims"]; ok {
		opts = append(opts, ember.Dims(intList(d)...))
	}
	if c.boolArg("keepdim") {
		opts = append(opts, ember.KeepDim())
	}
	if _, ok := c.Args["correction"]; ok {
		opts = append(opts, ember.Correction(c.floatArg("correction")))
	}
	return opts
}

// apply runs the case's op on its operands.
func (c Case) apply(in []*ember.Tensor) []*ember.Tensor {
	one := func(t *ember.Tensor) []*ember.Tensor { return []*ember.Tensor{t} }
	x := in[0]
	var y *ember.Tensor
	if len(in) > 1 {
		y = in[1]
	}
	if out, ok := tableOp(c, in); ok {
		return one(out)
	}
	switch c.Op {
	case "where":
		return one(ember.Where(x, y, in[2]))
	case "add_scalar":
		return one(x.AddScalar(c.floatArg("scalar")))
	case "sub_scalar":
		return one(x.SubScalar(c.floatArg("scalar")))
	case "mul_scalar":
		return one(x.MulScalar(c.floatArg("scalar")))
	case "div_scalar":
		return one(x.DivScalar(c.floatArg("scalar")))
	case "rsub_scalar":
		return one(x.RSubScalar(c.floatArg("scalar")))
	case "eq_scalar":
		return one(x.EqScalar(c.floatArg("scalar")))
	case "lt_scalar":
		return one(x.LtScalar(c.floatArg("scalar")))
	case "gt_scalar":
		return one(x.GtScalar(c.floatArg("scalar")))
	case "clamp":
		return one(x.Clamp(c.floatArg("min"), c.floatArg("max")))
	case "pow_scalar":
		return one(x.PowScalar(c.floatArg("exponent")))
	case "polygamma":
		return one(x.Polygamma(int(c.floatArg("n"))))
	// reductions
	case "sum":
		return one(x.Sum(c.reduceOpts()...))
	case "mean":
		return one(x.Mean(c.reduceOpts()...))
	case "prod":
		return one(x.Prod(c.reduceOpts()...))
	case "max":
		return one(x.Max(c.reduceOpts()...))
	case "min":
		return one(x.Min(c.reduceOpts()...))
	case "var":
		return one(x.Var(c.reduceOpts()...))
	case "std":
		return one(x.Std(c.reduceOpts()...))
	case "any":
		return one(x.Any(c.reduceOpts()...))
	case "all":
		return one(x.All(c.reduceOpts()...))
	case "argmax", "argmin":
		if _, ok := c.Args["dim"]; !ok {
			if c.Op == "argmax" {
				return one(x.ArgMax())
			}
			return one(x.ArgMin())
		}
		if c.Op == "argmax" {
			return one(x.ArgMaxDim(c.intArg("dim"), c.boolArg("keepdim")))
		}
		return one(x.ArgMinDim(c.intArg("dim"), c.boolArg("keepdim")))
	case "softmax":
		return one(x.Softmax(c.intArg("dim")))
	case "log_softmax":
		return one(x.LogSoftmax(c.intArg("dim")))
	case "matmul":
		return one(x.MatMul(y))
	// views
	case "reshape":
		return one(x.Reshape(intList(c.arg("shape"))...))
	case "view":
		return one(x.View(intList(c.arg("shape"))...))
	case "transpose":
		return one(x.Transpose(c.intArg("d0"), c.intArg("d1")))
	case "permute":
		return one(x.Permute(intList(c.arg("perm"))...))
	case "squeeze":
		return one(x.Squeeze(intList(c.arg("dims"))...))
	case "unsqueeze":
		return one(x.Unsqueeze(c.intArg("dim")))
	case "expand":
		return one(x.Expand(intList(c.arg("shape"))...))
	case "narrow":
		return one(x.Narrow(c.intArg("dim"), c.intArg("start"), c.intArg("length")))
	case "slice":
		s, e := sliceBounds(c.arg("start"), c.arg("end"))
		return one(x.Slice(c.intArg("dim"), s, e, c.intArg("step")))
	case "select":
		return one(x.Select(c.intArg("dim"), c.intArg("index")))
	case "index":
		return one(x.Index(intList(c.arg("index"))...))
	case "flatten":
		return one(x.Flatten(c.intArg("start"), c.intArg("end")))
	case "t":
		return one(x.T())
	case "split":
		return x.Split(c.intArg("size"), c.intArg("dim"))
	case "chunk":
		return x.Chunk(c.intArg("chunks"), c.intArg("dim"))
	case "cat":
		return one(ember.Cat(in, c.intArg("dim")))
	case "stack":
		return one(ember.Stack(in, c.intArg("dim")))
	}
	if out, ok := indexOp(c, in); ok {
		return out
	}
	panic("embertest: unknown fixture op " + c.Op)
}

// tolerance returns (rtol, atol) for comparing op's output of dtype dt.
func tolerance(op string, dt ember.DType) (float64, float64) {
	loose := transcendental[op] // the op table's transcendental rows; the others:
	switch op {
	case "pow_scalar", "softmax", "log_softmax", "var", "std", "mean", "sum", "prod", "matmul", "reciprocal", "div", "div_scalar",
		"cumsum", "cumprod", "einsum", "bmm", "baddbmm", "scatter_add", "index_add":
		loose = true
	}
	switch dt {
	case ember.Float32:
		if loose {
			return 1e-5, 1e-5
		}
		return 1e-5, 1e-6
	case ember.Float64:
		if loose {
			return 1e-10, 1e-12
		}
		return 1e-12, 1e-14
	}
	return 0, 0
}
