package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/vec"
)

// Per-channel kernels for batch normalisation over a contiguous
// [N, C, S...] tensor: statistics and gradient sums (blocks summed in the
// dtype, blocks' sums in float64), one channel per goroutine's share;
// affine maps one plane (n, c) at a time.

var _ backend.BatchNormer = Backend{}

// planes returns N, C and the plane size of an [N, C, *] shape.
func planes(shape []int) (n, c, s int) {
	s = 1
	for _, d := range shape[2:] {
		s *= d
	}
	return shape[0], shape[1], s
}

// ChannelStats writes each channel's mean and biased variance.
func (Backend) ChannelStats(mean, variance, x backend.View) {
	if halfBN(x.S.DType(), func() { channelStatsBF16(mean, variance, x) }, func() { channelStatsHalf(mean, variance, x, vec.F32FromF16) }) {
		return
	}
	floatKernel("batch_norm", x.S.DType(), func() { channelStats[float32](mean, variance, x) }, func() { channelStats[float64](mean, variance, x) })
}

func channelStats[T floatT](mean, variance, x backend.View) {
	if _, ok := any(T(0)).(float32); ok {
		channelStats32(mean, variance, x)
		return
	}
	n, c, s := planes(x.Shape)
	xd, md, vd := data[T](x), data[T](mean), data[T](variance)
	cnt := float64(n * s)
	parallelFor(c, 2*n*s, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			var sum float64
			for i := 0; i < n; i++ {
				sum += planeSum(xd[(i*c+ch)*s:][:s])
			}
			m := sum / cnt
			var sq float64
			for i := 0; i < n; i++ {
				sq += sqDev64(xd[(i*c+ch)*s:][:s], m)
			}
			md[ch], vd[ch] = T(m), T(sq/cnt)
		}
	})
}

// Sums not served by package vec are taken in T over blocks of bnBlock
// elements with independent accumulators (short dependency chains; plain
// variables, which the compiler keeps in registers, unlike arrays), and the
// blocks' sums in float64.
const bnBlock = 512

// sqDev64 is Σ (v−m)².
func sqDev64[T floatT](v []T, m64 float64) float64 {
	m := T(m64)
	var total float64
	for len(v) > 0 {
		b := v[:min(len(v), bnBlock)]
		v = v[len(b):]
		var s0, s1, s2, s3, s4, s5, s6, s7 T
		i := 0
		for ; i+8 <= len(b); i += 8 {
			c := (*[8]T)(b[i:])
			d0, d1, d2, d3 := c[0]-m, c[1]-m, c[2]-m, c[3]-m
			d4, d5, d6, d7 := c[4]-m, c[5]-m, c[6]-m, c[7]-m
			s0 += d0 * d0
			s1 += d1 * d1
			s2 += d2 * d2
			s3 += d3 * d3
			s4 += d4 * d4
			s5 += d5 * d5
			s6 += d6 * d6
			s7 += d7 * d7
		}
		for ; i < len(b); i++ {
			d := b[i] - m
			s0 += d * d
		}
		total += float64((s0+s1)+(s2+s3)) + float64((s4+s5)+(s6+s7))
	}
	return total
}

// gradSums64 is Σ g and Σ g·(x−m).
func gradSums64[T floatT](g, x []T, m64 float64) (float64, float64) {
	m := T(m64)
	var tg, tgx float64
	for len(g) > 0 {
		n := min(len(g), bnBlock)
		gb, xb := g[:n], x[:n]
		g, x = g[n:], x[n:]
		var s0, s1, s2, s3, u0, u1, u2, u3 T
		i := 0
		for ; i+4 <= n; i += 4 {
			a, c := (*[4]T)(gb[i:]), (*[4]T)(xb[i:])
			s0 += a[0]
			s1 += a[1]
			s2 += a[2]
			s3 += a[3]
			u0 += a[0] * (c[0] - m)
			u1 += a[1] * (c[1] - m)
			u2 += a[2] * (c[2] - m)
			u3 += a[3] * (c[3] - m)
		}
		for ; i < n; i++ {
			s0 += gb[i]
			u0 += gb[i] * (xb[i] - m)
		}
		tg += float64((s0 + s1) + (s2 + s3))
		tgx += float64((u0 + u1) + (u2 + u3))
	}
	return tg, tgx
}

