package onnx

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
	pb "github.com/emberml/ember/onnx/internal/onnxpb"
	"google.golang.org/protobuf/proto"
)

func gattr(name string, g *pb.GraphProto) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_GRAPH.Enum(), G: g}
}

func iattr(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

// untyped is a value info without a type (as subgraph inputs often are).
func untyped(name string) *pb.ValueInfoProto { return &pb.ValueInfoProto{Name: proto.String(name)} }

func i64tensor(name string, dims []int64, v ...int64) *pb.TensorProto {
	return &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(tInt64), Int64Data: v}
}

func btensor(name string, v bool) *pb.TensorProto {
	b := int32(0)
	if v {
		b = 1
	}
	return &pb.TensorProto{Name: proto.String(name), DataType: proto.Int32(tBool), Int32Data: []int32{b}}
}

// accumulate is a Loop body: (i, cond, acc) → (cond, acc + x·w, acc) —
// x from the main graph, w from the graph between — with acc as a scan
// output too.
func accumulate() *pb.GraphProto {
	return &pb.GraphProto{Name: proto.String("body"),
		Input:  []*pb.ValueInfoProto{untyped("i"), untyped("c_in"), untyped("acc")},
		Output: []*pb.ValueInfoProto{untyped("c_out"), untyped("acc_out"), untyped("scan")},
		Node: []*pb.NodeProto{nd("Identity", []string{"c_in"}, []string{"c_out"}),
			nd("Mul", []string{"x", "w"}, []string{"xw"}),
			nd("Add", []string{"acc", "xw"}, []string{"acc_out"}),
			nd("Identity", []string{"acc"}, []string{"scan"})}}
}

// nestedModel: y, s = If(c) then Loop(3 times: acc += x·w from acc = x) —
// with w a Constant of the then branch — else (-x, x).
func nestedModel() *pb.GraphProto {
	then := &pb.GraphProto{Name: proto.String("then"), Output: []*pb.ValueInfoProto{untyped("ty"), untyped("ts")},
		Initializer: []*pb.TensorProto{i64tensor("three", nil, 3), ftensor("w", nil, []float32{2})},
		Node:        []*pb.NodeProto{nd("Loop", []string{"three", "", "x"}, []string{"ty", "ts"}, gattr("body", accumulate()))}}
	els := &pb.GraphProto{Name: proto.String("else"), Output: []*pb.ValueInfoProto{untyped("ey"), untyped("x")},
		Node: []*pb.NodeProto{nd("Neg", []string{"x"}, []string{"ey"})}}
	c := "c"
	bt := int32(tBool)
	return &pb.GraphProto{Name: proto.String("nested"),
		Input:  []*pb.ValueInfoProto{vi("x", 2), {Name: &c, Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{ElemType: &bt}}}}},
		Output: []*pb.ValueInfoProto{untyped("y"), untyped("s")},
		Node:   []*pb.NodeProto{nd("If", []string{"c"}, []string{"y", "s"}, gattr("then_branch", then), gattr("else_branch", els))}}
}

// TestControlFlowOuterScope: subgraphs read values of every enclosing
// scope (x from the main graph inside a Loop inside an If, w from the If's
// branch), on every device.
func TestControlFlowOuterScope(t *testing.T) {
	m, err := Parse(model(nestedModel()))
	if err != nil {
		t.Fatal(err)
	}
	devs := []ember.Device{ember.CPU}
	if ember.DeviceCount() == 0 {
		restore := cudatest.Use(t)
		defer restore()
	}
	devs = append(devs, ember.CUDA(0))
	for _, dev := range devs {
		x := ember.FromSlice([]float32{1, -2}, nil).To(dev)
		for _, c := range []bool{true, false} {
			out, err := m.Run(map[string]*ember.Tensor{"x": x, "c": ember.FromSlice([]bool{c}, ember.Shape{}).To(dev)})
			if err != nil {
				t.Fatalf("%v c=%v: %v", dev, c, err)
			}
			y, s := out["y"].CPU().Float32s(), out["s"].CPU()
			// acc: x, 3x, 5x → y = 7x; s = [x, 3x, 5x]
			wantY, wantS, wantSh := []float32{7, -14}, []float32{1, -2, 3, -6, 5, -10}, ember.Shape{3, 2}
			if !c {
				wantY, wantS, wantSh = []float32{-1, 2}, []float32{1, -2}, ember.Shape{2}
			}
			if !equalF(y, wantY) || !equalF(s.Float32s(), wantS) || !s.Shape().Equal(wantSh) {
				t.Errorf("%v c=%v: y %v s %v %v, want %v %v %v", dev, c, y, s.Shape(), s.Float32s(), wantY, wantSh, wantS)
			}
		}
	}
}

