package linalg

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// QR returns the QR decomposition A = Q R of each matrix of a, as
// torch.linalg.qr, with mode "reduced" (Q m×k, R k×n, k = min(m, n)),
// "complete" (Q m×m, R m×n) or "r" (R only, Q an empty tensor). The signs
// are LAPACK's (geqrf's Householder reflectors: R's diagonal may be
// negative), as PyTorch's. Gradients need Q (not mode "r"), and in
// "complete" mode m <= n, as in PyTorch.
func QR(a *ember.Tensor, mode string) (q, r *ember.Tensor) {
	const op = "linalg.qr"
	checkMatrix(op, "A", a, false)
	if mode != "reduced" && mode != "complete" && mode != "r" {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("qr received unrecognized mode '%s' but expected one of 'reduced' (default), 'r', or 'complete'", mode)})
	}
	s := a.Shape()
	batch, m, n := s[:len(s)-2], s[len(s)-2], s[len(s)-1]
	complete, wantQ := mode == "complete", mode != "r"
	k := min(m, n)
	qc := k
	if complete {
		qc = m
	}
	if isMeta(a) {
		r = empty(a, shapeOf(batch, qc, n))
		if wantQ {
			q = empty(a, shapeOf(batch, m, qc))
		}
	} else {
		b := load(a)
		qs, rs := make([][]float64, len(b.data)), make([][]float64, len(b.data))
		for i, mm := range b.data {
			qs[i], rs[i], _ = qr(mm, m, n, complete, wantQ)
		}
		r = store(a, shapeOf(batch, qc, n), rs)
		if wantQ {
			q = store(a, shapeOf(batch, m, qc), qs)
		}
	}
	if !wantQ {
		q = ember.Zeros(ember.Shape{0}, ember.On(a.Device()), ember.Dtype(a.DType()))
	}
	if !needsGrad(a) {
		return q, r
	}
	check := func() {
		if !wantQ {
			panic(&ember.AutogradError{Op: op, Msg: "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."})
		}
		if complete && m > n {
			panic(&ember.AutogradError{Op: op, Msg: "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."})
		}
	}
	q0, r0 := q, r
	r = record("LinalgQrBackward0", r0, saves(q0, r0), func(g *ember.Tensor) []*ember.Tensor {
		check()
		return []*ember.Tensor{qrBackward(nil, g, q0, r0)}
	}, a)
	if wantQ {
		q = record("LinalgQrBackward0", q0, saves(q0, r0), func(g *ember.Tensor) []*ember.Tensor {
			check()
			return []*ember.Tensor{qrBackward(g, nil, q0, r0)}
		}, a)
	}
	return q, r
}

// qrBackward is the VJP of A = Q R (PyTorch's linalg_qr_backward): for
// m >= n, gA = (gQ + Q copyltu(M)) R⁻ᵀ with M = R gRᵀ - gQᵀ Q; for m < n,
// A = [X | Y], R = [U | V]: X gets the square case with gQ + Y gVᵀ, Y gets
// Q gV. A nil cotangent is zero.
func qrBackward(gQ, gR, Q, R *ember.Tensor) *ember.Tensor {
	rs := R.Shape()
	m, n := Q.Shape()[Q.Dim()-2], rs[len(rs)-1]
	if m >= n {
		return qrSquareBackward(gQ, gR, Q, R)
	}
	U, V := R.Narrow(-1, 0, m), R.Narrow(-1, m, n-m)
	var gU, gV *ember.Tensor
	if gR != nil {
		gU, gV = gR.Narrow(-1, 0, m), gR.Narrow(-1, m, n-m)
	}
	var gX, gY *ember.Tensor
	if gV != nil {
		Y := Q.MatMul(V)
		gq := Y.MatMul(mT(gV))
		if gQ != nil {
			gq = gq.Add(gQ)
		}
		gX = qrSquareBackward(gq, gU, Q, U)
		gY = Q.MatMul(gV)
	} else {
		gX = qrSquareBackward(gQ, gU, Q, U)
		gY = ember.Zeros(shapeOf(Q.Shape()[:Q.Dim()-2], m, n-m), ember.On(Q.Device()), ember.Dtype(Q.DType()))
	}
	return ember.Cat([]*ember.Tensor{gX, gY}, -1)
}

