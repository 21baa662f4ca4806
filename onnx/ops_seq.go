package onnx

import (
	"fmt"

	"github.com/emberml/ember"
)

// Sequence ops: a sequence is a val holding a list of tensors, immutable
// like every ONNX value (an insert or erase makes a new list of the same
// tensors).

// checkSeq refuses a sequence holding more than MaxElements elements in
// all (a loop inserting a fresh tensor each iteration would otherwise
// hold iterations × MaxElements).
func checkSeq(ts []*ember.Tensor) []*ember.Tensor {
	n := int64(0)
	for _, t := range ts {
		if n += int64(t.NumElements()); n > MaxElements {
			seqLimit(len(ts))
		}
	}
	return ts
}

func seqLimit(n int) {
	panic(&limitError{fmt.Sprintf("a sequence of %d tensors holds more than %d elements (onnx.MaxElements)", n, MaxElements)})
}

// seqFunc runs a sequence op on values (tensors or sequences); it panics
// on bad input like opFunc.
type seqFunc func(n *node, in []val) []val

var seqRegistry = map[string]seqFunc{
	"SequenceEmpty":      seqEmpty,
	"SequenceConstruct":  seqConstruct,
	"SequenceInsert":     seqInsert,
	"SequenceAt":         seqAt,
	"SequenceErase":      seqErase,
	"SequenceLength":     seqLength,
	"SplitToSequence":    splitToSequence,
	"ConcatFromSequence": concatFromSequence,
	"Optional":           optional,
	"OptionalHasElement": optionalHas,
	"OptionalGetElement": optionalGet,
}

func lookupSeq(n *node) seqFunc {
	if n.domain != "" && n.domain != "ai.onnx" {
		return nil
	}
	return seqRegistry[n.opType]
}

// seqArg returns input i, which must be a sequence.
func seqArg(n *node, in []val, i int) []*ember.Tensor {
	if i >= len(in) || !in[i].isSeq {
		fail("input %d of %s must be a sequence", i, n.opType)
	}
	return in[i].seq
}

// tensorArg returns input i, which must be a tensor (nil when absent).
func tensorArg(n *node, in []val, i int) *ember.Tensor {
	if i >= len(in) {
		return nil
	}
	if in[i].isSeq {
		fail("input %d of %s must be a tensor, it is a sequence", i, n.opType)
	}
	return in[i].t
}

// position reads a sequence position (a scalar tensor), in [-n, n-1], or
// [-n, n] where end is allowed; def when absent.
func position(p *ember.Tensor, n int, end bool, def int) int {
	if p == nil {
		return def
	}
	if p.NumElements() != 1 || isFloat(p) {
		fail("position must be an integer scalar, it has shape %v (%v)", p.Shape(), p.DType())
	}
	i := host(p)[0]
	hi := int64(n - 1)
	if end {
		hi = int64(n)
	}
	if i < -int64(n) || i > hi {
		fail("position %d is out of range for a sequence of %d tensors", i, n)
	}
	if i < 0 {
		i += int64(n)
	}
	return int(i)
}

func seqEmpty(n *node, in []val) []val {
	if n.has("dtype") {
		if _, err := emberType(int32(n.int("dtype", tFloat))); err != nil {
			unsupported(n, "a sequence of %s", dtypeName(int32(n.int("dtype", tFloat))))
		}
	}
	return []val{seqval([]*ember.Tensor{})}
}

func seqConstruct(n *node, in []val) []val {
	ts := make([]*ember.Tensor, len(in))
	for i := range in {
		ts[i] = tensorArg(n, in, i)
		if ts[i] == nil || ts[i].DType() != ts[0].DType() {
			fail("SequenceConstruct's inputs must be tensors of one dtype")
		}
	}
	return []val{seqval(checkSeq(ts))}
}

func seqInsert(n *node, in []val) []val {
	s, t := seqArg(n, in, 0), tensorArg(n, in, 1)
	if t == nil {
		fail("SequenceInsert needs a tensor")
	}
	if len(s) > 0 && s[0].DType() != t.DType() {
		fail("inserting a %v tensor into a sequence of %v tensors", t.DType(), s[0].DType())
	}
	p := position(tensorArg(n, in, 2), len(s), true, len(s))
	if sb := in[0].sb; p == len(s) && sb != nil && sb.n == len(s) {
		// at the end of the longest value of its arrays: append without
		// copying (in place while the array has room)
		total := sb.cum[len(s)] + int64(t.NumElements())
		if total > MaxElements {
			seqLimit(len(s) + 1)
		}
		var r []*ember.Tensor
		if len(s) < cap(s) {
			r = s[:len(s)+1]
		} else {
			// a bigger array holding the same prefix: the values of
			// the old one, all shorter than sb.n now, never append
			r = append(make([]*ember.Tensor, 0, 2*len(s)+4), s...)[:len(s)+1]
		}
		r[len(s)] = t
		sb.n, sb.cum = len(r), append(sb.cum, total)
		return []val{{seq: r, isSeq: true, sb: sb}}
	}
	r := make([]*ember.Tensor, 0, len(s)+1)
	r = append(append(append(r, s[:p]...), t), s[p:]...)
	return []val{seqval(checkSeq(r))}
}

