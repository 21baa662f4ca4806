package cpu

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
)

// Fused attention (backend.Attender), FlashAttention's way: the scores of
// one tile of attnTile queries by attnTile keys at a time, in a per-worker
// scratch, never the whole L×S matrix.
//
// Forward, per (batch, query tile): for each key tile, S = Q·Kᵀ·scale
// (a GEMM), the mask, then the online softmax: the running row maximum m
// and sum l, the accumulator rescaled by exp(m_old − m_new), plus P·V (a
// GEMM). The output is acc/l and lse = m + log l.
//
// Backward (FlashAttention-2), per (batch, chunk of key tiles): D_i = Σ
// dO_i·O_i first; then for each key tile and each query tile it sees,
// S is recomputed, P = exp(S − lse), dV += Pᵀ·dO, dP = dO·Vᵀ,
// dS = P·(dP − D), dQ += dS·K·scale, dK += dSᵀ·Q·scale: five GEMMs per
// tile pair. A batch's key tiles are split into chunks only when there
// are fewer batches than workers; each chunk then sums its dQ privately.

var _ backend.Attender = Backend{}

// attnTile is the rows and columns of a score tile.
const attnTile = 64

// AttentionSupported: Float32 and Float64, any head dims.
func (Backend) AttentionSupported(dt backend.DType, e, ev int) bool {
	return (dt == backend.Float32 || dt == backend.Float64) && e > 0 && ev > 0
}

type gemmFunc[T floatT] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// AttentionForward writes softmax(q·kᵀ·scale + mask)·v and each row's lse.
func (Backend) AttentionForward(out, lse, q, k, v, mask backend.View, p backend.AttentionParams) {
	floatKernel("scaled_dot_product_attention", q.S.DType(),
		func() { attnForward[float32](gemm.Sgemm, exp32, out, lse, q, k, v, mask, p) },
		func() { attnForward[float64](gemm.Dgemm, math.Exp, out, lse, q, k, v, mask, p) })
}

// AttentionBackward writes the gradients of q, k and v.
func (Backend) AttentionBackward(gq, gk, gv, gout, q, k, v, mask, out, lse backend.View, p backend.AttentionParams) {
	floatKernel("scaled_dot_product_attention_backward", q.S.DType(),
		func() { attnBackward[float32](gemm.Sgemm, exp32, gq, gk, gv, gout, q, k, v, mask, out, lse, p) },
		func() { attnBackward[float64](gemm.Dgemm, math.Exp, gq, gk, gv, gout, q, k, v, mask, out, lse, p) })
}

// mat3 is a [B, rows, cols] operand with unit column stride: its data
// from the view's offset and its batch and row strides.
type mat3[T floatT] struct {
	d      []T
	sb, sr int
}

// rows returns batch b's matrix from row r on.
func (m mat3[T]) rows(b, r int) []T { return m.d[b*m.sb+r*m.sr:] }

// asMat3 returns v as a mat3, packing it first when its columns are not
// unit-strided.
func asMat3[T floatT](v backend.View) mat3[T] {
	s := slice[T](v.S)
	if (v.Shape[2] > 1 && v.Strides[2] != 1) || (v.Shape[1] > 1 && v.Strides[1] < v.Shape[2]) {
		return mat3[T]{d: packed(s, v, v.Shape[1], v.Shape[2]), sb: v.Shape[1] * v.Shape[2], sr: v.Shape[2]}
	}
	sr := v.Strides[1]
	if v.Shape[1] <= 1 {
		sr = v.Shape[2]
	}
	return mat3[T]{d: s[v.Offset:], sb: v.Strides[0], sr: sr}
}

// attnMask reads a [B1, B2, L, S] mask view.
type attnMask[T floatT] struct {
	kind     backend.AttentionMask
	b        []bool
	f        []T
	off      int
	b2       int
	s0, s1   int
	sr, sc   int
	causal   bool
	nonFinal bool
}

func newAttnMask[T floatT](m backend.View, p backend.AttentionParams) attnMask[T] {
	am := attnMask[T]{kind: p.Mask, causal: p.Causal}
	if p.Mask == backend.NoMask {
		return am
	}
	switch p.Mask {
	case backend.BoolMask:
		am.b = slice[bool](m.S)
	default:
		am.f = slice[T](m.S)
	}
	am.off, am.b2 = m.Offset, m.Shape[1]
	am.s0, am.s1, am.sr, am.sc = m.Strides[0], m.Strides[1], m.Strides[2], m.Strides[3]
	return am
}