func qrSquareBackward(gQ, gR, Q, R *ember.Tensor) *ember.Tensor {
	var M *ember.Tensor
	if gR != nil {
		M = R.MatMul(mT(gR))
	}
	if gQ != nil {
		t := mT(gQ).MatMul(Q)
		if M == nil {
			M = t.Neg()
		} else {
			M = M.Sub(t)
		}
	}
	lo := M.Tril(0)
	M = lo.Add(mT(lo))
	M = M.Sub(M.Diagonal(0, -2, -1).MulScalar(0.5).DiagEmbed(0, -2, -1))
	rhs := Q.MatMul(M)
	if gQ != nil {
		rhs = rhs.Add(gQ)
	}
	// rhs R⁻ᵀ = (R⁻¹ rhsᵀ)ᵀ
	return mT(solve(R, mT(rhs)))
}

// checkUPLO panics unless uplo is "L" or "U".
func checkUPLO(op, uplo string) bool {
	if uplo != "L" && uplo != "U" {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Expected UPLO argument to be 'L' or 'U', but got %s", uplo)})
	}
	return uplo == "L"
}

// eighHost decomposes every matrix of a on the host.
func eighHost(op string, a *ember.Tensor, lower, wantV bool) (w, v *ember.Tensor) {
	s := a.Shape()
	batch, n := s[:len(s)-2], s[len(s)-1]
	if isMeta(a) {
		return empty(a, shapeOf(batch, n)), empty(a, s)
	}
	b := load(a)
	ws, vs := make([][]float64, len(b.data)), make([][]float64, len(b.data))
	for i, m := range b.data {
		var ok bool
		ws[i], vs[i], ok = eigh(m, n, lower, wantV)
		if !ok {
			panic(&ember.ValueError{Op: op, Msg: batchMsg(len(batch) > 0, i, "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues.")})
		}
	}
	w = store(a, shapeOf(batch, n), ws)
	if wantV {
		v = store(a, s, vs)
	}
	return w, v
}

// Eigh returns the eigenvalues (ascending) and the orthonormal
// eigenvectors (the columns of V) of each symmetric matrix of a, reading
// only its lower (uplo "L") or upper ("U") triangle, as torch.linalg.eigh.
// The eigenvectors' signs are LAPACK's (arbitrary); differentiate only
// sign-invariant functions of them, with distinct eigenvalues.
func Eigh(a *ember.Tensor, uplo string) (l, v *ember.Tensor) {
	const op = "linalg.eigh"
	checkMatrix(op, "A", a, true)
	l, v = eighHost(op, a, checkUPLO(op, uplo), true)
	if !needsGrad(a) {
		return l, v
	}
	l0, v0 := l, v
	l = record("LinalgEighBackward0", l0, saves(l0, v0), func(g *ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{eighBackward(g, nil, l0, v0)}
	}, a)
	v = record("LinalgEighBackward0", v0, saves(l0, v0), func(g *ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{eighBackward(nil, g, l0, v0)}
	}, a)
	return l, v
}

// Eigvalsh returns the eigenvalues (ascending) of each symmetric matrix of
// a, as torch.linalg.eigvalsh (see Eigh).
func Eigvalsh(a *ember.Tensor, uplo string) *ember.Tensor {
	const op = "linalg.eigvalsh"
	checkMatrix(op, "A", a, true)
	lower := checkUPLO(op, uplo)
	grad := needsGrad(a)
	l, v := eighHost(op, a, lower, grad)
	if !grad {
		return l
	}
	return record("LinalgEighBackward0", l, saves(l, v), func(g *ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{eighBackward(g, nil, l, v)}
	}, a)
}

