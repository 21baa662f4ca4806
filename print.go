package ember

import (
	"fmt"
	"math"
	"strings"
)

// Printing follows torch/_tensor_str.py with PyTorch's default print
// options: precision 4, threshold 1000 elements, 3 edge items, line width 80.
const (
	printPrecision = 4
	printThreshold = 1000
	printEdge      = 3
	printLineWidth = 80
)

type formatter struct {
	floating bool
	intMode  bool
	sciMode  bool
	width    int
}

func pyFloat(v float64, verb string, prec int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return fmt.Sprintf("%."+fmt.Sprint(prec)+verb, v)
}

func newFormatter(vals []float64, strs []string, floating bool) *formatter {
	f := &formatter{floating: floating, intMode: true, width: 1}
	if !floating {
		for _, s := range strs {
			f.width = max(f.width, len(s))
		}
		return f
	}
	var nz []float64
	for _, v := range vals {
		if !math.IsInf(v, 0) && !math.IsNaN(v) && v != 0 {
			nz = append(nz, v)
		}
	}
	if len(nz) == 0 {
		return f
	}
	lo, hi := math.Inf(1), 0.0
	for _, v := range nz {
		a := math.Abs(v)
		lo, hi = math.Min(lo, a), math.Max(hi, a)
		if v != math.Ceil(v) {
			f.intMode = false
		}
	}
	if f.intMode {
		if hi/lo > 1000 || hi > 1e8 {
			f.sciMode = true
			for _, v := range nz {
				f.width = max(f.width, len(pyFloat(v, "e", printPrecision)))
			}
		} else {
			for _, v := range nz {
				f.width = max(f.width, len(pyFloat(v, "f", 0))+1)
			}
		}
		return f
	}
	if hi/lo > 1000 || hi > 1e8 || lo < 1e-4 {
		f.sciMode = true
		for _, v := range nz {
			f.width = max(f.width, len(pyFloat(v, "e", printPrecision)))
		}
	} else {
		for _, v := range nz {
			f.width = max(f.width, len(pyFloat(v, "f", printPrecision)))
		}
	}
	return f
}

func (f *formatter) format(v float64, s string) string {
	var r string
	switch {
	case !f.floating:
		r = s
	case f.sciMode:
		r = pyFloat(v, "e", printPrecision)
	case f.intMode:
		r = pyFloat(v, "f", 0)
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			r += "."
		}
	default:
		r = pyFloat(v, "f", printPrecision)
	}
	if pad := f.width - len(r); pad > 0 {
		r = strings.Repeat(" ", pad) + r
	}
	return r
}

// printData is a tensor's elements on the host, for printing.
type printData struct {
	shape Shape
	vals  []float64
	strs  []string // for integer and bool tensors
}

func (p *printData) at(idx int) (float64, string) {
	if p.strs != nil {
		return 0, p.strs[idx]
	}
	return p.vals[idx], ""
}

func tensorBody(t *Tensor) (string, []string) {
	var suffixes []string
	if t.dev != CPU {
		suffixes = append(suffixes, fmt.Sprintf("device='%v'", t.dev))
	}
	sizeStr := func() string {
		parts := make([]string, len(t.shape))
		for i, d := range t.shape {
			parts[i] = fmt.Sprint(d)
		}
		if len(parts) == 1 {
			return "size=(" + parts[0] + ",)"
		}
		return "size=(" + strings.Join(parts, ", ") + ")"
	}
	dtypeStr := "dtype=torch." + t.dtype.String()
	var body string
	switch {
	case t.dev == Meta:
		suffixes = append(suffixes, sizeStr())
		if t.dtype != Float32 {
			suffixes = append(suffixes, dtypeStr)
		}
		body = "..."
	case t.NumElements() == 0:
		if t.Dim() != 1 {
			suffixes = append(suffixes, sizeStr())
		}
		if t.dtype != Float32 {
			suffixes = append(suffixes, dtypeStr)
		}
		body = "[]"
	default:
		if t.dtype != Float32 && t.dtype != Int64 && t.dtype != Bool {
			suffixes = append(suffixes, dtypeStr)
		}
		body = formatData(t)
	}
	if fn := t.GradFn(); fn != "" {
		suffixes = append(suffixes, "grad_fn=<"+fn+">")
	} else if t.RequiresGrad() {
		suffixes = append(suffixes, "requires_grad=True")
	}
	return body, suffixes
}