func equalF(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return true
}

// loopModel: y = Loop(M, cond) over v ← Relu(Neg(v)) + 1 from x.
func loopModel(dims ...int64) *pb.GraphProto {
	body := &pb.GraphProto{Name: proto.String("body"),
		Input:       []*pb.ValueInfoProto{untyped("i"), untyped("c_in"), untyped("v")},
		Output:      []*pb.ValueInfoProto{untyped("c_in"), untyped("v_out")},
		Initializer: []*pb.TensorProto{ftensor("one", nil, []float32{1})},
		Node: []*pb.NodeProto{nd("Neg", []string{"v"}, []string{"n"}), nd("Relu", []string{"n"}, []string{"r"}),
			nd("Add", []string{"r", "one"}, []string{"v_out"})}}
	return &pb.GraphProto{Name: proto.String("loop"),
		Input:       []*pb.ValueInfoProto{vi("x", dims...), {Name: proto.String("M")}},
		Output:      []*pb.ValueInfoProto{untyped("y")},
		Initializer: []*pb.TensorProto{btensor("cond", true)},
		Node:        []*pb.NodeProto{nd("Loop", []string{"M", "cond", "x"}, []string{"y"}, gattr("body", body))}}
}

// TestLoopReleasesIterations: a Loop of 40 iterations over a 1 MiB value
// on an emulated cuda:0 frees each iteration's values: the peak stays at a
// few tensors.
func TestLoopReleasesIterations(t *testing.T) {
	if ember.DeviceCount() > 0 {
		t.Skip("a real GPU is present")
	}
	restore := cudatest.Use(t)
	defer restore()
	dev := ember.CUDA(0)
	m, err := Parse(model(loopModel(256, 1024)))
	if err != nil {
		t.Fatal(err)
	}
	x := ember.Full(ember.Shape{256, 1024}, -3, ember.On(dev))
	run := func(n int64) *ember.Tensor {
		out, err := m.Run(map[string]*ember.Tensor{"x": x, "M": ember.FromSlice([]int64{n}, ember.Shape{}).To(dev)})
		if err != nil {
			t.Fatal(err)
		}
		return out["y"]
	}
	run(1).Release() // constants move to the device
	before := ember.MemoryAllocated(dev)
	if err := ember.ResetPeakMemoryStats(dev); err != nil {
		t.Fatal(err)
	}
	y := run(40)
	const mib = 1 << 20
	if peak := ember.MaxMemoryAllocated(dev) - before; peak > 6*mib {
		t.Errorf("peak %d MiB over the inputs for a loop over 1 MiB values, want at most 6", peak/mib)
	}
	// v: -3 → 4 → 1 → 1 …
	if got := y.CPU().Float32s(); got[0] != 1 || got[len(got)-1] != 1 {
		t.Errorf("y = %v…, want 1", got[:4])
	}
	y.Release()
}