// eighBackward is PyTorch's linalg_eig_backward for Hermitian input:
// gA = V (skew(Vᵀ gV) / E + diag(gL)) Vᵀ, E_ij = L_j - L_i (1 on the
// diagonal), skew(X) = (X - Xᵀ)/2.
func eighBackward(gL, gV, L, V *ember.Tensor) *ember.Tensor {
	if gV == nil {
		return V.Mul(gL.Unsqueeze(-2)).MatMul(mT(V))
	}
	x := mT(V).MatMul(gV)
	x = x.Sub(mT(x)).MulScalar(0.5)
	e := L.Unsqueeze(-2).Sub(L.Unsqueeze(-1))
	n := L.Shape()[L.Dim()-1]
	e = e.Add(eyeLike(L, n))
	x = x.Div(e)
	if gL != nil {
		x = x.Add(gL.DiagEmbed(0, -2, -1))
	}
	return V.MatMul(x.MatMul(mT(V)))
}

// svdHost decomposes every matrix of a on the host.
func svdHost(op string, a *ember.Tensor, full, wantUV bool) (u, s, vh *ember.Tensor) {
	sh := a.Shape()
	batch, m, n := sh[:len(sh)-2], sh[len(sh)-2], sh[len(sh)-1]
	k := min(m, n)
	uc, vr := k, k
	if full {
		uc, vr = m, n
	}
	if isMeta(a) {
		return empty(a, shapeOf(batch, m, uc)), empty(a, shapeOf(batch, k)), empty(a, shapeOf(batch, vr, n))
	}
	b := load(a)
	us, ss, vs := make([][]float64, len(b.data)), make([][]float64, len(b.data)), make([][]float64, len(b.data))
	for i, mm := range b.data {
		checkFinite(len(batch) > 0, i, mm)
		var ok bool
		ss[i], us[i], vs[i], _, _, ok = svd(mm, m, n, full, wantUV)
		if !ok {
			panic(&ember.ValueError{Op: op, Msg: batchMsg(len(batch) > 0, i, "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated singular values.")})
		}
	}
	s = store(a, shapeOf(batch, k), ss)
	if wantUV {
		u, vh = store(a, shapeOf(batch, m, uc), us), store(a, shapeOf(batch, vr, n), vs)
	}
	return u, s, vh
}

// SVD returns A = U diag(S) Vh for each matrix of a, as torch.linalg.svd:
// S descending; with fullMatrices U is m×m and Vh n×n, otherwise m×k and
// k×n (k = min(m, n)). The singular vectors' signs are LAPACK's
// (arbitrary); differentiate only sign-invariant functions of them, with
// distinct singular values. With fullMatrices the gradients of the
// columns of U and rows of Vh beyond k are ignored, as in PyTorch.
func SVD(a *ember.Tensor, fullMatrices bool) (u, s, vh *ember.Tensor) {
	const op = "linalg.svd"
	checkMatrix(op, "A", a, false)
	u, s, vh = svdHost(op, a, fullMatrices, true)
	if !needsGrad(a) {
		return u, s, vh
	}
	sh := a.Shape()
	k := min(sh[len(sh)-2], sh[len(sh)-1])
	uk, vhk := u, vh
	if fullMatrices {
		uk, vhk = u.Narrow(-1, 0, k), vh.Narrow(-2, 0, k)
	}
	u0, s0, vh0 := u, s, vh
	u = record("LinalgSvdBackward0", u0, saves(u0, s0, vh0), func(g *ember.Tensor) []*ember.Tensor {
		if fullMatrices {
			g = g.Narrow(-1, 0, k)
		}
		return []*ember.Tensor{svdBackward(g, nil, nil, uk, s0, vhk)}
	}, a)
	s = record("LinalgSvdBackward0", s0, saves(u0, s0, vh0), func(g *ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{svdBackward(nil, g, nil, uk, s0, vhk)}
	}, a)
	vh = record("LinalgSvdBackward0", vh0, saves(u0, s0, vh0), func(g *ember.Tensor) []*ember.Tensor {
		if fullMatrices {
			g = g.Narrow(-2, 0, k)
		}
		return []*ember.Tensor{svdBackward(nil, nil, g, uk, s0, vhk)}
	}, a)
	return u, s, vh
}

