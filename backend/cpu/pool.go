package cpu

import (
	"math"

	"github.com/emberml/ember/backend"
)

// Pooling kernels: one pass over each input plane, planes split across
// goroutines.

var _ backend.Pooler = Backend{}

// poolGeom is a pooling's sizes, from the input and output views.
type poolGeom struct {
	n, c, h, w, oh, ow int
	kh, kw, sh, sw     int
	ph, pw             int
}

func poolOf(x, out []int, p backend.Pool2dParams) poolGeom {
	return poolGeom{n: x[0], c: x[1], h: x[2], w: x[3], oh: out[2], ow: out[3],
		kh: p.Kernel[0], kw: p.Kernel[1], sh: p.Stride[0], sw: p.Stride[1], ph: p.Padding[0], pw: p.Padding[1]}
}

// rows returns the input rows [h0, h1) of output row o along one dim.
func window(o, s, p, k, size int) (int, int) {
	h0 := o*s - p
	return max(h0, 0), min(h0+k, size)
}

// MaxPool2d writes window maxima and their plane indices.
func (Backend) MaxPool2d(out, idx, x backend.View, p backend.Pool2dParams) {
	g := poolOf(x.Shape, out.Shape, p)
	switch x.S.DType() {
	case backend.Float32:
		maxPool[float32](g, out, idx, x)
	case backend.Float64:
		maxPool[float64](g, out, idx, x)
	default:
		notImpl("max_pool2d", x.S.DType())
	}
}

func maxPool[T floatT](g poolGeom, out, idx, x backend.View) {
	xd, od := data[T](x), data[T](out)
	var id []int64
	if idx.S != nil {
		id = data[int64](idx)
	}
	sn, sc, sh, sw := x.Strides[0], x.Strides[1], x.Strides[2], x.Strides[3]
	// output column windows
	w0s, w1s := make([]int, g.ow), make([]int, g.ow)
	for ox := range w0s {
		w0s[ox], w1s[ox] = window(ox, g.sw, g.pw, g.kw, g.w)
	}
	parallelFor(g.n*g.c, g.oh*g.ow*g.kh*g.kw, func(lo, hi int) {
		vm := make([]T, g.w) // column maxima over one output row's window rows
		for pl := lo; pl < hi; pl++ {
			src := pl/g.c*sn + pl%g.c*sc
			o := od[pl*g.oh*g.ow:][:g.oh*g.ow]
			for oy := 0; oy < g.oh; oy++ {
				h0, h1 := window(oy, g.sh, g.ph, g.kh, g.h)
				// the builtin max is branch-free and keeps NaN
				for j := range vm {
					vm[j] = T(math.Inf(-1))
				}
				for i := h0; i < h1; i++ {
					r := src + i*sh
					if sw == 1 {
						for j, v := range xd[r : r+g.w] {
							vm[j] = max(vm[j], v)
						}
						continue
					}
					for j := range vm {
						vm[j] = max(vm[j], xd[r+j*sw])
					}
				}
				orow := o[oy*g.ow:][:g.ow]
				for ox := range orow {
					best := T(math.Inf(-1))
					for _, v := range vm[w0s[ox]:w1s[ox]] {
						best = max(best, v)
					}
					orow[ox] = best
				}
				if id == nil {
					continue
				}
				// Indices as PyTorch: the first maximum in row-major order,
				// or the last NaN.
				irow := id[(pl*g.oh+oy)*g.ow:][:g.ow]
				for ox, best := range orow {
					w0, w1 := w0s[ox], w1s[ox]
					at := h0*g.w + w0
					nan := best != best
				find:
					for i := h0; i < h1; i++ {
						for j := w0; j < w1; j++ {
							v := xd[src+i*sh+j*sw]
							if nan && v != v {
								at = i*g.w + j
							} else if !nan && v == best {
								at = i*g.w + j
								break find
							}
						}
					}
					irow[ox] = int64(at)
					if !nan {
						orow[ox] = xd[src+at/g.w*sh+at%g.w*sw] // -0 and +0 as PyTorch
					}
				}
			}
		}
	})
}

// MaxPool2dBackward scatters gout to the recorded maxima.
func (Backend) MaxPool2dBackward(gx, gout, idx backend.View) {
	switch gx.S.DType() {
	case backend.Float32:
		maxPoolBack[float32](gx, gout, idx)
	case backend.Float64:
		maxPoolBack[float64](gx, gout, idx)
	default:
		notImpl("max_pool2d backward", gx.S.DType())
	}
}

