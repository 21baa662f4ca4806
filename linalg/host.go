package linalg

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
)

// The single-matrix kernels below work on row-major float64 matrices with
// gonum's LAPACK port; the batched ops in the other files call them once
// per matrix of a batch.

var lp gonum.Implementation

// work returns a workspace for a LAPACK call after its workspace query.
func work(query func(w []float64, lw int)) []float64 {
	q := []float64{0}
	query(q, -1)
	n := max(int(q[0]), 1)
	return make([]float64, n)
}

// luFactor factors the n×n matrix a in place (P A = L U). It returns the
// pivots and the 1-based index of the first zero on U's diagonal (0 if
// none), as LAPACK's info.
func luFactor(a []float64, n int) ([]int, int) {
	ipiv := make([]int, n)
	if n == 0 {
		return ipiv, 0
	}
	lp.Dgetrf(n, n, a, n, ipiv)
	for i := 0; i < n; i++ {
		if a[i*n+i] == 0 {
			return ipiv, i + 1
		}
	}
	return ipiv, 0
}

// luDet is the determinant from luFactor's output.
func luDet(lu []float64, ipiv []int, n int) float64 {
	d := 1.0
	for i := 0; i < n; i++ {
		d *= lu[i*n+i]
		if ipiv[i] != i {
			d = -d
		}
	}
	return d
}

// luSlogdet is (sign, log|det|) from luFactor's output.
func luSlogdet(lu []float64, ipiv []int, n int) (float64, float64) {
	sign, logabs := 1.0, 0.0
	for i := 0; i < n; i++ {
		v := lu[i*n+i]
		if v < 0 {
			sign = -sign
		}
		if ipiv[i] != i {
			sign = -sign
		}
		logabs += math.Log(math.Abs(v))
	}
	if math.IsInf(logabs, -1) {
		sign = 0
	}
	return sign, logabs
}

// inverse overwrites the luFactor output a with the inverse.
func inverse(a []float64, ipiv []int, n int) {
	if n == 0 {
		return
	}
	w := work(func(w []float64, lw int) { lp.Dgetri(n, a, n, ipiv, w, lw) })
	lp.Dgetri(n, a, n, ipiv, w, len(w))
}

// luSolve overwrites the n×k matrix b with A⁻¹ b from A's luFactor output.
func luSolve(lu []float64, ipiv []int, n int, b []float64, k int) {
	if n == 0 || k == 0 {
		return
	}
	lp.Dgetrs(blas.NoTrans, n, k, lu, n, ipiv, b, k)
}

// cholesky returns the lower factor L of the n×n matrix a (only its lower
// triangle is read) and the order of the first leading minor that is not
// positive-definite (0 if none), as LAPACK's potrf info.
func cholesky(a []float64, n int) ([]float64, int) {
	l := make([]float64, n*n)
	for j := 0; j < n; j++ {
		d := a[j*n+j]
		for k := 0; k < j; k++ {
			d -= l[j*n+k] * l[j*n+k]
		}
		if !(d > 0) {
			return l, j + 1
		}
		d = math.Sqrt(d)
		l[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for k := 0; k < j; k++ {
				s -= l[i*n+k] * l[j*n+k]
			}
			l[i*n+j] = s / d
		}
	}
	return l, 0
}

// qr factors the m×n matrix a as LAPACK's geqrf + orgqr: R has qc rows
// and Q (if wantQ) is m×qc, with qc = min(m, n) in reduced mode and m in
// complete mode.
func qr(a []float64, m, n int, complete, wantQ bool) (q, r []float64, qc int) {
	k := min(m, n)
	qc = k
	if complete {
		qc = m
	}
	r = make([]float64, qc*n)
	if k == 0 {
		if wantQ {
			q = make([]float64, m*qc)
			for i := 0; i < min(m, qc); i++ {
				q[i*qc+i] = 1
			}
		}
		return q, r, qc
	}
	f := append([]float64(nil), a...)
	tau := make([]float64, k)
	w := work(func(w []float64, lw int) { lp.Dgeqrf(m, n, f, n, tau, w, lw) })
	lp.Dgeqrf(m, n, f, n, tau, w, len(w))
	for i := 0; i < min(qc, m); i++ {
		for j := i; j < n; j++ {
			r[i*n+j] = f[i*n+j]
		}
	}
	if !wantQ {
		return nil, r, qc
	}
	q = make([]float64, m*qc)
	for i := 0; i < m; i++ {
		for j := 0; j < min(n, qc); j++ {
			q[i*qc+j] = f[i*n+j]
		}
	}
	w = work(func(w []float64, lw int) { lp.Dorgqr(m, qc, k, q, qc, tau, w, lw) })
	lp.Dorgqr(m, qc, k, q, qc, tau, w, len(w))
	return q, r, qc
}

// eigh returns the eigenvalues (ascending) and, if wantV, the eigenvectors
// (the columns of the row-major n×n v) of the symmetric matrix a, reading
// the triangle uplo. ok is false if the algorithm failed to converge.
func eigh(a []float64, n int, lower, wantV bool) (w, v []float64, ok bool) {
	w = make([]float64, n)
	if n == 0 {
		return w, []float64{}, true
	}
	v = append([]float64(nil), a...)
	ul := blas.Upper
	if lower {
		ul = blas.Lower
	}
	job := lapack.EVNone
	if wantV {
		job = lapack.EVCompute
	}
	wk := work(func(wk []float64, lw int) { lp.Dsyev(job, ul, n, v, n, w, wk, lw) })
	ok = lp.Dsyev(job, ul, n, v, n, w, wk, len(wk))
	return w, v, ok
}

// svd returns the singular values (descending) and, if wantUV, U (m×uc)
// and Vᵀ (vr×n), with uc = vr = min(m, n) unless full, when U is m×m and
// Vᵀ n×n. ok is false if the algorithm failed to converge.
func svd(a []float64, m, n int, full, wantUV bool) (s, u, vt []float64, uc, vr int, ok bool) {
	k := min(m, n)
	uc, vr = k, k
	if full {
		uc, vr = m, n
	}
	s = make([]float64, k)
	if k == 0 {
		if wantUV {
			u, vt = make([]float64, m*uc), make([]float64, vr*n)
			for i := 0; i < min(m, uc); i++ {
				u[i*uc+i] = 1
			}
			for i := 0; i < min(vr, n); i++ {
				vt[i*n+i] = 1
			}
		}
		return s, u, vt, uc, vr, true
	}
	f := append([]float64(nil), a...)
	ju, jv := lapack.SVDNone, lapack.SVDNone
	ldu, ldv := 1, n
	if wantUV {
		ju, jv = lapack.SVDStore, lapack.SVDStore
		if full {
			ju, jv = lapack.SVDAll, lapack.SVDAll
		}
		u, vt = make([]float64, m*uc), make([]float64, vr*n)
		ldu = uc
	}
	wk := work(func(wk []float64, lw int) { lp.Dgesvd(ju, jv, m, n, f, n, s, u, ldu, vt, ldv, wk, lw) })
	ok = lp.Dgesvd(ju, jv, m, n, f, n, s, u, ldu, vt, ldv, wk, len(wk))
	return s, u, vt, uc, vr, ok
}

// transpose returns the n×m transpose of the row-major m×n a.
func transpose(a []float64, m, n int) []float64 {
	t := make([]float64, len(a))
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			t[j*m+i] = a[i*n+j]
		}
	}
	return t
}