// checkFinite panics as PyTorch's SVD does on a matrix with Inf or NaN
// (every function built on it: Svdvals, Pinv, MatrixRank, the 2-norms).
func checkFinite(batched bool, i int, m []float64) {
	for _, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			panic(&ember.ValueError{Op: "linalg.svd", Msg: batchMsg(batched, i, "The algorithm failed to converge because the input matrix contained non-finite values.")})
		}
	}
}

// Svdvals returns the singular values (descending) of each matrix of a, as
// torch.linalg.svdvals.
func Svdvals(a *ember.Tensor) *ember.Tensor {
	const op = "linalg.svdvals"
	checkMatrix(op, "A", a, false)
	grad := needsGrad(a)
	u, s, vh := svdHost(op, a, false, grad)
	if !grad {
		return s
	}
	return record("LinalgSvdBackward0", s, saves(u, s, vh), func(g *ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{svdBackward(nil, g, nil, u, s, vh)}
	}, a)
}

// svdBackward is PyTorch's svd_backward for real input and reduced U, Vh:
// gA = U [(skew(Uᵀ gU) S + S skew(Vᵀ gV)) / E + diag(gS)] Vh plus the
// projections of gU and gV off the spans of U and V, with skew(X) = X - Xᵀ
// and E_jk = S_k² - S_j² (1 on the diagonal). nil cotangents are zero.
func svdBackward(gU, gS, gVh, U, S, Vh *ember.Tensor) *ember.Tensor {
	m, n := U.Shape()[U.Dim()-2], Vh.Shape()[Vh.Dim()-1]
	if gU == nil && gVh == nil {
		if m >= n {
			return U.MatMul(gS.Unsqueeze(-1).Mul(Vh))
		}
		return U.Mul(gS.Unsqueeze(-2)).MatMul(Vh)
	}
	skew := func(x *ember.Tensor) *ember.Tensor { return x.Sub(mT(x)) }
	s2 := S.Mul(S)
	k := S.Shape()[S.Dim()-1]
	e := s2.Unsqueeze(-2).Sub(s2.Unsqueeze(-1)).Add(eyeLike(S, k))
	var gA *ember.Tensor
	if gU != nil {
		gA = skew(mT(U).MatMul(gU)).Mul(S.Unsqueeze(-2).Div(e))
	} else {
		gA = S.Unsqueeze(-1).Mul(skew(Vh.MatMul(mT(gVh))).Div(e))
	}
	if gS != nil {
		gA = gA.Add(gS.DiagEmbed(0, -2, -1))
	}
	switch {
	case m > n && gU != nil:
		gA = U.MatMul(gA)
		gUSinv := gU.Div(S.Unsqueeze(-2))
		gA = gA.Add(gUSinv).Sub(U.MatMul(mT(U).MatMul(gUSinv)))
		return gA.MatMul(Vh)
	case m < n && gVh != nil:
		gA = gA.MatMul(Vh)
		sinvgVh := gVh.Div(S.Unsqueeze(-1))
		gA = gA.Add(sinvgVh).Sub(sinvgVh.MatMul(mT(Vh)).MatMul(Vh))
		return U.MatMul(gA)
	case m >= n:
		return U.MatMul(gA.MatMul(Vh))
	}
	return U.MatMul(gA).MatMul(Vh)
}

// eps is the machine epsilon of dt, as torch.finfo(dt).eps.
func eps(dt ember.DType) float64 {
	if dt == ember.Float32 {
		return float64(math.Nextafter32(1, 2) - 1)
	}
	return math.Nextafter(1, 2) - 1
}

// Pinv returns the Moore-Penrose pseudo-inverse of each matrix of a, as
// torch.linalg.pinv with its default tolerance: singular values at or
// below eps·max(m, n)·σ_max (eps of a's dtype) are treated as zero. Its
// gradient is PyTorch's pinv_backward.
func Pinv(a *ember.Tensor) *ember.Tensor {
	checkMatrix("linalg.pinv", "A", a, false)
	sh := a.Shape()
	return PinvTol(a, 0, eps(a.DType())*float64(max(sh[len(sh)-2], sh[len(sh)-1])))
}

