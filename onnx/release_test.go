package onnx

import (
	"fmt"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
	pb "github.com/emberml/ember/onnx/internal/onnxpb"
)

// chain is x → Relu → Neg → Relu → … (k nodes) → y, with a Reshape (a view)
// every fourth node, so that views share storage with what they view.
func chain(k int) *pb.GraphProto {
	g := &pb.GraphProto{Input: []*pb.ValueInfoProto{vi("x", 256, 1024)}, Output: []*pb.ValueInfoProto{vi("y", 256, 1024)},
		Initializer: []*pb.TensorProto{{Name: strp("shape"), Dims: []int64{2}, DataType: i32p(tInt64), Int64Data: []int64{1024, 256}},
			{Name: strp("shape2"), Dims: []int64{2}, DataType: i32p(tInt64), Int64Data: []int64{256, 1024}}}}
	prev := "x"
	for i := 0; i < k; i++ {
		out := fmt.Sprintf("v%d", i)
		if i == k-1 {
			out = "y"
		}
		switch {
		case i%4 == 1:
			g.Node = append(g.Node, nd("Reshape", []string{prev, "shape"}, []string{out}))
		case i%4 == 2:
			g.Node = append(g.Node, nd("Reshape", []string{prev, "shape2"}, []string{out}))
		case i%2 == 0:
			g.Node = append(g.Node, nd("Relu", []string{prev}, []string{out}))
		default:
			g.Node = append(g.Node, nd("Neg", []string{prev}, []string{out}))
		}
		prev = out
	}
	return g
}

func strp(s string) *string { return &s }
func i32p(v int32) *int32   { return &v }

// TestRunReleasesIntermediates runs a 64-node chain of 1 MiB tensors on an
// emulated cuda:0: intermediates are released as soon as their last
// consumer ran, so the peak stays at a few tensors (not 64 MiB), and nothing
// but the output is left allocated.
func TestRunReleasesIntermediates(t *testing.T) {
	if ember.DeviceCount() > 0 {
		t.Skip("a real GPU is present")
	}
	restore := cudatest.Use(t)
	defer restore()
	dev := ember.CUDA(0)
	m, err := Parse(model(chain(64)))
	if err != nil {
		t.Fatal(err)
	}
	x := ember.Randn(ember.Shape{256, 1024}, ember.On(dev))
	first, err := m.Run(map[string]*ember.Tensor{"x": x}) // first run: constants move to the device
	if err != nil {
		t.Fatal(err)
	}
	first["y"].Release()
	before := ember.MemoryAllocated(dev)
	if err := ember.ResetPeakMemoryStats(dev); err != nil {
		t.Fatal(err)
	}
	out, err := m.Run(map[string]*ember.Tensor{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	peak := ember.MaxMemoryAllocated(dev) - before
	if peak > 4*mib {
		t.Errorf("peak %d MiB over the inputs for a chain of 1 MiB tensors, want at most 4", peak/mib)
	}
	if got := out["y"].CPU().Float32s()[:4]; got[0] != 0 || got[1] != 0 || got[2] != 0 || got[3] != 0 {
		t.Errorf("y = relu(-relu(x)) must be 0, got %v", got) // the chain ends relu, neg, relu
	}
	out["y"].Release()
	// (below zero where the GC freed a dropped tensor of the first run meanwhile)
	if left := ember.MemoryAllocated(dev) - before; left > 0 {
		t.Errorf("%d bytes left allocated after the output was released", left)
	}
}
