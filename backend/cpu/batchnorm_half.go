package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/vec"
)

// The batch norm kernels on bfloat16 and float16 x, out and g with float32
// per-channel operands (backend.HalfBatchNormer). float16 planes are
// widened to float32 scratch as they are read and run through the float32
// loops, so the results are those of the float32 kernels on a float32
// copy, rounded once. bfloat16 planes are read directly (package vec's
// loops, each element widened in its register): statistics and gradient
// sums in float32 lanes, float64 across blocks and planes (the float32
// kernels' arithmetic in another summation order), the affine maps in
// float32 rounded once to bfloat16 (the forward's with one FMA).

// BatchNormsHalf reports that the BatchNormer kernels take bfloat16 and
// float16 data with float32 per-channel operands.
func (Backend) BatchNormsHalf(dt backend.DType) bool { return dt.IsHalf() }

// halfBN runs bf or f16 for a two-byte dtype and reports whether dt is one.
func halfBN(dt backend.DType, bf, f16 func()) bool {
	switch dt {
	case backend.BFloat16:
		bf()
	case backend.Float16:
		f16()
	default:
		return false
	}
	return true
}

func channelAffineBF16(out, x, scale, shift backend.View) {
	n, c, s := planes(x.Shape)
	xd, od, sd, td := data[backend.BF16](x), data[backend.BF16](out), data[float32](scale), data[float32](shift)
	parallelFor(n*c, s, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			vec.AffineBF16(od[p*s:][:s], xd[p*s:][:s], sd[p%c], td[p%c])
		}
	})
}

func channelStatsBF16(mean, variance, x backend.View) {
	n, c, s := planes(x.Shape)
	xd, md, vd := data[backend.BF16](x), data[float32](mean), data[float32](variance)
	cnt := float64(n * s)
	parallelFor(c, 2*n*s, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			var l vec.Lanes
			for i := 0; i < n; i++ {
				vec.SumBF16Lanes(&l, xd[(i*c+ch)*s:][:s])
			}
			m := l.Sum(0, 32) / cnt
			l = vec.Lanes{}
			for i := 0; i < n; i++ {
				vec.SqDevBF16Lanes(&l, xd[(i*c+ch)*s:][:s], float32(m))
			}
			md[ch], vd[ch] = float32(m), float32(l.Sum(0, 32)/cnt)
		}
	})
}

func channelGradSumsBF16(sumG, sumGX, g, x, mean backend.View) {
	n, c, s := planes(x.Shape)
	xd, gd := data[backend.BF16](x), data[backend.BF16](g)
	md, sg, sgx := data[float32](mean), data[float32](sumG), data[float32](sumGX)
	parallelFor(c, 2*n*s, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			var l vec.Lanes
			for i := 0; i < n; i++ {
				p := (i*c + ch) * s
				vec.GradSumsBF16Lanes(&l, gd[p:][:s], xd[p:][:s], md[ch])
			}
			sg[ch], sgx[ch] = float32(l.Sum(0, 16)), float32(l.Sum(16, 32))
		}
	})
}

func channelAffine2BF16(out, g, x, a, b, d backend.View) {
	n, c, s := planes(x.Shape)
	xd, gd, od := data[backend.BF16](x), data[backend.BF16](g), data[backend.BF16](out)
	ad, bd, dd := data[float32](a), data[float32](b), data[float32](d)
	parallelFor(n*c, 2*s, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			vec.Affine2BF16(od[p*s:][:s], gd[p*s:][:s], xd[p*s:][:s], ad[p%c], bd[p%c], dd[p%c])
		}
	})
}

func channelStatsHalf[H halfT](mean, variance, x backend.View, widen func([]float32, []H)) {
	n, c, s := planes(x.Shape)
	xd, md, vd := data[H](x), data[float32](mean), data[float32](variance)
	cnt := float64(n * s)
	parallelFor(c, 2*n*s, func(lo, hi int) {
		buf := make([]float32, n*s)
		for ch := lo; ch < hi; ch++ {
			var sum float64
			for i := 0; i < n; i++ {
				p := buf[i*s:][:s]
				widen(p, xd[(i*c+ch)*s:][:s])
				sum += planeSum(p)
			}
			m := sum / cnt
			var sq float64
			for i := 0; i < n; i++ {
				sq += sqDev64(buf[i*s:][:s], m)
			}
			md[ch], vd[ch] = float32(m), float32(sq/cnt)
		}
	})
}

func channelAffineHalf[H halfT](out, x, scale, shift backend.View, widen func([]float32, []H), narrow func([]H, []float32)) {
	n, c, s := planes(x.Shape)
	xd, od, sd, td := data[H](x), data[H](out), data[float32](scale), data[float32](shift)
	parallelFor(n*c, s, func(lo, hi int) {
		buf := make([]float32, s)
		for p := lo; p < hi; p++ {
			widen(buf, xd[p*s:][:s])
			vec.Affine(buf, buf, sd[p%c], td[p%c]) // in place
			narrow(od[p*s:][:s], buf)
		}
	})
}

func channelGradSumsHalf[H halfT](sumG, sumGX, g, x, mean backend.View, widen func([]float32, []H)) {
	n, c, s := planes(x.Shape)
	xd, gd, md, sg, sgx := data[H](x), data[H](g), data[float32](mean), data[float32](sumG), data[float32](sumGX)
	parallelFor(c, 2*n*s, func(lo, hi int) {
		gb, xb := make([]float32, s), make([]float32, s)
		for ch := lo; ch < hi; ch++ {
			m := float64(md[ch])
			var s0, s1 float64
			for i := 0; i < n; i++ {
				widen(gb, gd[(i*c+ch)*s:][:s])
				widen(xb, xd[(i*c+ch)*s:][:s])
				a, b := gradSums64(gb, xb, m)
				s0, s1 = s0+a, s1+b
			}
			sg[ch], sgx[ch] = float32(s0), float32(s1)
		}
	})
}

func channelAffine2Half[H halfT](out, g, x, a, b, d backend.View, widen func([]float32, []H), narrow func([]H, []float32)) {
	n, c, s := planes(x.Shape)
	xd, gd, od := data[H](x), data[H](g), data[H](out)
	ad, bd, dd := data[float32](a), data[float32](b), data[float32](d)
	parallelFor(n*c, 2*s, func(lo, hi int) {
		gs, xs := make([]float32, s), make([]float32, s)
		for p := lo; p < hi; p++ {
			ka, kb, kd := ad[p%c], bd[p%c], dd[p%c]
			widen(gs, gd[p*s:][:s])
			widen(xs, xd[p*s:][:s])
			for i, gv := range gs { // the result in place of g
				gs[i] = gv*ka + xs[i]*kb + kd
			}
			narrow(od[p*s:][:s], gs)
		}
	})
}
