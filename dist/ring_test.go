package dist

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember"
)

func init() {
	workers["collectives"] = workerCollectives
	workers["crash"] = workerCrash
	workers["mismatch"] = workerMismatch
	workers["rendezvous"] = workerRendezvous
	workers["hang"] = workerHang
}

// value is element i of rank r's input: small multiples of 1/4 (exact in
// float32, sums of a few of them too), negative and positive.
func value(r, i int) float64 { return float64((i*7+r*13)%1001-500) / 4 }

func intValue(r, i int) float64 { return float64((i*7+r*13)%1001 - 500) }

func input(dt ember.DType, n, r, base int) *ember.Tensor {
	v := make([]float64, n)
	for i := range v {
		v[i] = elem(dt, r, base+i)
	}
	return ember.FromSlice(v, nil, ember.Dtype(dt))
}

func elem(dt ember.DType, r, i int) float64 {
	if dt.IsFloat() {
		return value(r, i)
	}
	return intValue(r, i)
}

// expected is op over the ranks' element i, worked out in float64 (exact
// for these values) with integer Avg truncating as NCCL does.
func expected(dt ember.DType, op ReduceOp, w, i int, at func(r int) float64) float64 {
	acc := at(0)
	for r := 1; r < w; r++ {
		switch op {
		case Sum, Avg:
			acc += at(r)
		case Max:
			acc = math.Max(acc, at(r))
		case Min:
			acc = math.Min(acc, at(r))
		}
	}
	if op == Avg {
		if dt.IsFloat() {
			return acc / float64(w)
		}
		return float64(int64(acc) / int64(w))
	}
	return acc
}

func compare(what string, dt ember.DType, got []float64, want func(i int) float64) error {
	for i, g := range got {
		w := want(i)
		if dt.IsFloat() && math.Abs(g-w) <= 1e-6*math.Max(1, math.Abs(w)) || g == w {
			continue
		}
		return fmt.Errorf("%s: element %d of %d = %v, want %v", what, i, len(got), g, w)
	}
	return nil
}

var testDTypes = []ember.DType{ember.Float32, ember.Float64, ember.Int64, ember.Int32}