// TestHostileControlFlow: deeply nested subgraphs are refused at parse, a
// subgraph reading a value no scope defines is a FormatError, and a Loop
// that would run without end (huge trip count, or nested loops whose
// product is huge) stops at onnx.MaxIterations with an error.
func TestHostileControlFlow(t *testing.T) {
	// 200 nested Ifs: the protobuf recursion limit refuses them
	g := addModel()
	for i := 0; i < 200; i++ {
		g = &pb.GraphProto{Name: proto.String("nest"), Input: g.Input, Output: []*pb.ValueInfoProto{untyped("y")},
			Initializer: []*pb.TensorProto{btensor("c", true)},
			Node:        []*pb.NodeProto{nd("If", []string{"c"}, []string{"y"}, gattr("then_branch", g))}}
	}
	_, err := Parse(model(g))
	wantErr[*FormatError](t, "deep nesting", err, "protobuf")

	g = nestedModel()
	g.Node[0].Attribute[1].G.Node[0].Input[0] = "nowhere"
	_, err = Parse(model(g))
	wantErr[*FormatError](t, "unknown outer value", err, `reads "nowhere"`)

	defer func(n int64) { MaxIterations = n }(MaxIterations)
	MaxIterations = 1000
	m, err := Parse(model(loopModel(2)))
	if err != nil {
		t.Fatal(err)
	}
	run := func(n int64) error {
		_, err := m.Run(map[string]*ember.Tensor{"x": ember.Zeros(ember.Shape{2}), "M": ember.FromSlice([]int64{n}, ember.Shape{})})
		return err
	}
	if err := run(1000); err != nil {
		t.Errorf("1000 iterations: %v", err)
	}
	if err := run(-5); err != nil { // no iteration, as ONNX Runtime
		t.Errorf("a negative trip count: %v", err)
	}
	wantErr[*NodeError](t, "huge trip count", run(math.MaxInt64), "onnx.MaxIterations")

	// Loop(30) { Loop(100) }: 3000 iterations in all
	inner := loopModel(2)
	body := &pb.GraphProto{Name: proto.String("outer"), Input: []*pb.ValueInfoProto{untyped("j"), untyped("oc"), untyped("w")},
		Output:      []*pb.ValueInfoProto{untyped("oc"), untyped("w_out")},
		Initializer: []*pb.TensorProto{i64tensor("hundred", nil, 100)},
		Node:        []*pb.NodeProto{nd("Loop", []string{"hundred", "cond", "w"}, []string{"w_out"}, inner.Node[0].Attribute...)}}
	g = loopModel(2)
	g.Node[0].Attribute = []*pb.AttributeProto{gattr("body", body)}
	m, err = Parse(model(g))
	if err != nil {
		t.Fatal(err)
	}
	wantErr[*NodeError](t, "nested loops", run(30), "onnx.MaxIterations")

	// a scan output growing past onnx.MaxElements stops the loop
	defer func(n int64) { MaxElements = n }(MaxElements)
	MaxElements = 100
	g = loopModel(2)
	body = g.Node[0].Attribute[0].G
	body.Output = append(body.Output, untyped("v_scan"))
	body.Node = append(body.Node, nd("Identity", []string{"v_out"}, []string{"v_scan"}))
	g.Node[0].Output = append(g.Node[0].Output, "scan")
	g.Output = append(g.Output, untyped("scan"))
	m, err = Parse(model(g))
	if err != nil {
		t.Fatal(err)
	}
	if err := run(50); err != nil {
		t.Errorf("a scan output of 100 elements: %v", err)
	}
	wantErr[*NodeError](t, "scan output over MaxElements", run(51), "onnx.MaxElements")

	// so does a sequence a loop inserts into
	g = loopModel(2)
	body = g.Node[0].Attribute[0].G
	body.Input = append(body.Input, untyped("s"))
	body.Output = append(body.Output, untyped("s_out"))
	body.Node = append(body.Node, nd("SequenceInsert", []string{"s", "v_out"}, []string{"s_out"}))
	g.Node = append([]*pb.NodeProto{nd("SequenceEmpty", nil, []string{"empty"})}, g.Node...)
	g.Node[1].Input = append(g.Node[1].Input, "empty")
	g.Node[1].Output = append(g.Node[1].Output, "seq")
	g.Node = append(g.Node, nd("SequenceLength", []string{"seq"}, []string{"n"}))
	g.Output = append(g.Output, untyped("n"))
	m, err = Parse(model(g))
	if err != nil {
		t.Fatal(err)
	}
	if err := run(50); err != nil {
		t.Errorf("a sequence of 100 elements: %v", err)
	}
	wantErr[*NodeError](t, "sequence over MaxElements", run(51), "onnx.MaxElements")
}

