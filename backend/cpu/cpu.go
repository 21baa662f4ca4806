package cpu

import (
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/internal/philox"
)

// Backend is the CPU backend.
type Backend struct{}

func init() { backend.Register(Backend{}) }

// Type is cpu.
func (Backend) Type() backend.DeviceType { return backend.CPUType }

// Check accepts cpu (index 0).
func (Backend) Check(dev backend.Device) error {
	if dev.Type != backend.CPUType {
		return fmt.Errorf("cpu backend cannot serve %v", dev)
	}
	return nil
}

// Count is 1.
func (Backend) Count() (int, error) { return 1, nil }

// Alloc returns uninitialised storage: a buffer released earlier when the
// cache holds one of its size class (see SetCacheLimit), else zeroed memory.
func (Backend) Alloc(dev backend.Device, dt backend.DType, n int) (backend.Storage, error) {
	return newStorage(dt, n), nil
}

// FromHost copies data into new storage.
func (Backend) FromHost(dev backend.Device, data any) (backend.Storage, error) {
	var s *Storage
	switch d := data.(type) {
	case []float32:
		s = newStorage(backend.Float32, len(d))
		copy(s.data.([]float32), d)
	case []float64:
		s = newStorage(backend.Float64, len(d))
		copy(s.data.([]float64), d)
	case []int64:
		s = newStorage(backend.Int64, len(d))
		copy(s.data.([]int64), d)
	case []int32:
		s = newStorage(backend.Int32, len(d))
		copy(s.data.([]int32), d)
	case []bool:
		s = newStorage(backend.Bool, len(d))
		copy(s.data.([]bool), d)
	default:
		return nil, fmt.Errorf("cpu: unsupported host data %T", data)
	}
	return s, nil
}

// ToHost copies the storage into dst.
func (Backend) ToHost(src backend.Storage, dst any) error {
	cs, ok := src.(*Storage)
	if !ok || cs.data == nil {
		return fmt.Errorf("cpu: ToHost of a released or foreign storage")
	}
	var n int
	switch d := dst.(type) {
	case []float32:
		n = copy(d, cs.data.([]float32))
	case []float64:
		n = copy(d, cs.data.([]float64))
	case []int64:
		n = copy(d, cs.data.([]int64))
	case []int32:
		n = copy(d, cs.data.([]int32))
	case []bool:
		n = copy(d, cs.data.([]bool))
	default:
		return fmt.Errorf("cpu: ToHost into %T", dst)
	}
	if n != cs.n {
		return fmt.Errorf("cpu: ToHost copied %d of %d elements", n, cs.n)
	}
	return nil
}

// Synchronize has nothing to wait for: the CPU backend is synchronous.
func (Backend) Synchronize(backend.Device) error { return nil }

func notImpl(op string, dt backend.DType) {
	panic(&backend.NotImplementedError{Op: op, Device: backend.CPUType, DType: dt})
}

// Fill sets every element.
func (Backend) Fill(dst backend.View, v float64) {
	switch dst.S.DType() {
	case backend.Float32:
		fill(dst, float32(v))
	case backend.Float64:
		fill(dst, v)
	case backend.Int64:
		fill(dst, int64(v))
	case backend.Int32:
		fill(dst, int32(v))
	case backend.Bool:
		fill(dst, v != 0)
	}
}

func fill[T any](dst backend.View, v T) {
	d := slice[T](dst.S)
	l := coalesce(dst.Shape, dst)
	s := l.inner(0)
	l.each(1, func(off []int, n int) {
		if s == 1 {
			dd := d[off[0] : off[0]+n]
			for i := range dd {
				dd[i] = v
			}
			return
		}
		for i := 0; i < n; i++ {
			d[off[0]+i*s] = v
		}
	})
}

// Copy copies with dtype conversion.
func (Backend) Copy(dst, src backend.View) {
	switch dst.S.DType() {
	case backend.Float32:
		copyTo[float32](dst, src)
	case backend.Float64:
		copyTo[float64](dst, src)
	case backend.Int64:
		copyTo[int64](dst, src)
	case backend.Int32:
		copyTo[int32](dst, src)
	case backend.Bool:
		copyToBool(dst, src)
	}
}

