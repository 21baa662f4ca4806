package nn

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// ExtraRepr is implemented by modules that describe their settings when
// printed (PyTorch's extra_repr): Linear's is
// "in_features=3, out_features=1, bias=True".
type ExtraRepr interface {
	ExtraRepr() string
}

// namer is implemented by nn's layers whose PyTorch name is not their Go
// type's (Activation, BatchNorm, Pool).
type namer interface{ moduleName() string }

// String formats the module as PyTorch's repr: its name, its ExtraRepr and
// its children, one per line, indented:
//
//	Sequential(
//	  (0): Linear(in_features=3, out_features=1, bias=True)
//	)
func (c *Base) String() string {
	if c.self == nil {
		return "Module(<Init not called>)"
	}
	return repr(c.self)
}

func moduleName(m Module) string {
	if n, ok := m.(namer); ok {
		return n.moduleName()
	}
	t := reflect.TypeOf(m)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return "Module"
	}
	return t.Name()
}

func repr(m Module) string {
	var extra []string
	if e, ok := m.(ExtraRepr); ok {
		if s := e.ExtraRepr(); s != "" {
			extra = strings.Split(s, "\n")
		}
	}
	var lines []string
	lines = append(lines, extra...)
	names, mods := m.Registry().Children()
	for i, c := range mods {
		lines = append(lines, "("+names[i]+"): "+strings.ReplaceAll(repr(c), "\n", "\n  "))
	}
	s := moduleName(m) + "("
	switch {
	case len(extra) == 1 && len(lines) == 1:
		s += extra[0]
	case len(lines) > 0:
		s += "\n  " + strings.Join(lines, "\n  ") + "\n"
	}
	return s + ")"
}

// pyBool and pyFloat write values as Python's repr does.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return s
}

func pyTuple(v ...int) string {
	if len(v) == 1 {
		return fmt.Sprintf("(%d,)", v[0])
	}
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// ExtraRepr is "in_features=3, out_features=1, bias=True".
func (l *Linear) ExtraRepr() string {
	CheckNil(l, "ExtraRepr")
	return fmt.Sprintf("in_features=%d, out_features=%d, bias=%s", l.In, l.Out, pyBool(l.Bias != nil))
}

// ExtraRepr is Conv2d's settings as PyTorch prints them (defaults left out).
func (c *Conv2d) ExtraRepr() string {
	CheckNil(c, "ExtraRepr")
	s := fmt.Sprintf("%d, %d, kernel_size=%s, stride=%s", c.In, c.Out, pyTuple(c.Kernel[:]...), pyTuple(c.Stride[:]...))
	if c.PaddingName != "" {
		s += ", padding=" + c.PaddingName
	} else if c.Padding != [2]int{} {
		s += ", padding=" + pyTuple(c.Padding[:]...)
	}
	if c.Dilation != [2]int{1, 1} {
		s += ", dilation=" + pyTuple(c.Dilation[:]...)
	}
	if c.Groups != 1 {
		s += fmt.Sprintf(", groups=%d", c.Groups)
	}
	if c.Bias == nil {
		s += ", bias=False"
	}
	if c.PaddingMode != "" && c.PaddingMode != "zeros" {
		s += ", padding_mode=" + c.PaddingMode
	}
	return s
}

func (b *BatchNorm) moduleName() string {
	if b.dims == "" {
		return "BatchNorm"
	}
	return "BatchNorm" + b.dims
}

// ExtraRepr is "64, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True".
func (b *BatchNorm) ExtraRepr() string {
	CheckNil(b, "ExtraRepr")
	momentum := pyFloat(b.Momentum)
	if b.CumulativeAverage {
		momentum = "None"
	}
	return fmt.Sprintf("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s", b.Features, pyFloat(b.Eps), momentum, pyBool(b.Weight != nil), pyBool(b.RunningMean != nil))
}

// ExtraRepr is "(5,), eps=1e-05, elementwise_affine=True".
func (l *LayerNorm) ExtraRepr() string {
	CheckNil(l, "ExtraRepr")
	return fmt.Sprintf("%s, eps=%s, elementwise_affine=%s", pyTuple(l.Shape...), pyFloat(l.Eps), pyBool(l.Weight != nil))
}

// ExtraRepr is "num, dim".
func (e *Embedding) ExtraRepr() string {
	CheckNil(e, "ExtraRepr")
	s := fmt.Sprintf("%d, %d", e.Num, e.Dim)
	if e.PaddingIdx >= 0 {
		s += fmt.Sprintf(", padding_idx=%d", e.PaddingIdx)
	}
	if e.MaxNorm > 0 {
		s += ", max_norm=" + pyFloat(e.MaxNorm)
	}
	if e.normType() != 2 {
		s += ", norm_type=" + pyFloat(e.normType())
	}
	return s
}

func (a *Activation) moduleName() string { return a.Name }

// ExtraRepr is the activation's settings (LeakyReLU's negative_slope, ...).
func (a *Activation) ExtraRepr() string {
	CheckNil(a, "ExtraRepr")
	return a.extra
}

// ExtraRepr is "p=0.5, inplace=False".
func (d *Dropout) ExtraRepr() string {
	CheckNil(d, "ExtraRepr")
	return "p=" + pyFloat(d.P) + ", inplace=False"
}

// pySize prints a square size as the int PyTorch was given, another as
// its tuple.
func pySize(v [2]int) string {
	if v[0] == v[1] {
		return strconv.Itoa(v[0])
	}
	return pyTuple(v[:]...)
}

func (p *Pool) moduleName() string {
	if p.Max {
		return "MaxPool2d"
	}
	return "AvgPool2d"
}

// ExtraRepr is the pooling window as PyTorch prints it.
func (p *Pool) ExtraRepr() string {
	CheckNil(p, "ExtraRepr")
	s := fmt.Sprintf("kernel_size=%s, stride=%s, padding=%s", pySize(p.Kernel), pySize(p.Stride), pySize(p.Padding))
	if p.Max {
		s += ", dilation=" + pySize(p.dilation()) + ", ceil_mode=" + pyBool(p.CeilMode)
	}
	return s
}

// ExtraRepr is "output_size=(h, w)".
func (a *AdaptiveAvgPool2d) ExtraRepr() string {
	CheckNil(a, "ExtraRepr")
	return "output_size=" + pyTuple(a.H, a.W)
}