func maxPoolBack[T floatT](gx, gout, idx backend.View) {
	c, hw := gx.Shape[1], gx.Shape[2]*gx.Shape[3]
	oh, ow := gout.Shape[2], gout.Shape[3]
	gd, gs, id := data[T](gx), data[T](gout), data[int64](idx)
	sn, sc, sh, sw := gout.Strides[0], gout.Strides[1], gout.Strides[2], gout.Strides[3]
	parallelFor(gx.Shape[0]*c, hw+oh*ow, func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			d := gd[pl*hw:][:hw]
			clear(d)
			ix := id[pl*oh*ow:][:oh*ow]
			src := pl/c*sn + pl%c*sc
			for y := 0; y < oh; y++ {
				for x := 0; x < ow; x++ {
					d[ix[y*ow+x]] += gs[src+y*sh+x*sw]
				}
			}
		}
	})
}

// AvgPool2d writes window means.
func (Backend) AvgPool2d(out, x backend.View, p backend.Pool2dParams, countIncludePad bool) {
	g := poolOf(x.Shape, out.Shape, p)
	switch x.S.DType() {
	case backend.Float32:
		avgPool[float32](g, out, x, countIncludePad)
	case backend.Float64:
		avgPool[float64](g, out, x, countIncludePad)
	default:
		notImpl("avg_pool2d", x.S.DType())
	}
}

// divisor is what window (oy, ox) is divided by: PyTorch counts the padded
// window clipped to the padded input when padding counts, else the part
// inside the input.
func (g poolGeom) divisor(oy, ox int, countIncludePad bool) int {
	if countIncludePad {
		hs, ws := oy*g.sh-g.ph, ox*g.sw-g.pw
		he, we := min(hs+g.kh, g.h+g.ph), min(ws+g.kw, g.w+g.pw)
		return (he - hs) * (we - ws)
	}
	h0, h1 := window(oy, g.sh, g.ph, g.kh, g.h)
	w0, w1 := window(ox, g.sw, g.pw, g.kw, g.w)
	return (h1 - h0) * (w1 - w0)
}

func avgPool[T floatT](g poolGeom, out, x backend.View, countIncludePad bool) {
	xd, od := data[T](x), data[T](out)
	sn, sc, sh, sw := x.Strides[0], x.Strides[1], x.Strides[2], x.Strides[3]
	parallelFor(g.n*g.c, g.oh*g.ow*g.kh*g.kw, func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			src := pl/g.c*sn + pl%g.c*sc
			o := od[pl*g.oh*g.ow:][:g.oh*g.ow]
			for oy := 0; oy < g.oh; oy++ {
				h0, h1 := window(oy, g.sh, g.ph, g.kh, g.h)
				for ox := 0; ox < g.ow; ox++ {
					w0, w1 := window(ox, g.sw, g.pw, g.kw, g.w)
					var s T
					for i := h0; i < h1; i++ {
						r := src + i*sh
						for j := w0; j < w1; j++ {
							s += xd[r+j*sw]
						}
					}
					o[oy*g.ow+ox] = s / T(g.divisor(oy, ox, countIncludePad))
				}
			}
		}
	})
}

// AvgPool2dBackward spreads each output's gradient over its window.
func (Backend) AvgPool2dBackward(gx, gout backend.View, p backend.Pool2dParams, countIncludePad bool) {
	g := poolOf(gx.Shape, gout.Shape, p)
	switch gx.S.DType() {
	case backend.Float32:
		avgPoolBack[float32](g, gx, gout, countIncludePad)
	case backend.Float64:
		avgPoolBack[float64](g, gx, gout, countIncludePad)
	default:
		notImpl("avg_pool2d backward", gx.S.DType())
	}
}

func avgPoolBack[T floatT](g poolGeom, gx, gout backend.View, countIncludePad bool) {
	gd, gs := data[T](gx), data[T](gout)
	sn, sc, sh, sw := gout.Strides[0], gout.Strides[1], gout.Strides[2], gout.Strides[3]
	hw := g.h * g.w
	parallelFor(g.n*g.c, hw+g.oh*g.ow*g.kh*g.kw, func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			d := gd[pl*hw:][:hw]
			clear(d)
			src := pl/g.c*sn + pl%g.c*sc
			for oy := 0; oy < g.oh; oy++ {
				h0, h1 := window(oy, g.sh, g.ph, g.kh, g.h)
				for ox := 0; ox < g.ow; ox++ {
					w0, w1 := window(ox, g.sw, g.pw, g.kw, g.w)
					v := gs[src+oy*sh+ox*sw] / T(g.divisor(oy, ox, countIncludePad))
					for i := h0; i < h1; i++ {
						r := d[i*g.w+w0 : i*g.w+w1]
						for j := range r {
							r[j] += v
						}
					}
				}
			}
		}
	})
}