func copyTo[D numT](dst, src backend.View) {
	switch src.S.DType() {
	case backend.Float32:
		castView[D, float32](dst, src)
	case backend.Float64:
		castView[D, float64](dst, src)
	case backend.Int64:
		castView[D, int64](dst, src)
	case backend.Int32:
		castView[D, int32](dst, src)
	case backend.Bool:
		d, s := slice[D](dst.S), slice[bool](src.S)
		l := coalesce(dst.Shape, dst, src)
		sd, ss := l.inner(0), l.inner(1)
		l.each(1, func(off []int, n int) {
			for i := 0; i < n; i++ {
				var v D
				if s[off[1]+i*ss] {
					v = 1
				}
				d[off[0]+i*sd] = v
			}
		})
	}
}

func castView[D, S numT](dst, src backend.View) {
	d, s := slice[D](dst.S), slice[S](src.S)
	l := coalesce(dst.Shape, dst, src)
	sd, ss := l.inner(0), l.inner(1)
	if same, ok := any(d).([]S); ok && sd == 1 && ss == 1 { // a plain copy: memmove per run
		l.each(1, func(off []int, n int) { copy(same[off[0]:off[0]+n], s[off[1]:off[1]+n]) })
		return
	}
	l.each(1, func(off []int, n int) {
		if sd == 1 && ss == 1 {
			dd, sv := d[off[0]:off[0]+n], s[off[1]:off[1]+n]
			for i, x := range sv {
				dd[i] = D(x)
			}
			return
		}
		for i := 0; i < n; i++ {
			d[off[0]+i*sd] = D(s[off[1]+i*ss])
		}
	})
}

func copyToBool(dst, src backend.View) {
	d := slice[bool](dst.S)
	l := coalesce(dst.Shape, dst, src)
	sd, ss := l.inner(0), l.inner(1)
	nonzero := func(off []int, n int) {}
	switch src.S.DType() {
	case backend.Bool:
		s := slice[bool](src.S)
		nonzero = func(off []int, n int) {
			for i := 0; i < n; i++ {
				d[off[0]+i*sd] = s[off[1]+i*ss]
			}
		}
	case backend.Float32:
		nonzero = nzRow(d, sd, slice[float32](src.S), ss)
	case backend.Float64:
		nonzero = nzRow(d, sd, slice[float64](src.S), ss)
	case backend.Int64:
		nonzero = nzRow(d, sd, slice[int64](src.S), ss)
	case backend.Int32:
		nonzero = nzRow(d, sd, slice[int32](src.S), ss)
	}
	l.each(1, nonzero)
}

func nzRow[S numT](d []bool, sd int, s []S, ss int) func(off []int, n int) {
	return func(off []int, n int) {
		for i := 0; i < n; i++ {
			d[off[0]+i*sd] = s[off[1]+i*ss] != 0
		}
	}
}

// Unary applies an elementwise function.
func (Backend) Unary(op backend.UnaryOp, dst, src backend.View, p1, p2 float64) {
	l := coalesce(dst.Shape, dst, src)
	sd, sa := l.inner(0), l.inner(1)
	ok := true
	cost := 1
	if op >= backend.Exp && op <= backend.Sigmoid || op == backend.Erf || op == backend.PowScalar {
		cost = 8
	}
	switch dt := src.S.DType(); {
	case op == backend.LogicalNot:
		d, a := slice[bool](dst.S), slice[bool](src.S)
		l.each(cost, func(off []int, n int) { unaryRowBool(op, d, off[0], sd, a, off[1], sa, n, p1, p2) })
	case dt == backend.Float32:
		d, a := slice[float32](dst.S), slice[float32](src.S)
		ok = unaryRowFloat32(op, d, 0, 1, a, 0, 1, 0, p1, p2)
		l.each(cost, func(off []int, n int) { unaryRowFloat32(op, d, off[0], sd, a, off[1], sa, n, p1, p2) })
	case dt == backend.Float64:
		d, a := slice[float64](dst.S), slice[float64](src.S)
		ok = unaryRowFloat64(op, d, 0, 1, a, 0, 1, 0, p1, p2)
		l.each(cost, func(off []int, n int) { unaryRowFloat64(op, d, off[0], sd, a, off[1], sa, n, p1, p2) })
	case dt == backend.Int64:
		d, a := slice[int64](dst.S), slice[int64](src.S)
		ok = unaryRowInt64(op, d, 0, 1, a, 0, 1, 0, p1, p2)
		l.each(cost, func(off []int, n int) { unaryRowInt64(op, d, off[0], sd, a, off[1], sa, n, p1, p2) })
	case dt == backend.Int32:
		d, a := slice[int32](dst.S), slice[int32](src.S)
		ok = unaryRowInt32(op, d, 0, 1, a, 0, 1, 0, p1, p2)
		l.each(cost, func(off []int, n int) { unaryRowInt32(op, d, off[0], sd, a, off[1], sa, n, p1, p2) })
	default:
		ok = false
	}
	if !ok {
		notImpl(op.String(), src.S.DType())
	}
}