// apply masks the tile s (nr×nc, row stride ld) of batch b at rows r0…,
// columns c0….
func (am *attnMask[T]) apply(s []T, ld, b, r0, nr, c0, nc int) {
	ninf := T(math.Inf(-1))
	if am.causal {
		for i := 0; i < nr; i++ {
			row := s[i*ld : i*ld+nc]
			for j := max(r0+i+1-c0, 0); j < nc; j++ {
				row[j] = ninf
			}
		}
		return
	}
	if am.kind == backend.NoMask {
		return
	}
	base := am.off + (b/am.b2)*am.s0 + (b%am.b2)*am.s1
	for i := 0; i < nr; i++ {
		row := s[i*ld : i*ld+nc]
		mo := base + (r0+i)*am.sr + c0*am.sc
		if am.kind == backend.BoolMask {
			for j := range row {
				if !am.b[mo+j*am.sc] {
					row[j] = ninf
				}
			}
		} else {
			for j := range row {
				row[j] += am.f[mo+j*am.sc]
			}
		}
	}
}

// keyTiles is the number of key tiles query rows [r0, r0+nr) see.
func keyTiles(causal bool, r0, nr, s int) int {
	n := (s + attnTile - 1) / attnTile
	if causal {
		n = min(n, (r0+nr-1)/attnTile+1)
	}
	return n
}

func attnForward[T floatT](mm gemmFunc[T], exp func(T) T, out, lse, qv, kv, vv, mask backend.View, p backend.AttentionParams) {
	nb, l, e := qv.Shape[0], qv.Shape[1], qv.Shape[2]
	s, ev := kv.Shape[1], vv.Shape[2]
	q, k, v := asMat3[T](qv), asMat3[T](kv), asMat3[T](vv)
	od, ld := slice[T](out.S)[out.Offset:], slice[T](lse.S)[lse.Offset:]
	am := newAttnMask[T](mask, p)
	scale := T(p.Scale)
	qt := (l + attnTile - 1) / attnTile
	ninf := T(math.Inf(-1))
	parallelFor(nb*qt, attnTile*s*(e+ev)*2, func(lo, hi int) {
		st := make([]T, attnTile*attnTile)
		acc := make([]T, attnTile*ev)
		m := make([]T, attnTile)
		sum := make([]T, attnTile)
		for w := lo; w < hi; w++ {
			b, r0 := w/qt, (w%qt)*attnTile
			nr := min(attnTile, l-r0)
			for i := 0; i < nr; i++ {
				m[i], sum[i] = ninf, 0
			}
			clear(acc[:nr*ev])
			for jt := range keyTiles(p.Causal, r0, nr, s) {
				c0 := jt * attnTile
				nc := min(attnTile, s-c0)
				mm(false, true, nr, nc, e, scale, q.rows(b, r0), q.sr, k.rows(b, c0), k.sr, 0, st, attnTile)
				am.apply(st, attnTile, b, r0, nr, c0, nc)
				for i := 0; i < nr; i++ {
					row := st[i*attnTile : i*attnTile+nc]
					mt := m[i]
					for _, x := range row {
						mt = max(mt, x)
					}
					if mt == ninf { // nothing seen yet: P is 0
						clear(row)
						continue
					}
					alpha := exp(m[i] - mt)
					var ts T
					for j, x := range row {
						pe := exp(x - mt)
						row[j] = pe
						ts += pe
					}
					sum[i] = sum[i]*alpha + ts
					m[i] = mt
					if alpha != 1 {
						a := acc[i*ev : i*ev+ev]
						for j := range a {
							a[j] *= alpha
						}
					}
				}
				mm(false, false, nr, ev, nc, 1, st, attnTile, v.rows(b, c0), v.sr, 1, acc, ev)
			}
			for i := 0; i < nr; i++ {
				o := od[(b*l+r0+i)*ev:][:ev]
				inv := 1 / sum[i]
				for j, a := range acc[i*ev : i*ev+ev] {
					o[j] = a * inv
				}
				ld[b*l+r0+i] = m[i] + T(math.Log(float64(sum[i])))
			}
		}
	})
}