// TestSequenceValues: a graph with a sequence input and output runs
// through RunSequences (Run refuses the sequence output); a position out of
// range is an error, not a panic.
func TestSequenceValues(t *testing.T) {
	et := int32(tFloat)
	seqType := &pb.TypeProto{Value: &pb.TypeProto_SequenceType{SequenceType: &pb.TypeProto_Sequence{
		ElemType: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{ElemType: &et}}}}}}
	g := &pb.GraphProto{Name: proto.String("seq"),
		Input:  []*pb.ValueInfoProto{{Name: proto.String("s"), Type: seqType}, vi("x", 2), {Name: proto.String("pos")}},
		Output: []*pb.ValueInfoProto{{Name: proto.String("s2"), Type: seqType}, untyped("at"), untyped("n")},
		Node: []*pb.NodeProto{nd("SequenceInsert", []string{"s", "x", "pos"}, []string{"s2"}),
			nd("SequenceAt", []string{"s2", "pos"}, []string{"at"}),
			nd("SequenceLength", []string{"s2"}, []string{"n"})}}
	m, err := Parse(model(g))
	if err != nil {
		t.Fatal(err)
	}
	s := []*ember.Tensor{ember.FromSlice([]float32{1}, nil), ember.FromSlice([]float32{2, 3}, nil)}
	x := ember.FromSlice([]float32{4, 5}, nil)
	pos := func(p int64) *ember.Tensor { return ember.FromSlice([]int64{p}, ember.Shape{}) }
	_, err = m.Run(map[string]*ember.Tensor{"x": x, "pos": pos(0)})
	if err == nil || !strings.Contains(err.Error(), "RunSequences") {
		t.Errorf("Run without the sequence input: %v, want an error naming RunSequences", err)
	}
	ts, ss, err := m.RunSequences(map[string]*ember.Tensor{"x": x, "pos": pos(-1)}, map[string][]*ember.Tensor{"s": s})
	if err != nil {
		t.Fatal(err)
	}
	// insert at -1: before the last → [1], [4 5], [2 3]; at(-1) = [2 3]
	if got := ss["s2"]; len(got) != 3 || !equalF(got[1].Float32s(), []float32{4, 5}) || !equalF(ts["at"].Float32s(), []float32{2, 3}) || ts["n"].Int64s()[0] != 3 {
		t.Errorf("s2 %v at %v n %v", got, ts["at"], ts["n"])
	}
	_, _, err = m.RunSequences(map[string]*ember.Tensor{"x": x, "pos": pos(7)}, map[string][]*ember.Tensor{"s": s})
	wantErr[*NodeError](t, "position out of range", err, "position 7 is out of range for a sequence of 2 tensors")
	m2, err := Parse(model(&pb.GraphProto{Name: proto.String("seqout"), Input: g.Input[:1], Output: g.Output[:1],
		Node: []*pb.NodeProto{nd("Identity", []string{"s"}, []string{"s2"})}}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m2.Run(nil)
	if err == nil || !strings.Contains(err.Error(), "RunSequences") {
		t.Errorf("Run of a sequence output: %v", err)
	}
	g.Node[0] = nd("Relu", []string{"s"}, []string{"s2"})
	m3, err := Parse(model(g))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = m3.RunSequences(map[string]*ember.Tensor{"x": x, "pos": pos(0)}, map[string][]*ember.Tensor{"s": s})
	wantErr[*NodeError](t, "tensor op on a sequence", err, "is a sequence; Relu takes tensors")
}

// TestSubgraphInitializerShadowsOuter: a branch's own initializer named
// like an outer value the other branch reads shadows that value inside
// its branch (the inner scope wins), on every run.
func TestSubgraphInitializerShadowsOuter(t *testing.T) {
	then := &pb.GraphProto{Name: proto.String("then"), Output: []*pb.ValueInfoProto{untyped("ty")},
		Initializer: []*pb.TensorProto{ftensor("x", []int64{2}, []float32{7, 8})},
		Node:        []*pb.NodeProto{nd("Add", []string{"x", "z"}, []string{"ty"})}}
	els := &pb.GraphProto{Name: proto.String("else"), Output: []*pb.ValueInfoProto{untyped("ey")},
		Node: []*pb.NodeProto{nd("Neg", []string{"x"}, []string{"ey"})}}
	bt := int32(tBool)
	g := &pb.GraphProto{Name: proto.String("shadow"),
		Input:  []*pb.ValueInfoProto{vi("x", 2), vi("z", 2), {Name: proto.String("c"), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{ElemType: &bt}}}}},
		Output: []*pb.ValueInfoProto{untyped("y")},
		Node:   []*pb.NodeProto{nd("If", []string{"c"}, []string{"y"}, gattr("then_branch", then), gattr("else_branch", els))}}
	m, err := Parse(model(g))
	if err != nil {
		t.Fatal(err)
	}
	x := ember.FromSlice([]float32{1, 2}, nil)
	for _, c := range []bool{true, false} {
		out, err := m.Run(map[string]*ember.Tensor{"x": x, "z": ember.Zeros(ember.Shape{2}), "c": ember.FromSlice([]bool{c}, ember.Shape{})})
		if err != nil {
			t.Fatal(err)
		}
		want := []float32{7, 8}
		if !c {
			want = []float32{-1, -2}
		}
		if got := out["y"].Float32s(); !equalF(got, want) {
			t.Errorf("c=%v: y = %v, want %v", c, got, want)
		}
	}
}