// Binary applies an elementwise function of two operands.
func (Backend) Binary(op backend.BinaryOp, dst, a, b backend.View) {
	l := coalesce(dst.Shape, dst, a, b)
	sd, sa, sb := l.inner(0), l.inner(1), l.inner(2)
	cost := 1
	if op == backend.Pow || op == backend.Atan2 || op == backend.Remainder {
		cost = 8
	}
	cmp := dst.S.DType() == backend.Bool
	ok := false
	switch a.S.DType() {
	case backend.Float32:
		ok = binaryDispatch(l, cost, cmp, op, dst, a, b, sd, sa, sb, binaryRowFloat32, binaryRowFloat32Bool)
	case backend.Float64:
		ok = binaryDispatch(l, cost, cmp, op, dst, a, b, sd, sa, sb, binaryRowFloat64, binaryRowFloat64Bool)
	case backend.Int64:
		ok = binaryDispatch(l, cost, cmp, op, dst, a, b, sd, sa, sb, binaryRowInt64, binaryRowInt64Bool)
	case backend.Int32:
		ok = binaryDispatch(l, cost, cmp, op, dst, a, b, sd, sa, sb, binaryRowInt32, binaryRowInt32Bool)
	case backend.Bool:
		d, x, y := slice[bool](dst.S), slice[bool](a.S), slice[bool](b.S)
		ok = binaryRowBoolBool(op, d, 0, 1, x, 0, 1, y, 0, 1, 0)
		if ok {
			l.each(cost, func(off []int, n int) { binaryRowBoolBool(op, d, off[0], sd, x, off[1], sa, y, off[2], sb, n) })
		}
	}
	if !ok {
		notImpl(op.String(), a.S.DType())
	}
}

type rowFn[D, T any] func(op backend.BinaryOp, d []D, od, sd int, a []T, oa, sa int, b []T, ob, sb, n int) bool

func binaryDispatch[T any](l layout, cost int, cmp bool, op backend.BinaryOp, dst, a, b backend.View, sd, sa, sb int, same rowFn[T, T], toBool rowFn[bool, T]) bool {
	x, y := slice[T](a.S), slice[T](b.S)
	if cmp {
		d := slice[bool](dst.S)
		if !toBool(op, d, 0, 1, x, 0, 1, y, 0, 1, 0) {
			return false
		}
		l.each(cost, func(off []int, n int) { toBool(op, d, off[0], sd, x, off[1], sa, y, off[2], sb, n) })
		return true
	}
	d := slice[T](dst.S)
	if !same(op, d, 0, 1, x, 0, 1, y, 0, 1, 0) {
		return false
	}
	l.each(cost, func(off []int, n int) { same(op, d, off[0], sd, x, off[1], sa, y, off[2], sb, n) })
	return true
}

// Where selects elementwise.
func (Backend) Where(dst, cond, a, b backend.View) {
	switch dst.S.DType() {
	case backend.Float32:
		where[float32](dst, cond, a, b)
	case backend.Float64:
		where[float64](dst, cond, a, b)
	case backend.Int64:
		where[int64](dst, cond, a, b)
	case backend.Int32:
		where[int32](dst, cond, a, b)
	case backend.Bool:
		where[bool](dst, cond, a, b)
	}
}

