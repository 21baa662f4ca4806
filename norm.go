package ember

import (
	"fmt"
	"strings"
)

// Normalisation. BatchNorm checks its arguments and runs the backend's
// BatchNormer or the generic lowering (kernels.go); LayerNorm is built
// from reductions on every backend.

// BatchNorm is torch.nn.functional.batch_norm over [N, C, ...]. In training
// it normalises with the batch's mean and biased variance and, when the
// running statistics are given, updates them in place:
// running = (1-momentum)*running + momentum*batch, with the unbiased
// variance. Otherwise it uses the running statistics. weight and bias ([C])
// may be nil. It records NativeBatchNormBackward0.
func BatchNorm(x, runningMean, runningVar, weight, bias *Tensor, training bool, momentum, eps float64) *Tensor {
	return NativeKernels.BatchNorm(x, runningMean, runningVar, weight, bias, training, momentum, eps)
}

// BatchNorm is the package's BatchNorm run with k's kernels.
func (k Kernels) BatchNorm(x, runningMean, runningVar, weight, bias *Tensor, training bool, momentum, eps float64) *Tensor {
	const name = "batch_norm"
	x.live(name)
	if x.dtype.IsHalf() && !k.batchNormsHalf(x) { // float32 statistics (the running ones stay float32), rounded output
		return inFloat32(x.dtype, []*Tensor{x, weight, bias}, func(c []*Tensor) *Tensor {
			return k.BatchNorm(c[0], runningMean, runningVar, c[1], c[2], training, momentum, eps)
		})
	}
	if x.Dim() < 2 {
		shapeErr(name, "expected an input of at least 2 dims", x.shape)
	}
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: "batch_norm needs a floating dtype"})
	}
	c := x.shape[1]
	for _, t := range []*Tensor{runningMean, runningVar, weight, bias} {
		if t != nil {
			sameDevice(name, x, t)
			if t.NumElements() != c {
				shapeErr(name, fmt.Sprintf("running stats, weight and bias must have %d elements", c), x.shape, t.shape)
			}
		}
	}
	if x.NumElements() == 0 {
		// nothing to normalise, as PyTorch returns an empty input's shape
		// (which also divided by c = 0 below); the running statistics are
		// left as they are (PyTorch's become NaN)
		return x.MulScalar(1)
	}
	cnt := x.NumElements() / c
	if training && cnt <= 1 {
		// PyTorch's ValueError (torch.nn.functional._verify_batch_size)
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("Expected more than 1 value per channel when training, got input size %v", x.shape)})
	}
	if !training && (runningMean == nil || runningVar == nil) {
		panic(&ShapeError{Op: name, Msg: "running_mean and running_var must be defined in evaluation mode"})
	}
	return k.batchNorm(x).batchNorm(x, runningMean, runningVar, weight, bias, training, momentum, eps)
}

// updateRunning moves the running statistics (either may be nil) towards a
// batch's mean and biased variance v over cnt values per channel:
// running = (1−momentum)·running + momentum·batch, the variance unbiased.
func updateRunning(runningMean, runningVar, mean, v *Tensor, cnt int, momentum float64) {
	if runningMean != nil {
		runningMean.MulScalarInPlace(1-momentum).AddScaledInPlace(mean.Reshape(runningMean.shape...), momentum)
	}
	if runningVar != nil {
		unbiased := v.MulScalar(float64(cnt) / float64(cnt-1))
		runningVar.MulScalarInPlace(1-momentum).AddScaledInPlace(unbiased.Reshape(runningVar.shape...), momentum)
	}
}

// LayerNorm is torch.nn.functional.layer_norm: x is normalised over its
// trailing dims normalizedShape (biased variance), then scaled by weight
// and shifted by bias (both of normalizedShape, or nil). It records
// NativeLayerNormBackward0.
func LayerNorm(x *Tensor, normalizedShape []int, weight, bias *Tensor, eps float64) *Tensor {
	x.nonNil("layer_norm")
	if autocastF32(x) || autocastF32(weight) {
		return onCasts(Float32, []*Tensor{x, weight, bias}, func(c []*Tensor) *Tensor {
			return LayerNorm(c[0], normalizedShape, c[1], c[2], eps)
		})
	}
	if x.dtype.IsHalf() {
		// as PyTorch's kernels: the statistics and the affine in float32
		// from the two-byte inputs, the result rounded once
		return inFloat32(x.dtype, []*Tensor{x, weight, bias}, func(c []*Tensor) *Tensor {
			return LayerNorm(c[0], normalizedShape, c[1], c[2], eps)
		})
	}
	const name = "layer_norm"
	x.live(name)
	k := len(normalizedShape)
	if k == 0 || k > x.Dim() || !Shape(x.shape[x.Dim()-k:]).Equal(Shape(normalizedShape)) {
		shapeErr(name, fmt.Sprintf("Given normalized_shape=%v, expected input with shape [*, %v]", Shape(normalizedShape), Shape(normalizedShape)), x.shape)
	}
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: "layer_norm needs a floating dtype"})
	}
	for _, t := range []*Tensor{weight, bias} {
		if t != nil {
			sameDevice(name, x, t)
			if !t.shape.Equal(Shape(normalizedShape)) {
				shapeErr(name, "weight and bias must have normalized_shape", t.shape)
			}
		}
	}
	dims := make([]int, k)
	for i := range dims {
		dims[i] = x.Dim() - k + i
	}
	xd := x.Detach()
	mean := xd.Mean(Dims(dims...), KeepDim())
	dev := xd.Sub(mean)
	invstd := dev.Mul(dev).Mean(Dims(dims...), KeepDim()).AddScalar(eps).Rsqrt()
	xhat := dev.Mul(invstd)
	out := xhat
	var wd *Tensor
	if weight != nil {
		wd = weight.Detach()
		out = out.Mul(wd)
	}
	if bias != nil {
		out = out.Add(bias.Detach())
	}
	out = record("NativeLayerNormBackward0", out, []*Tensor{x, weight, bias}, []*Tensor{xhat, invstd, wd}, func(g *Tensor) []*Tensor {
		gx := gradIf(x, func() *Tensor {
			gh := g
			if wd != nil {
				gh = g.Mul(wd)
			}
			m1 := gh.Mean(Dims(dims...), KeepDim())
			m2 := gh.Mul(xhat).Mean(Dims(dims...), KeepDim())
			return gh.Sub(m1).Sub(xhat.Mul(m2)).Mul(invstd)
		})
		// the engine sums these over the leading dims to normalizedShape
		return []*Tensor{gx, g.Mul(xhat), g}
	})
	if nd := nodeOf(out); nd != nil {
		n := 1
		for _, d := range normalizedShape {
			n *= d
		}
		nd.twice = normTwice(nd, &normGraph{name: nd.name, xhat: xhat, invstd: invstd, dims: dims, n: float64(n)}, weight, bias, nil)
	}
	return out
}