// growingModel: a Loop appends v (-3 → 4 → 1 → 1 …) to sequences each
// iteration: s by SequenceInsert, s1 too (the same value: two outputs on
// one array), and with both, s2 by two inserts and an erase of the last;
// all start from one SequenceEmpty and come out as outputs.
func growingModel(both bool) *pb.GraphProto {
	g := loopModel()
	body := g.Node[0].Attribute[0].G
	body.Input = append(body.Input, untyped("s"), untyped("s1"))
	body.Output = append(body.Output, untyped("s_out"), untyped("s_out"))
	body.Node = append(body.Node, nd("SequenceInsert", []string{"s", "v_out"}, []string{"s_out"}))
	g.Node = append([]*pb.NodeProto{nd("SequenceEmpty", nil, []string{"empty"})}, g.Node...)
	g.Node[1].Input = append(g.Node[1].Input, "empty", "empty")
	g.Node[1].Output = append(g.Node[1].Output, "seq", "seq1")
	g.Output = append(g.Output, untyped("seq"), untyped("seq1"))
	if both {
		body.Input = append(body.Input, untyped("s2"))
		body.Output = append(body.Output, untyped("s2_out"))
		body.Node = append(body.Node, nd("SequenceInsert", []string{"s2", "v_out"}, []string{"a"}),
			nd("SequenceInsert", []string{"a", "v_out"}, []string{"b"}),
			nd("SequenceErase", []string{"b"}, []string{"s2_out"}))
		g.Node[1].Input = append(g.Node[1].Input, "empty")
		g.Node[1].Output = append(g.Node[1].Output, "seq2")
		g.Output = append(g.Output, untyped("seq2"))
	}
	return g
}