// PinvTol is torch.linalg.pinv(A, atol=atol, rtol=rtol): singular values
// at or below max(atol, rtol·σ_max) are treated as zero.
func PinvTol(a *ember.Tensor, atol, rtol float64) *ember.Tensor {
	const op = "linalg.pinv"
	checkMatrix(op, "A", a, false)
	if atol < 0 || rtol < 0 || math.IsNaN(atol) || math.IsNaN(rtol) {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("atol and rtol must be non-negative, got %v and %v", atol, rtol)})
	}
	sh := a.Shape()
	batch, m, n := sh[:len(sh)-2], sh[len(sh)-2], sh[len(sh)-1]
	var out *ember.Tensor
	if isMeta(a) {
		out = empty(a, shapeOf(batch, n, m))
	} else {
		b := load(a)
		parts := make([][]float64, len(b.data))
		for i, mm := range b.data {
			checkFinite(len(batch) > 0, i, mm)
			s, u, vt, uc, _, ok := svd(mm, m, n, false, true)
			if !ok {
				panic(&ember.ValueError{Op: op, Msg: batchMsg(len(batch) > 0, i, "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated singular values.")})
			}
			tol := atol
			if len(s) > 0 {
				tol = max(atol, rtol*s[0])
			}
			p := make([]float64, n*m)
			for j, sj := range s {
				if !(sj > tol) {
					continue
				}
				inv := 1 / sj
				for r := 0; r < n; r++ {
					vr := vt[j*n+r] * inv
					for c := 0; c < m; c++ {
						p[r*m+c] += vr * u[c*uc+j]
					}
				}
			}
			parts[i] = p
		}
		out = store(a, shapeOf(batch, n, m), parts)
	}
	return record("LinalgPinvBackward0", out, saves(out, a), func(g *ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{pinvBackward(g, out, a)}
	}, a)
}

// pinvBackward is PyTorch's pinv_backward.
func pinvBackward(g, p, a *ember.Tensor) *ember.Tensor {
	sh := a.Shape()
	m, n := sh[len(sh)-2], sh[len(sh)-1]
	ph, gh := mT(p), mT(g)
	if m <= n {
		k := gh.MatMul(p)
		kph := k.MatMul(ph)
		return mT(p.MatMul(k)).Neg().Add(kph).Sub(a.MatMul(p).MatMul(kph)).Add(ph.MatMul(p).MatMul(gh.Sub(k.MatMul(a))))
	}
	k := p.MatMul(gh)
	phk := ph.MatMul(k)
	return mT(k.MatMul(p)).Neg().Add(gh.Sub(a.MatMul(k)).MatMul(p).MatMul(ph)).Add(phk).Sub(phk.MatMul(p).MatMul(a))
}

// Lstsq returns the least-squares solution X minimising ‖A X - B‖ for each
// matrix of a, as torch.linalg.lstsq(A, B).solution. b is a batch of m×k
// matrices, or of m-vectors when it has one dim fewer than a; batch dims
// broadcast. It is Pinv(A)·B: for full-rank A this is the solution of
// PyTorch's default CPU driver (gelsy) within rounding; for rank-deficient
// A it is the minimum-norm solution with pinv's default cutoff
// (eps·max(m, n)·σ_max, where gelsy's rank estimate may differ for nearly
// deficient A). The gradient is PyTorch's (linalg_lstsq_backward, which
// also goes through pinv).
func Lstsq(a, b *ember.Tensor) *ember.Tensor {
	const op = "linalg.lstsq"
	checkFloat(op, a, b)
	checkMatrix(op, "A", a, false)
	sameDeviceDType(op, a, b)
	as, bs := a.Shape(), b.Shape()
	vec := len(bs) == len(as)-1
	if len(bs) < len(as)-1 || len(bs) > len(as) {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{as, bs}, Msg: "input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1"})
	}
	mb := bs[len(bs)-1]
	if !vec {
		mb = bs[len(bs)-2]
	}
	if mb != as[len(as)-2] {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{as, bs}, Msg: fmt.Sprintf("input.size(-2) should match other.size(-%d)", map[bool]int{true: 1, false: 2}[vec])})
	}
	if vec {
		return Pinv(a).MatMul(b.Unsqueeze(-1)).Squeeze(-1)
	}
	return Pinv(a).MatMul(b)
}