func workerCollectives() error {
	g, err := InitProcessGroup("gloo", Options{})
	if err != nil {
		return err
	}
	defer g.Close()
	w, r := g.WorldSize(), g.Rank()
	if g != DefaultGroup() || g.Backend() != "cpu" || g.LocalRank() != r {
		return fmt.Errorf("group: default %v, backend %q, local rank %d", g == DefaultGroup(), g.Backend(), g.LocalRank())
	}
	sizes := []int{0, 1, 7, 1000 + w - 1}
	for _, dt := range testDTypes {
		for _, n := range sizes {
			for _, op := range []ReduceOp{Sum, Avg, Max, Min} {
				x := input(dt, n, r, 0)
				if err := g.AllReduce(x, op); err != nil {
					return err
				}
				what := fmt.Sprintf("all_reduce %v %v n=%d", op, dt, n)
				if err := compare(what, dt, x.Float64s(), func(i int) float64 {
					return expected(dt, op, w, i, func(q int) float64 { return elem(dt, q, i) })
				}); err != nil {
					return err
				}
			}
		}
	}
	// A large odd size, not divisible by the world size, pipelined.
	for _, dt := range []ember.DType{ember.Float32, ember.Int32} {
		const n = 1000003
		x := input(dt, n, r, 0)
		if err := g.AllReduce(x, Sum); err != nil {
			return err
		}
		if err := compare(fmt.Sprintf("all_reduce sum %v n=%d", dt, n), dt, x.Float64s(), func(i int) float64 {
			return expected(dt, Sum, w, i, func(q int) float64 { return elem(dt, q, i) })
		}); err != nil {
			return err
		}
	}
	for _, dt := range testDTypes {
		for _, n := range []int{1, 7, 10007} {
			for root := 0; root < w; root++ {
				x := input(dt, n, r, 0)
				if err := g.Broadcast(x, root); err != nil {
					return err
				}
				if err := compare(fmt.Sprintf("broadcast %v n=%d root %d", dt, n, root), dt, x.Float64s(), func(i int) float64 { return elem(dt, root, i) }); err != nil {
					return err
				}
			}
			in := input(dt, n, r, 0)
			out := make([]*ember.Tensor, w)
			for k := range out {
				out[k] = ember.Zeros(ember.Shape{n}, ember.Dtype(dt))
			}
			if err := g.AllGather(out, in); err != nil {
				return err
			}
			for k := range out {
				if err := compare(fmt.Sprintf("all_gather %v n=%d block %d", dt, n, k), dt, out[k].Float64s(), func(i int) float64 { return elem(dt, k, i) }); err != nil {
					return err
				}
			}
			for _, op := range []ReduceOp{Sum, Avg, Max, Min} {
				ins := make([]*ember.Tensor, w)
				for k := range ins {
					ins[k] = input(dt, n, r, k*n)
				}
				before := ins[r].Float64s()
				res := ember.Zeros(ember.Shape{n}, ember.Dtype(dt))
				if err := g.ReduceScatter(res, ins, op); err != nil {
					return err
				}
				what := fmt.Sprintf("reduce_scatter %v %v n=%d", op, dt, n)
				if err := compare(what, dt, res.Float64s(), func(i int) float64 {
					return expected(dt, op, w, i, func(q int) float64 { return elem(dt, q, r*n+i) })
				}); err != nil {
					return err
				}
				if err := compare(what+" (input kept)", dt, ins[r].Float64s(), func(i int) float64 { return before[i] }); err != nil {
					return err
				}
			}
		}
	}
	// Non-contiguous tensors are staged and written back.
	m := input(ember.Float32, 12, r, 0).Reshape(3, 4).T()
	if err := g.AllReduce(m, Sum); err != nil {
		return err
	}
	got := m.T().Float64s()
	if err := compare("all_reduce of a transposed tensor", ember.Float32, got, func(i int) float64 {
		return expected(ember.Float32, Sum, w, i, func(q int) float64 { return value(q, i) })
	}); err != nil {
		return err
	}
	// Bool tensors move (broadcast), but do not reduce.
	b := ember.FromSlice([]bool{r == 1, true, false}, nil)
	if err := g.Broadcast(b, w-1); err != nil {
		return err
	}
	if bs := b.Bools(); bs[0] != (w-1 == 1) || !bs[1] || bs[2] {
		return fmt.Errorf("bool broadcast = %v", bs)
	}
	if err := g.AllReduce(b, Sum); err == nil || !strings.Contains(err.Error(), "bool") {
		return fmt.Errorf("all_reduce of bool = %v, want an error naming bool", err)
	}
	// Asynchronous all-reduces run in order, with synchronous calls between.
	var works []*Work
	var xs []*ember.Tensor
	for k := 0; k < 8; k++ {
		x := input(ember.Float32, 1000+k, r, k)
		xs = append(xs, x)
		works = append(works, g.AllReduceAsync(x, Sum))
		if k == 4 {
			if err := g.Barrier(); err != nil {
				return err
			}
		}
	}
	for k, wk := range works {
		if err := wk.Wait(); err != nil {
			return err
		}
		if err := compare(fmt.Sprintf("async all_reduce %d", k), ember.Float32, xs[k].Float64s(), func(i int) float64 {
			return expected(ember.Float32, Sum, w, i, func(q int) float64 { return value(q, k+i) })
		}); err != nil {
			return err
		}
	}
	// Misuse is an error at the call, and the group stays usable.
	if err := g.Broadcast(input(ember.Float32, 3, r, 0), w); err == nil {
		return errors.New("broadcast from a root outside the world did not fail")
	}
	if err := g.AllGather(make([]*ember.Tensor, w+1), input(ember.Float32, 3, r, 0)); err == nil {
		return errors.New("all_gather with too many outputs did not fail")
	}
	if err := g.Barrier(); err != nil {
		return err
	}
	fmt.Println("ok")
	return nil
}

func TestCollectives(t *testing.T) {
	for _, w := range []int{2, 3, 4} {
		if testing.Short() && w != 3 {
			continue
		}
		t.Run(fmt.Sprint("world", w), func(t *testing.T) {
			outs := waitOK(t, spawn(t, "collectives", w, ranks(w), 60*time.Second))
			expectAll(t, outs, ranks(w), "ok")
		})
	}
}

