package cpu

import "github.com/emberml/ember/backend"

// Per-channel kernels for batch normalisation over a contiguous
// [N, C, S...] tensor: statistics and gradient sums in float64, one
// channel per goroutine's share; affine maps one plane (n, c) at a time.

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
	switch x.S.DType() {
	case backend.Float32:
		channelStats[float32](mean, variance, x)
	case backend.Float64:
		channelStats[float64](mean, variance, x)
	default:
		notImpl("batch_norm", x.S.DType())
	}
}

func channelStats[T floatT](mean, variance, x backend.View) {
	n, c, s := planes(x.Shape)
	xd, md, vd := data[T](x), data[T](mean), data[T](variance)
	cnt := float64(n * s)
	parallelFor(c, 2*n*s, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			var sum float64
			for i := 0; i < n; i++ {
				sum += sum64(xd[(i*c+ch)*s:][:s])
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

// sum64 is Σ v in float64.
func sum64[T floatT](v []T) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		s0 += float64(v[i])
		s1 += float64(v[i+1])
		s2 += float64(v[i+2])
		s3 += float64(v[i+3])
	}
	for ; i < len(v); i++ {
		s0 += float64(v[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// sqDev64 is Σ (v−m)² in float64.
func sqDev64[T floatT](v []T, m float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		d0, d1, d2, d3 := float64(v[i])-m, float64(v[i+1])-m, float64(v[i+2])-m, float64(v[i+3])-m
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(v); i++ {
		d := float64(v[i]) - m
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// ChannelAffine writes out = x·scale[c] + shift[c].
func (Backend) ChannelAffine(out, x, scale, shift backend.View) {
	switch x.S.DType() {
	case backend.Float32:
		channelAffine[float32](out, x, scale, shift)
	case backend.Float64:
		channelAffine[float64](out, x, scale, shift)
	default:
		notImpl("batch_norm", x.S.DType())
	}
}

func channelAffine[T floatT](out, x, scale, shift backend.View) {
	n, c, s := planes(x.Shape)
	xd, od, sd, td := data[T](x), data[T](out), data[T](scale), data[T](shift)
	parallelFor(n*c, s, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			a, b := sd[p%c], td[p%c]
			src, dst := xd[p*s:][:s], od[p*s:][:s]
			for i, v := range src {
				dst[i] = v*a + b
			}
		}
	})
}

// ChannelGradSums writes Σ g and Σ g·(x − mean) per channel.
func (Backend) ChannelGradSums(sumG, sumGX, g, x, mean backend.View) {
	switch x.S.DType() {
	case backend.Float32:
		channelGradSums[float32](sumG, sumGX, g, x, mean)
	case backend.Float64:
		channelGradSums[float64](sumG, sumGX, g, x, mean)
	default:
		notImpl("batch_norm backward", x.S.DType())
	}
}

func channelGradSums[T floatT](sumG, sumGX, g, x, mean backend.View) {
	n, c, s := planes(x.Shape)
	xd, gd, md, sg, sgx := data[T](x), data[T](g), data[T](mean), data[T](sumG), data[T](sumGX)
	parallelFor(c, 2*n*s, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			m := float64(md[ch])
			var s0, s1 float64
			for i := 0; i < n; i++ {
				a, b := s0, s1
				gs, xs := gd[(i*c+ch)*s:][:s], xd[(i*c+ch)*s:][:s]
				for j, gv := range gs {
					a += float64(gv)
					b += float64(gv) * (float64(xs[j]) - m)
				}
				s0, s1 = a, b
			}
			sg[ch], sgx[ch] = T(s0), T(s1)
		}
	})
}

// ChannelAffine2 writes out = g·a[c] + x·b[c] + d[c].
func (Backend) ChannelAffine2(out, g, x, a, b, d backend.View) {
	switch x.S.DType() {
	case backend.Float32:
		channelAffine2[float32](out, g, x, a, b, d)
	case backend.Float64:
		channelAffine2[float64](out, g, x, a, b, d)
	default:
		notImpl("batch_norm backward", x.S.DType())
	}
}

func channelAffine2[T floatT](out, g, x, a, b, d backend.View) {
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
