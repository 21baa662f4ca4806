package dist

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
	"github.com/emberml/ember/internal/cuda/nccl"
	"github.com/emberml/ember/internal/cuda/nccl/nccltest"
)

func init() {
	workers["nccl-missing"] = workerNCCLMissing
	workers["nccl-nogpu"] = workerNCCLNoGPU
}

// workerNCCLNoGPU finds an NCCL (the stand-in) but no usable CUDA device.
func workerNCCLNoGPU() error {
	if ember.CUDAAvailable() {
		fmt.Println("skip: this machine has a GPU")
		return nil
	}
	_, err := InitProcessGroup("nccl", Options{WorldSize: 1})
	if err == nil || !strings.Contains(err.Error(), "nccl backend needs a CUDA device") || !strings.Contains(err.Error(), "cuda:0") {
		return fmt.Errorf(`InitProcessGroup("nccl") without a GPU = %v`, err)
	}
	fmt.Println("ok:", err)
	return nil
}

func TestNCCLWithoutGPU(t *testing.T) {
	nccltest.Build(t) // sets EMBER_CUDA_LIB_DIR, which the child inherits
	outs := waitOK(t, spawn(t, "nccl-nogpu", 1, []int{0}, 5*time.Second))
	if strings.HasPrefix(outs[0], "skip:") {
		t.Skip(outs[0])
	}
	expectAll(t, outs, []int{0}, "ok:")
	t.Log(outs[0])
}

// workerNCCLMissing runs in a fresh process whose library search finds no
// NCCL: InitProcessGroup("nccl") must say so, naming the library and where
// it looked.
func workerNCCLMissing() error {
	if err := nccl.Load(); err == nil {
		p, _ := nccl.Library()
		fmt.Println("skip: a real NCCL is installed at", p)
		return nil
	}
	_, err := InitProcessGroup("nccl", Options{WorldSize: 1})
	if err == nil || !strings.Contains(err.Error(), "libnccl.so.2 not found") || !strings.Contains(err.Error(), "searched:") || !strings.Contains(err.Error(), "nccl backend needs NVIDIA's NCCL") {
		return fmt.Errorf(`InitProcessGroup("nccl") without NCCL = %v`, err)
	}
	fmt.Println("ok:", err)
	return nil
}

func TestNCCLMissing(t *testing.T) {
	outs := waitOK(t, spawn(t, "nccl-missing", 1, []int{0}, 5*time.Second, "EMBER_CUDA_LIB_DIR="+t.TempDir()))
	if strings.HasPrefix(outs[0], "skip:") {
		t.Skip(outs[0])
	}
	expectAll(t, outs, []int{0}, "ok:")
}

func TestNCCLTables(t *testing.T) {
	// ember dtype → ncclDataType_t, ReduceOp → ncclRedOp_t (values from nccl.h).
	wantType := map[ember.DType]int32{ember.Float32: 7, ember.Float64: 8, ember.Int64: 4, ember.Int32: 2, ember.Bool: 1}
	for dt, v := range wantType {
		if got, ok := ncclType[dt]; !ok || int32(got) != v {
			t.Errorf("%v maps to %d, want ncclDataType_t %d", dt, got, v)
		}
	}
	wantOp := map[ReduceOp]int32{Sum: 0, Max: 2, Min: 3, Avg: 4}
	for op, v := range wantOp {
		if got, ok := ncclOp[op]; !ok || int32(got) != v {
			t.Errorf("%v maps to %d, want ncclRedOp_t %d", op, got, v)
		}
	}
}