func attnBackward[T floatT](mm gemmFunc[T], exp func(T) T, gqv, gkv, gvv, goutv, qv, kv, vv, mask, outv, lsev backend.View, p backend.AttentionParams) {
	nb, l, e := qv.Shape[0], qv.Shape[1], qv.Shape[2]
	s, ev := kv.Shape[1], vv.Shape[2]
	q, k, v, do := asMat3[T](qv), asMat3[T](kv), asMat3[T](vv), asMat3[T](goutv)
	o := asMat3[T](outv)
	lse := slice[T](lsev.S)[lsev.Offset:]
	gq := slice[T](gqv.S)[gqv.Offset:][:nb*l*e]
	gk := slice[T](gkv.S)[gkv.Offset:][:nb*s*e]
	gv := slice[T](gvv.S)[gvv.Offset:][:nb*s*ev]
	am := newAttnMask[T](mask, p)
	scale := T(p.Scale)

	// D_i = Σ dO_i·O_i
	dd := make([]T, nb*l)
	parallelFor(nb*l, 2*ev, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, i := r/l, r%l
			a, c := do.rows(b, i)[:ev], o.rows(b, i)[:ev]
			var acc T
			for j := range a {
				acc += a[j] * c[j]
			}
			dd[r] = acc
		}
	})

	kt := (s + attnTile - 1) / attnTile
	chunks := 1
	if w := Threads(); nb < w {
		chunks = min(kt, (w+nb-1)/nb)
	}
	var part []T // per-chunk dQ when a batch is split
	if chunks > 1 {
		part = make([]T, chunks*nb*l*e)
	} else {
		clear(gq)
	}
	clear(gk)
	clear(gv)
	parallelFor(nb*chunks, l*s*(2*e+3*ev)/chunks, func(lo, hi int) {
		st := make([]T, attnTile*attnTile)
		dp := make([]T, attnTile*attnTile)
		for w := lo; w < hi; w++ {
			b, c := w/chunks, w%chunks
			dq := gq[b*l*e : (b+1)*l*e]
			if chunks > 1 {
				dq = part[(c*nb+b)*l*e : (c*nb+b+1)*l*e]
			}
			for jt := kt * c / chunks; jt < kt*(c+1)/chunks; jt++ {
				c0 := jt * attnTile
				nc := min(attnTile, s-c0)
				dk := gk[(b*s+c0)*e:]
				dv := gv[(b*s+c0)*ev:]
				it0 := 0
				if p.Causal {
					it0 = c0 / attnTile
				}
				for r0 := it0 * attnTile; r0 < l; r0 += attnTile {
					nr := min(attnTile, l-r0)
					mm(false, true, nr, nc, e, scale, q.rows(b, r0), q.sr, k.rows(b, c0), k.sr, 0, st, attnTile)
					am.apply(st, attnTile, b, r0, nr, c0, nc)
					for i := 0; i < nr; i++ {
						li := lse[b*l+r0+i]
						row := st[i*attnTile : i*attnTile+nc]
						for j, x := range row {
							row[j] = exp(x - li)
						}
					}
					mm(true, false, nc, ev, nr, 1, st, attnTile, do.rows(b, r0), do.sr, 1, dv, ev)
					mm(false, true, nr, nc, ev, 1, do.rows(b, r0), do.sr, v.rows(b, c0), v.sr, 0, dp, attnTile)
					for i := 0; i < nr; i++ {
						di := dd[b*l+r0+i]
						pr := st[i*attnTile : i*attnTile+nc]
						dr := dp[i*attnTile : i*attnTile+nc]
						for j := range pr {
							dr[j] = pr[j] * (dr[j] - di)
						}
					}
					mm(false, false, nr, e, nc, scale, dp, attnTile, k.rows(b, c0), k.sr, 1, dq[r0*e:], e)
					mm(true, false, nc, e, nr, scale, dp, attnTile, q.rows(b, r0), q.sr, 1, dk, e)
				}
			}
		}
	})
	if chunks > 1 {
		n := nb * l * e
		parallelFor(n, chunks, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				var a T
				for c := 0; c < chunks; c++ {
					a += part[c*n+i]
				}
				gq[i] = a
			}
		})
	}
}

// exp32 is e^x in float32 to about 2 ulp: x = n·ln2 + r with |r| ≤ ln2/2,
// e^r by a degree-6 polynomial, 2^n put in the exponent.
func exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88.72283:
		return float32(math.Inf(1))
	case x < -103.97:
		return 0
	}
	const log2e, ln2hi, ln2lo = 1.44269504088896341, 0.693359375, -2.12194440e-4
	n := float32(math.Floor(float64(x*log2e + 0.5)))
	r := x - n*ln2hi - n*ln2lo
	pr := float32(1.0/720)*r + 1.0/120
	pr = pr*r + 1.0/24
	pr = pr*r + 1.0/6
	pr = pr*r + 0.5
	pr = pr*r + 1
	pr = pr*r + 1
	ni := int32(n)
	if ni < -126 { // subnormal results: scale in two steps
		return pr * math.Float32frombits(uint32(ni+126+127)<<23) * math.Float32frombits(1<<23)
	}
	if ni > 127 {
		return pr * 2 * math.Float32frombits(uint32(ni-1+127)<<23)
	}
	return pr * math.Float32frombits(uint32(ni+127)<<23)
}