// TestWorldOfOne runs every collective in this process: a world of one
// needs no environment, and the result is the input (Avg divides by one).
func TestWorldOfOne(t *testing.T) {
	g, err := InitProcessGroup("cpu", Options{WorldSize: 1, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	x := ember.FromSlice([]int64{3, -7, 5}, nil)
	for _, op := range []ReduceOp{Sum, Avg, Max, Min} {
		if err := g.AllReduce(x, op); err != nil {
			t.Fatal(err)
		}
	}
	if got := x.Int64s(); got[0] != 3 || got[1] != -7 || got[2] != 5 {
		t.Fatalf("all_reduce in a world of one changed the tensor: %v", got)
	}
	out := []*ember.Tensor{ember.Zeros(ember.Shape{3}, ember.Dtype(ember.Int64))}
	if err := g.AllGather(out, x); err != nil || out[0].Int64s()[1] != -7 {
		t.Fatalf("all_gather = %v, %v", out[0].Int64s(), err)
	}
	rs := ember.Zeros(ember.Shape{3}, ember.Dtype(ember.Int64))
	if err := g.ReduceScatter(rs, []*ember.Tensor{x}, Sum); err != nil || rs.Int64s()[2] != 5 {
		t.Fatalf("reduce_scatter = %v, %v", rs.Int64s(), err)
	}
	if err := g.Broadcast(x, 0); err != nil {
		t.Fatal(err)
	}
	if err := g.Barrier(); err != nil {
		t.Fatal(err)
	}
	if err := g.AllReduce(ember.Ones(ember.Shape{2}, ember.On(ember.Meta)), Sum); err == nil || !strings.Contains(err.Error(), "meta") {
		t.Fatalf("all_reduce of a meta tensor = %v, want an error naming the device", err)
	}
}

// workerCrash: the last rank exits in the middle of the run; the others'
// next collective fails, naming it, and so does any later one, at once.
func workerCrash() error {
	g, err := InitProcessGroup("cpu", Options{})
	if err != nil {
		return err
	}
	w, r := g.WorldSize(), g.Rank()
	x := input(ember.Float32, 100000, r, 0)
	if err := g.AllReduce(x, Sum); err != nil {
		return err
	}
	if r == w-1 {
		os.Exit(3)
	}
	start := time.Now()
	err = g.AllReduce(x, Sum)
	var re *RankError
	if !errors.As(err, &re) || re.Rank != w-1 || re.Op != "all_reduce" {
		return fmt.Errorf("after rank %d crashed, all_reduce = %v; want a RankError naming it", w-1, err)
	}
	fmt.Printf("failed after %v: %v\n", time.Since(start).Round(time.Millisecond), err)
	start = time.Now()
	if err2 := g.Barrier(); err2 != err || time.Since(start) > time.Second {
		return fmt.Errorf("barrier on a broken group = %v after %v; want the same error at once", err2, time.Since(start))
	}
	g.Close()
	fmt.Println("ok")
	return nil
}

func TestRankCrashes(t *testing.T) {
	w := 3
	cs := spawn(t, "crash", w, ranks(w), 2*time.Second)
	start := time.Now()
	outs := wait(t, cs)
	for _, c := range cs[:w-1] {
		if c.err != nil {
			t.Errorf("rank %d: %v\n%s", c.rank, c.err, outs[c.rank])
		}
	}
	expectAll(t, outs, []int{0, 1}, "ok", "rank 2 failed or left")
	t.Logf("survivors done in %v; rank 0: %s", time.Since(start), strings.TrimSpace(outs[0]))
}

// workerHang: the last rank stays alive but skips a collective; the others
// time out naming it.
func workerHang() error {
	g, err := InitProcessGroup("cpu", Options{})
	if err != nil {
		return err
	}
	defer g.Close()
	w, r := g.WorldSize(), g.Rank()
	if r == w-1 {
		time.Sleep(4 * g.Timeout())
		return nil
	}
	err = g.AllReduce(input(ember.Int64, 10, r, 0), Max)
	var re *RankError
	if !errors.As(err, &re) || re.Rank != w-1 || !strings.Contains(err.Error(), "did not arrive within") {
		return fmt.Errorf("all_reduce = %v; want a RankError saying rank %d did not arrive", err, w-1)
	}
	// The wait reported is the timeout, not the timeout plus the time spent
	// gathering the other ranks' reports.
	if re.After > g.Timeout()+g.Timeout()/5 {
		return fmt.Errorf("all_reduce reports a wait of %v for a timeout of %v", re.After, g.Timeout())
	}
	fmt.Println("ok:", err)
	return nil
}

func TestRankHangs(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a timeout")
	}
	w := 3
	cs := spawn(t, "hang", w, ranks(w), time.Second)
	outs := wait(t, cs[:w-1])
	for _, c := range cs[:w-1] {
		if c.err != nil {
			t.Errorf("rank %d: %v\n%s", c.rank, c.err, outs[c.rank])
		}
	}
	expectAll(t, outs, []int{0, 1}, "ok", "rank 2 did not arrive")
}

// workerMismatch: rank 1 all-reduces a tensor of another shape; every rank
// gets an error naming both calls instead of a hang or wrong data.
func workerMismatch() error {
	g, err := InitProcessGroup("cpu", Options{})
	if err != nil {
		return err
	}
	defer g.Close()
	n := 10
	if g.Rank() == 1 {
		n = 11
	}
	err = g.AllReduce(input(ember.Float32, n, g.Rank(), 0), Sum)
	if err == nil || !strings.Contains(err.Error(), "disagree") || !strings.Contains(err.Error(), "[11]") || !strings.Contains(err.Error(), "[10]") {
		return fmt.Errorf("mismatched all_reduce = %v; want an error naming both shapes", err)
	}
	fmt.Println("ok:", err)
	return nil
}

func TestShapeMismatch(t *testing.T) {
	w := 3
	outs := waitOK(t, spawn(t, "mismatch", w, ranks(w), 5*time.Second))
	expectAll(t, outs, ranks(w), "ok", "all_reduce #1")
}

// workerRendezvous joins a world some of whose ranks never start.
func workerRendezvous() error {
	_, err := InitProcessGroup("cpu", Options{})
	var re *RankError
	if !errors.As(err, &re) || re.Op != "rendezvous" {
		return fmt.Errorf("rendezvous = %v; want a RankError", err)
	}
	fmt.Println("failed:", err)
	return nil
}

func TestRankNeverJoins(t *testing.T) {
	t.Run("rank 2", func(t *testing.T) {
		outs := waitOK(t, spawn(t, "rendezvous", 4, []int{0, 1, 3}, time.Second))
		expectAll(t, outs, []int{0, 1, 3}, "rank 2 did not arrive", "rank(s) 2 of 4 never joined")
	})
	t.Run("rank 0", func(t *testing.T) {
		outs := waitOK(t, spawn(t, "rendezvous", 3, []int{1, 2}, time.Second))
		expectAll(t, outs, []int{1, 2}, "rendezvous: rank 0", "store is unreachable")
	})
}

func TestUnknownBackend(t *testing.T) {
	_, err := InitProcessGroup("mpi", Options{WorldSize: 1})
	if err == nil || !strings.Contains(err.Error(), `"mpi"`) || !strings.Contains(err.Error(), "nccl") || !strings.Contains(err.Error(), "gloo") {
		t.Fatalf("InitProcessGroup(mpi) = %v; want an error listing the backends", err)
	}
	if _, err := InitProcessGroup("cpu", Options{WorldSize: 1, Device: ember.CUDA(0)}); err == nil || !strings.Contains(err.Error(), "cuda:0") {
		t.Fatalf("cpu backend on cuda:0 = %v", err)
	}
}

// TestCollectiveBumpsVersion: a collective writes its tensor in place, so
// backward must refuse a graph that saved the tensor before, as after an
// in-place op; a strided tensor (staged through a copy) likewise.
func TestCollectiveBumpsVersion(t *testing.T) {
	g, err := InitProcessGroup("cpu", Options{WorldSize: 1, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, strided := range []bool{false, true} {
		w := ember.FromSlice([]float32{1, 2, 3, 4}, ember.Shape{2, 2}).SetRequiresGrad(true)
		loss := w.Mul(w).Sum()
		x := w.Detach()
		if strided {
			x = x.T()
		}
		if err := g.AllReduce(x, Sum); err != nil {
			t.Fatal(err)
		}
		err := ember.Try(loss.Backward)
		var ae *ember.AutogradError
		if !errors.As(err, &ae) {
			t.Errorf("strided %v: backward after an all_reduce of a saved tensor: %v, want an AutogradError", strided, err)
		}
	}
}