// TestNCCLEmulated runs the nccl backend end to end without a GPU: ember's
// emulated CUDA device (cudatest) and a stand-in libnccl.so.2 with NCCL's
// ABI (nccltest), two ranks as goroutines of this process sharing a store.
func TestNCCLEmulated(t *testing.T) {
	restore := cudatest.Use(t)
	defer restore()
	nccltest.Build(t)
	srv, err := NewTCPStore("127.0.0.1:0", true, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const w = 2
	dev := ember.CUDA(0)
	var wg sync.WaitGroup
	errs := make([]error, w)
	for r := 0; r < w; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = ncclRank(r, w, srv, dev)
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

func ncclRank(r, w int, s Store, dev ember.Device) error {
	g, err := InitProcessGroup("nccl", Options{Rank: r, WorldSize: w, Store: s, Device: dev, Timeout: 30 * time.Second})
	if err != nil {
		return err
	}
	defer g.Close()
	if g.Backend() != "nccl" || g.Device() != dev {
		return fmt.Errorf("group: backend %q on %v", g.Backend(), g.Device())
	}
	on := func(t *ember.Tensor) *ember.Tensor { return t.To(dev) }
	for _, dt := range testDTypes {
		for _, op := range []ReduceOp{Sum, Avg, Max, Min} {
			x := on(input(dt, 7, r, 0))
			if err := g.AllReduce(x, op); err != nil {
				return err
			}
			if err := compare(fmt.Sprintf("nccl all_reduce %v %v", op, dt), dt, x.Float64s(), func(i int) float64 {
				return expected(dt, op, w, i, func(q int) float64 { return elem(dt, q, i) })
			}); err != nil {
				return err
			}
		}
		x := on(input(dt, 5, r, 0))
		if err := g.Broadcast(x, 1); err != nil {
			return err
		}
		if err := compare(fmt.Sprintf("nccl broadcast %v", dt), dt, x.Float64s(), func(i int) float64 { return elem(dt, 1, i) }); err != nil {
			return err
		}
		// Outputs in separate tensors (grouped broadcasts) and as pieces
		// of one tensor (one ncclAllGather).
		flat := ember.Zeros(ember.Shape{w * 3}, ember.Dtype(dt), ember.On(dev))
		for k, outs := range [][]*ember.Tensor{
			{ember.Zeros(ember.Shape{3}, ember.Dtype(dt), ember.On(dev)), ember.Zeros(ember.Shape{3}, ember.Dtype(dt), ember.On(dev))},
			{flat.Narrow(0, 0, 3), flat.Narrow(0, 3, 3)},
		} {
			if err := g.AllGather(outs, on(input(dt, 3, r, 0))); err != nil {
				return err
			}
			for q, o := range outs {
				if err := compare(fmt.Sprintf("nccl all_gather %v layout %d block %d", dt, k, q), dt, o.Float64s(), func(i int) float64 { return elem(dt, q, i) }); err != nil {
					return err
				}
			}
		}
		flatIn := on(input(dt, w*4, r, 0))
		for k, ins := range [][]*ember.Tensor{
			{on(input(dt, 4, r, 0)), on(input(dt, 4, r, 4))},
			{flatIn.Narrow(0, 0, 4), flatIn.Narrow(0, 4, 4)},
		} {
			out := ember.Zeros(ember.Shape{4}, ember.Dtype(dt), ember.On(dev))
			if err := g.ReduceScatter(out, ins, Sum); err != nil {
				return err
			}
			if err := compare(fmt.Sprintf("nccl reduce_scatter %v layout %d", dt, k), dt, out.Float64s(), func(i int) float64 {
				return expected(dt, Sum, w, i, func(q int) float64 { return elem(dt, q, r*4+i) })
			}); err != nil {
				return err
			}
		}
	}
	m := on(input(ember.Float32, 6, r, 0)).Reshape(2, 3).T()
	if err := g.AllReduce(m, Max); err != nil {
		return err
	}
	if err := compare("nccl all_reduce of a transposed tensor", ember.Float32, m.T().Float64s(), func(i int) float64 {
		return expected(ember.Float32, Max, w, i, func(q int) float64 { return value(q, i) })
	}); err != nil {
		return err
	}
	if err := g.AllReduce(input(ember.Float32, 3, r, 0), Sum); err == nil || !strings.Contains(err.Error(), "cpu") {
		return fmt.Errorf("nccl all_reduce of a CPU tensor = %v, want an error naming the device", err)
	}
	return g.Barrier()
}

func init() {
	// The stand-in NCCL prints nothing; keep NCCL_DEBUG from a user's
	// shell out of the child processes' output.
	os.Unsetenv("NCCL_DEBUG")
}