// normGraph gives a normalisation's saved x̂ = (x − mean)·invstd and invstd
// (reduced over dims, n values each, kept as keepdim shapes) a graph back to
// the input x through its edge, for the differentiable backward (twice) of
// LayerNorm and BatchNorm: the first-order backward keeps only x̂ and invstd,
// and in create-graph mode these get nodes whose backward is their own
// derivative (written again with graph forms of x̂ and invstd, so that every
// order is differentiable). With eval set the statistics are constants
// (BatchNorm with running statistics): x̂ is then linear in x.
type normGraph struct {
	name         string // the backward node's name, for the new nodes
	x            edge   // not live: x needs no gradient
	xhat, invstd *Tensor
	dims         []int
	n            float64
	eval         bool
	xh, is       *Tensor // the graph forms, made on first use
}

// dxhat is the gradient to x of x̂ given gg, the gradient to x̂.
func (s *normGraph) dxhat(gg, xh, is *Tensor) *Tensor {
	if s.eval {
		return gg.Mul(is)
	}
	m1 := gg.Mean(Dims(s.dims...), KeepDim())
	m2 := gg.Mul(xh).Mean(Dims(s.dims...), KeepDim())
	return gg.Sub(m1).Sub(xh.Mul(m2)).Mul(is)
}

// graphs returns x̂ and invstd with their graphs to x (as they are when x
// needs no gradient).
func (s *normGraph) graphs() (xh, is *Tensor) {
	if !s.x.live() {
		return s.xhat, s.invstd
	}
	if s.xh != nil {
		return s.xh, s.is
	}
	name := strings.TrimSuffix(s.name, "0") + "Backward0"
	s.xh = s.xhat.Detach()
	s.xh.ag = &autograd{requiresGrad: true, node: &node{name: name, edges: []edge{s.x},
		backward: func(gg *Tensor) []*Tensor { return []*Tensor{s.dxhat(gg, s.xhat, s.invstd)} },
		twice: func(gg *Tensor) []*Tensor {
			xh, is := s.graphs()
			return []*Tensor{s.dxhat(gg, xh, is)}
		}}}
	s.is = s.invstd
	if !s.eval {
		// d invstd/dx = −invstd²·x̂/n
		dis := func(gi, xh, is *Tensor) *Tensor { return gi.Mul(is).Mul(is).Mul(xh).MulScalar(-1 / s.n) }
		s.is = s.invstd.Detach()
		s.is.ag = &autograd{requiresGrad: true, node: &node{name: name, edges: []edge{s.x},
			backward: func(gi *Tensor) []*Tensor { return []*Tensor{dis(gi, s.xhat, s.invstd)} },
			twice: func(gi *Tensor) []*Tensor {
				xh, is := s.graphs()
				return []*Tensor{dis(gi, xh, is)}
			}}}
	}
	return s.xh, s.is
}

// normTwice is the twice of a LayerNorm or BatchNorm node nd: the
// gradients to x, weight (shaped wshape, nil if absent) and bias of
// out = x̂·weight + bias, written over the graph forms of x̂ and invstd.
// For BatchNorm, weight is reshaped to bshape and its gradients are
// reduced over dims; LayerNorm's are left to the engine (bshape nil).
func normTwice(nd *node, s *normGraph, weight, bias *Tensor, bshape []int) func(g *Tensor) []*Tensor {
	return func(g *Tensor) []*Tensor {
		s.x = nd.edges[0]
		xh, is := s.graphs()
		gh := g
		if weight != nil {
			w := weight
			if bshape != nil {
				w = w.Reshape(bshape...)
			}
			gh = g.Mul(w.Cast(g.dtype))
		}
		var gx, gw, gb *Tensor
		if nd.edges[0].live() {
			gx = s.dxhat(gh, xh, is)
		}
		if weight != nil && nd.edges[1].live() {
			gw = g.Mul(xh)
			if bshape != nil {
				gw = gw.Sum(Dims(s.dims...)).Reshape(weight.shape...)
			}
		}
		if bias != nil && nd.edges[2].live() {
			gb = g
			if bshape != nil {
				gb = gb.Sum(Dims(s.dims...)).Reshape(bias.shape...)
			}
		}
		return []*Tensor{gx, gw, gb}
	}
}