func where[T any](dst, cond, a, b backend.View) {
	d, c, x, y := slice[T](dst.S), slice[bool](cond.S), slice[T](a.S), slice[T](b.S)
	l := coalesce(dst.Shape, dst, cond, a, b)
	sd, sc, sa, sb := l.inner(0), l.inner(1), l.inner(2), l.inner(3)
	l.each(1, func(off []int, n int) {
		for i := 0; i < n; i++ {
			if c[off[1]+i*sc] {
				d[off[0]+i*sd] = x[off[2]+i*sa]
			} else {
				d[off[0]+i*sd] = y[off[3]+i*sb]
			}
		}
	})
}

// Arange writes start + i*step.
func (Backend) Arange(dst backend.View, start, step float64) {
	switch dst.S.DType() {
	case backend.Float32:
		arange(slice[float32](dst.S)[dst.Offset:][:dst.NumElements()], start, step)
	case backend.Float64:
		arange(slice[float64](dst.S)[dst.Offset:][:dst.NumElements()], start, step)
	case backend.Int64:
		arange(slice[int64](dst.S)[dst.Offset:][:dst.NumElements()], start, step)
	case backend.Int32:
		arange(slice[int32](dst.S)[dst.Offset:][:dst.NumElements()], start, step)
	default:
		notImpl("arange", dst.S.DType())
	}
}

func arange[T numT](d []T, start, step float64) {
	for i := range d {
		d[i] = T(start + float64(i)*step)
	}
}

// Random fills from the Philox stream.
func (Backend) Random(dst backend.View, seed, offset uint64, normal bool) {
	n := dst.NumElements()
	cost := 16
	switch dst.S.DType() {
	case backend.Float32:
		d := slice[float32](dst.S)[dst.Offset:][:n]
		parallelFor(n, cost, func(lo, hi int) {
			if normal {
				philox.FillNormal32(d[lo:hi], seed, offset, lo)
			} else {
				philox.FillUniform32(d[lo:hi], seed, offset, lo)
			}
		})
	case backend.Float64:
		d := slice[float64](dst.S)[dst.Offset:][:n]
		parallelFor(n, cost, func(lo, hi int) {
			if normal {
				philox.FillNormal64(d[lo:hi], seed, offset, lo)
			} else {
				philox.FillUniform64(d[lo:hi], seed, offset, lo)
			}
		})
	default:
		notImpl("random", dst.S.DType())
	}
}

// Softmax over the last dim of contiguous rows.
func (Backend) Softmax(dst, src backend.View, log bool) {
	switch src.S.DType() {
	case backend.Float32:
		softmax(slice[float32](dst.S)[dst.Offset:], slice[float32](src.S)[src.Offset:], dst.Shape, log)
	case backend.Float64:
		softmax(slice[float64](dst.S)[dst.Offset:], slice[float64](src.S)[src.Offset:], dst.Shape, log)
	default:
		notImpl("softmax", src.S.DType())
	}
}

func softmax[T floatT](d, s []T, shape []int, log bool) {
	n := 1
	if len(shape) > 0 {
		n = shape[len(shape)-1]
	}
	total := 1
	for _, x := range shape {
		total *= x
	}
	if n == 0 || total == 0 {
		return
	}
	rows := total / n
	parallelFor(rows, n*8, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			in, out := s[r*n:(r+1)*n], d[r*n:(r+1)*n]
			m := math.Inf(-1)
			for _, x := range in {
				if float64(x) > m || x != x {
					m = float64(x)
				}
			}
			var sum float64
			for i, x := range in {
				e := math.Exp(float64(x) - m)
				sum += e
				if !log {
					out[i] = T(e)
				}
			}
			if log {
				ls := m + math.Log(sum)
				for i, x := range in {
					out[i] = T(float64(x) - ls)
				}
			} else {
				inv := 1 / sum
				for i := range out {
					out[i] = T(float64(out[i]) * inv)
				}
			}
		}
	})
}