func seqAt(n *node, in []val) []val {
	s := seqArg(n, in, 0)
	p := tensorArg(n, in, 1)
	if p == nil {
		fail("SequenceAt needs a position")
	}
	return []val{tval(s[position(p, len(s), false, 0)])}
}

func seqErase(n *node, in []val) []val {
	s := seqArg(n, in, 0)
	if len(s) == 0 {
		fail("SequenceErase of an empty sequence")
	}
	p := position(tensorArg(n, in, 1), len(s), false, len(s)-1)
	if p == len(s)-1 { // a shorter prefix of the same array
		v := in[0]
		v.seq, v.opt = s[:p], false
		return []val{v}
	}
	r := append(append([]*ember.Tensor{}, s[:p]...), s[p+1:]...)
	return []val{seqval(r)}
}

func seqLength(n *node, in []val) []val {
	return []val{tval(ember.Scalar(float64(len(seqArg(n, in, 0))), ember.Dtype(ember.Int64)))}
}

func splitToSequence(n *node, in []val) []val {
	x := tensorArg(n, in, 0)
	if x == nil {
		fail("SplitToSequence needs an input")
	}
	ax := axis(n.int("axis", 0), x.Dim())
	size := x.Size(ax)
	var sizes []int
	split := tensorArg(n, in, 1)
	switch {
	case split == nil:
		for i := 0; i < size; i++ {
			sizes = append(sizes, 1)
		}
	case split.Dim() == 0:
		c := host(split)[0]
		if c <= 0 {
			fail("split %d must be positive", c)
		}
		for at := 0; at < size; at += int(c) {
			sizes = append(sizes, int(min(c, int64(size-at))))
		}
	default:
		sum := int64(0)
		for _, c := range host(split) {
			if c < 0 {
				fail("split holds %d, negative", c)
			}
			sum += c
			sizes = append(sizes, int(c))
		}
		if sum != int64(size) {
			fail("split sums to %d, the axis has %d", sum, size)
		}
	}
	squeeze := split == nil && n.int("keepdims", 1) == 0
	ts := make([]*ember.Tensor, len(sizes))
	at := 0
	for i, c := range sizes {
		t := x.Narrow(ax, at, c)
		if squeeze {
			t = t.Squeeze(ax)
		}
		ts[i] = t
		at += c
	}
	return []val{seqval(ts)}
}

func concatFromSequence(n *node, in []val) []val {
	s := seqArg(n, in, 0)
	if len(s) == 0 {
		fail("ConcatFromSequence of an empty sequence")
	}
	if !n.has("axis") {
		fail("ConcatFromSequence needs the axis attribute")
	}
	if n.int("new_axis", 0) != 0 {
		sh := append([]int{len(s)}, s[0].Shape()...)
		checkElems(sh)
		return []val{tval(ember.Stack(s, axis(n.int("axis", 0), s[0].Dim()+1)))}
	}
	return []val{tval(ember.Cat(s, axis(n.int("axis", 0), s[0].Dim())))}
}

// optional wraps its input (a tensor or a sequence) in an optional, or
// makes an empty one.
func optional(n *node, in []val) []val {
	if len(in) == 0 || in[0].none() {
		return []val{{opt: true}}
	}
	v := in[0]
	v.opt = true
	return []val{v}
}

// optionalHas reports whether an optional holds a value (opset 18: a
// tensor or sequence holds one, an absent input none).
func optionalHas(n *node, in []val) []val {
	has := len(in) > 0 && !in[0].none() && !(in[0].opt && in[0].empty())
	return []val{tval(ember.FromSlice([]bool{has}, ember.Shape{}))}
}

// optionalGet returns an optional's value (opset 18: a tensor or sequence
// is its own value).
func optionalGet(n *node, in []val) []val {
	if len(in) == 0 || in[0].none() || in[0].opt && in[0].empty() {
		fail("OptionalGetElement of an empty optional")
	}
	v := in[0]
	v.opt = false
	return []val{v}
}