func formatData(t *Tensor) string {
	p := &printData{shape: t.shape}
	switch t.dtype {
	case Float32, Float64, BFloat16, Float16:
		p.vals = t.Float64s()
	case Bool:
		for _, b := range t.Bools() {
			if b {
				p.strs = append(p.strs, "True")
			} else {
				p.strs = append(p.strs, "False")
			}
		}
	default:
		for _, v := range t.Int64s() {
			p.strs = append(p.strs, fmt.Sprint(v))
		}
	}
	summarize := t.NumElements() > printThreshold
	// The formatter sees only the elements that will be printed.
	var fv []float64
	var fs []string
	walkPrinted(p.shape, 0, 0, summarize, func(idx int) {
		v, s := p.at(idx)
		fv = append(fv, v)
		fs = append(fs, s)
	})
	f := newFormatter(fv, fs, t.dtype.IsFloat())
	return p.str(f, 0, 0, len("tensor("), summarize)
}

// walkPrinted visits the flat indices of the elements a summarized print shows.
func walkPrinted(shape Shape, d, base int, summarize bool, visit func(int)) {
	if len(shape) == 0 {
		visit(0)
		return
	}
	stride := Shape(shape[d+1:]).NumElements()
	n := shape[d]
	for i := 0; i < n; i++ {
		if summarize && n > 2*printEdge && i == printEdge {
			i = n - printEdge
		}
		if d == len(shape)-1 {
			visit(base + i)
		} else {
			walkPrinted(shape, d+1, base+i*stride, summarize, visit)
		}
	}
}

func (p *printData) str(f *formatter, d, base, indent int, summarize bool) string {
	if len(p.shape) == 0 {
		v, s := p.at(0)
		return f.format(v, s)
	}
	n := p.shape[d]
	stride := Shape(p.shape[d+1:]).NumElements()
	if d == len(p.shape)-1 {
		var items []string
		for i := 0; i < n; i++ {
			if summarize && n > 2*printEdge && i == printEdge {
				items = append(items, " ...")
				i = n - printEdge
			}
			v, s := p.at(base + i)
			items = append(items, f.format(v, s))
		}
		per := max(1, (printLineWidth-indent)/(f.width+2))
		var lines []string
		for i := 0; i < len(items); i += per {
			lines = append(lines, strings.Join(items[i:min(i+per, len(items))], ", "))
		}
		return "[" + strings.Join(lines, ",\n"+strings.Repeat(" ", indent+1)) + "]"
	}
	var slices []string
	for i := 0; i < n; i++ {
		if summarize && n > 2*printEdge && i == printEdge {
			slices = append(slices, "...")
			i = n - printEdge
		}
		slices = append(slices, p.str(f, d+1, base+i*stride, indent+1, summarize))
	}
	sep := "," + strings.Repeat("\n", len(p.shape)-d-1) + strings.Repeat(" ", indent+1)
	return "[" + strings.Join(slices, sep) + "]"
}

// String prints the tensor as PyTorch does, e.g.
// tensor([[1., 1., 1.]], device='cuda:0').
func (t *Tensor) String() string {
	if t == nil {
		return "<nil tensor>"
	}
	if t.st == nil {
		return "<zero Tensor>"
	}
	if t.st.released.Load() {
		return "tensor(<released>)"
	}
	const prefix = "tensor("
	body, suffixes := tensorBody(t)
	s := prefix + body
	last := len(s) - strings.LastIndex(s, "\n") + 1 // as _add_suffixes computes it
	var b strings.Builder
	b.WriteString(s)
	for _, suf := range suffixes {
		if last+len(suf)+2 > printLineWidth {
			b.WriteString(",\n" + strings.Repeat(" ", len(prefix)) + suf)
			last = len(prefix) + len(suf)
		} else {
			b.WriteString(", " + suf)
			last += len(suf) + 2
		}
	}
	b.WriteString(")")
	return b.String()
}