// TestLoopGrowingSequence: a Loop carrying a growing sequence appends
// without copying it (1<<14 iterations took six minutes, each copying and
// looking up every tensor of the sequence), and the sequences hold the
// value of each iteration, on every device.
func TestLoopGrowingSequence(t *testing.T) {
	m, err := Parse(model(growingModel(true)))
	if err != nil {
		t.Fatal(err)
	}
	devs := []ember.Device{ember.CPU}
	if ember.DeviceCount() == 0 {
		restore := cudatest.Use(t)
		defer restore()
	}
	devs = append(devs, ember.CUDA(0))
	run := func(n int64, dev ember.Device) (map[string][]*ember.Tensor, error) {
		_, ss, err := m.RunSequences(map[string]*ember.Tensor{"x": ember.Full(ember.Shape{}, -3).To(dev),
			"M": ember.FromSlice([]int64{n}, ember.Shape{}).To(dev)}, nil)
		return ss, err
	}
	for _, dev := range devs {
		ss, err := run(5, dev)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"seq", "seq1", "seq2"} {
			var got []float32
			for _, e := range ss[name] {
				got = append(got, e.CPU().Float32s()...)
			}
			if !equalF(got, []float32{4, 1, 1, 1, 1}) {
				t.Errorf("%v: %s = %v, want [4 1 1 1 1]", dev, name, got)
			}
		}
	}
	if m, err = Parse(model(growingModel(false))); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ss, err := run(1<<14, ember.CPU)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss["seq"]) != 1<<14 || len(ss["seq1"]) != 1<<14 || ss["seq"][1<<14-1].Float32s()[0] != 1 {
		t.Errorf("lengths %d, %d", len(ss["seq"]), len(ss["seq1"]))
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("1<<14 iterations appending to a sequence took %v", d)
	}
}

// TestLoopSequenceReleases: a Loop keeping a queue of one 1 MiB tensor (an
// insert at the end, an erase of the front, each iteration) on an emulated
// cuda:0 frees each tensor leaving the queue: the peak stays at a few.
func TestLoopSequenceReleases(t *testing.T) {
	if ember.DeviceCount() > 0 {
		t.Skip("a real GPU is present")
	}
	restore := cudatest.Use(t)
	defer restore()
	dev := ember.CUDA(0)
	g := loopModel(256, 1024)
	body := g.Node[0].Attribute[0].G
	body.Input = append(body.Input, untyped("s"))
	body.Output = append(body.Output, untyped("s_out"))
	body.Initializer = append(body.Initializer, i64tensor("zero", nil, 0))
	body.Node = append(body.Node, nd("SequenceInsert", []string{"s", "v_out"}, []string{"a"}),
		nd("SequenceErase", []string{"a", "zero"}, []string{"s_out"}))
	g.Node = append([]*pb.NodeProto{nd("SequenceConstruct", []string{"x"}, []string{"s0"})}, g.Node...)
	g.Node[1].Input = append(g.Node[1].Input, "s0")
	g.Node[1].Output = append(g.Node[1].Output, "seq")
	g.Output = append(g.Output, untyped("seq"))
	m, err := Parse(model(g))
	if err != nil {
		t.Fatal(err)
	}
	x := ember.Full(ember.Shape{256, 1024}, -3, ember.On(dev))
	run := func(n int64) ([]*ember.Tensor, *ember.Tensor) {
		ts, ss, err := m.RunSequences(map[string]*ember.Tensor{"x": x, "M": ember.FromSlice([]int64{n}, ember.Shape{}).To(dev)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ss["seq"], ts["y"]
	}
	s, y := run(1)
	s[0].Release()
	y.Release()
	before := ember.MemoryAllocated(dev)
	if err := ember.ResetPeakMemoryStats(dev); err != nil {
		t.Fatal(err)
	}
	s, y = run(40)
	const mib = 1 << 20
	if peak := ember.MaxMemoryAllocated(dev) - before; peak > 8*mib {
		t.Errorf("peak %d MiB over the inputs for a loop queueing 1 MiB values, want at most 8", peak/mib)
	}
	if len(s) != 1 || s[0].CPU().Float32s()[0] != 1 {
		t.Errorf("seq = %v, want one tensor of ones", s)
	}
	s[0].Release()
	y.Release()
}