// ChannelAffine writes out = x·scale[c] + shift[c].
func (Backend) ChannelAffine(out, x, scale, shift backend.View) {
	if halfBN(x.S.DType(), func() { channelAffineBF16(out, x, scale, shift) }, func() { channelAffineHalf(out, x, scale, shift, vec.F32FromF16, vec.F16FromF32) }) {
		return
	}
	floatKernel("batch_norm", x.S.DType(), func() { channelAffine[float32](out, x, scale, shift) }, func() { channelAffine[float64](out, x, scale, shift) })
}

func channelAffine[T floatT](out, x, scale, shift backend.View) {
	n, c, s := planes(x.Shape)
	xd, od, sd, td := data[T](x), data[T](out), data[T](scale), data[T](shift)
	if s < smallPlane {
		// Each channel's coefficients spread over one image (c·s of each),
		// then one FMA pass over each image's run of planes: a call per
		// plane cost ~20 ns, more than a 2×2 plane's work (ResNet-18's
		// last stage on 64×64 inputs: 16384 planes of 4).
		sx, tx := make([]T, c*s), make([]T, c*s)
		for ch := range c {
			for i := range s {
				sx[ch*s+i], tx[ch*s+i] = sd[ch], td[ch]
			}
		}
		parallelFor(n*c, s, func(lo, hi int) {
			for p := lo; p < hi; {
				ch := p % c
				q := min(hi, p-ch+c) // the end of p's image, or of the range
				k := (q - p) * s
				fmaRun(od[p*s:][:k], xd[p*s:][:k], sx[ch*s:][:k], tx[ch*s:][:k])
				p = q
			}
		})
		return
	}
	parallelFor(n*c, s, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			affinePlane(od[p*s:][:s], xd[p*s:][:s], sd[p%c], td[p%c])
		}
	})
}

// affinePlane sets dst = src·a + b with the vectorised loop (one pass, one
// rounding).
func affinePlane[T floatT](dst, src []T, a, b T) {
	switch d := any(dst).(type) {
	case []float32:
		vec.Affine(d, any(src).([]float32), float32(a), float32(b))
	case []float64:
		vec.Affine(d, any(src).([]float64), float64(a), float64(b))
	}
}

// fmaRun sets dst = src·a + b elementwise (vec.FMA).
func fmaRun[T floatT](dst, src, a, b []T) {
	switch d := any(dst).(type) {
	case []float32:
		vec.FMA(d, any(src).([]float32), any(a).([]float32), any(b).([]float32))
	case []float64:
		vec.FMA(d, any(src).([]float64), any(a).([]float64), any(b).([]float64))
	}
}

// planeSum is Σ v with the vectorised loops.
func planeSum[T floatT](v []T) float64 {
	if f, ok := any(v).([]float32); ok {
		return vec.Sum(f)
	}
	return vec.Sum(any(v).([]float64))
}

// ChannelGradSums writes Σ g and Σ g·(x − mean) per channel.
func (Backend) ChannelGradSums(sumG, sumGX, g, x, mean backend.View) {
	if halfBN(x.S.DType(), func() { channelGradSumsBF16(sumG, sumGX, g, x, mean) }, func() { channelGradSumsHalf(sumG, sumGX, g, x, mean, vec.F32FromF16) }) {
		return
	}
	floatKernel("batch_norm backward", x.S.DType(), func() { channelGradSums[float32](sumG, sumGX, g, x, mean) }, func() { channelGradSums[float64](sumG, sumGX, g, x, mean) })
}

func channelGradSums[T floatT](sumG, sumGX, g, x, mean backend.View) {
	if _, ok := any(T(0)).(float32); ok {
		channelGradSums32(sumG, sumGX, g, x, mean)
		return
	}
	n, c, s := planes(x.Shape)
	xd, gd, md, sg, sgx := data[T](x), data[T](g), data[T](mean), data[T](sumG), data[T](sumGX)
	parallelFor(c, 2*n*s, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			m := float64(md[ch])
			var s0, s1 float64
			for i := 0; i < n; i++ {
				a, b := gradSums64(gd[(i*c+ch)*s:][:s], xd[(i*c+ch)*s:][:s], m)
				s0, s1 = s0+a, s1+b
			}
			sg[ch], sgx[ch] = T(s0), T(s1)
		}
	})
}

// ChannelAffine2 writes out = g·a[c] + x·b[c] + d[c].
func (Backend) ChannelAffine2(out, g, x, a, b, d backend.View) {
	if halfBN(x.S.DType(), func() { channelAffine2BF16(out, g, x, a, b, d) }, func() { channelAffine2Half(out, g, x, a, b, d, vec.F32FromF16, vec.F16FromF32) }) {
		return
	}
	floatKernel("batch_norm backward", x.S.DType(), func() { channelAffine2[float32](out, g, x, a, b, d) }, func() { channelAffine2[float64](out, g, x, a, b, d) })
}

func channelAffine2[T floatT](out, g, x, a, b, d backend.View) {
	if _, ok := any(T(0)).(float32); ok {
		channelAffine2F32(out, g, x, a, b, d)
		return
	}
	n, c, s := planes(x.Shape)
	xd, gd, od := data[T](x), data[T](g), data[T](out)
	ad, bd, dd := data[T](a), data[T](b), data[T](d)
	parallelFor(n*c, 2*s, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			ka, kb, kd := ad[p%c], bd[p%c], dd[p%c]
			gs, xs, dst := gd[p*s:][:s], xd[p*s:][:s], od[p*s:][:s]
			for i, gv := range gs {
				dst[i] = gv*ka + xs[i]*kb + kd
			}
		}
	})
}

// The float32 kernels run on package vec's AVX2 loops (statistics and
// gradient sums in float32 lanes over blocks, float64 across blocks and
// planes, as the bfloat16 kernels; the backward's affine map in float32
// steps, as channelAffine2).

// smallPlane is the plane size below which the float32 statistics and
// gradient sums are plain float64 loops, and channelAffine runs whole
// images: a call into package vec per plane costs more than the plane's
// work there (ResNet's 2×2 and 4×4 layers).
const smallPlane = 32

func channelStats32(mean, variance, x backend.View) {
	n, c, s := planes(x.Shape)
	xd, md, vd := data[float32](x), data[float32](mean), data[float32](variance)
	cnt := float64(n * s)
	parallelFor(c, 2*n*s, func(lo, hi int) {
		if s < smallPlane {
			for ch := lo; ch < hi; ch++ {
				var sum float64
				for i := 0; i < n; i++ {
					for _, v := range xd[(i*c+ch)*s:][:s] {
						sum += float64(v)
					}
				}
				m := sum / cnt
				var sq float64
				for i := 0; i < n; i++ {
					for _, v := range xd[(i*c+ch)*s:][:s] {
						d := float64(v) - m
						sq += d * d
					}
				}
				md[ch], vd[ch] = float32(m), float32(sq/cnt)
			}
			return
		}
		for ch := lo; ch < hi; ch++ {
			var l vec.Lanes
			for i := 0; i < n; i++ {
				vec.SumLanes(&l, xd[(i*c+ch)*s:][:s])
			}
			m := l.Sum(0, 32) / cnt
			l = vec.Lanes{}
			for i := 0; i < n; i++ {
				vec.SqDevLanes(&l, xd[(i*c+ch)*s:][:s], float32(m))
			}
			md[ch], vd[ch] = float32(m), float32(l.Sum(0, 32)/cnt)
		}
	})
}

func channelGradSums32(sumG, sumGX, g, x, mean backend.View) {
	n, c, s := planes(x.Shape)
	xd, gd := data[float32](x), data[float32](g)
	md, sg, sgx := data[float32](mean), data[float32](sumG), data[float32](sumGX)
	parallelFor(c, 2*n*s, func(lo, hi int) {
		if s < smallPlane {
			for ch := lo; ch < hi; ch++ {
				m := float64(md[ch])
				var tg, tgx float64
				for i := 0; i < n; i++ {
					xs := xd[(i*c+ch)*s:][:s]
					for j, gv := range gd[(i*c+ch)*s:][:s] {
						tg += float64(gv)
						tgx += float64(gv) * (float64(xs[j]) - m)
					}
				}
				sg[ch], sgx[ch] = float32(tg), float32(tgx)
			}
			return
		}
		for ch := lo; ch < hi; ch++ {
			var l vec.Lanes
			for i := 0; i < n; i++ {
				vec.GradSumsLanes(&l, gd[(i*c+ch)*s:][:s], xd[(i*c+ch)*s:][:s], md[ch])
			}
			sg[ch], sgx[ch] = float32(l.Sum(0, 16)), float32(l.Sum(16, 32))
		}
	})
}

func channelAffine2F32(out, g, x, a, b, d backend.View) {
	n, c, s := planes(x.Shape)
	xd, gd, od := data[float32](x), data[float32](g), data[float32](out)
	ad, bd, dd := data[float32](a), data[float32](b), data[float32](d)
	parallelFor(n*c, 2*s, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			vec.Affine2(od[p*s:][:s], gd[p*s:][:s], xd[p*s:][:s], ad[p%c], bd[p%c], dd[p%c])
		}
	})
}
