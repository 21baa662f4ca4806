package onnx

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/emberml/ember"
	pb "github.com/emberml/ember/onnx/internal/onnxpb"
	"google.golang.org/protobuf/proto"
)

func vi(name string, dims ...int64) *pb.ValueInfoProto {
	var ds []*pb.TensorShapeProto_Dimension
	for _, d := range dims {
		ds = append(ds, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	et := int32(tFloat)
	return &pb.ValueInfoProto{Name: &name, Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{
		ElemType: &et, Shape: &pb.TensorShapeProto{Dim: ds}}}}}
}

func nd(op string, ins, outs []string, attrs ...*pb.AttributeProto) *pb.NodeProto {
	return &pb.NodeProto{OpType: proto.String(op), Input: ins, Output: outs, Name: proto.String(op + "_" + outs[0]), Attribute: attrs}
}

func ftensor(name string, dims []int64, data []float32) *pb.TensorProto {
	return &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(tFloat), FloatData: data}
}

func model(g *pb.GraphProto) []byte {
	m := &pb.ModelProto{IrVersion: proto.Int64(8), Graph: g,
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}}
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// addModel is y = x + w (x, w of shape [2, 3]).
func addModel() *pb.GraphProto {
	return &pb.GraphProto{Name: proto.String("add"),
		Node:        []*pb.NodeProto{nd("Add", []string{"x", "w"}, []string{"y"})},
		Initializer: []*pb.TensorProto{ftensor("w", []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})},
		Input:       []*pb.ValueInfoProto{vi("x", 2, 3)}, Output: []*pb.ValueInfoProto{vi("y", 2, 3)}}
}

func TestHandBuiltModelRuns(t *testing.T) {
	m, err := Parse(model(addModel()))
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Run(map[string]*ember.Tensor{"x": ember.Ones(ember.Shape{2, 3})})
	if err != nil {
		t.Fatal(err)
	}
	if got := out["y"].Float32s(); got[0] != 2 || got[5] != 7 {
		t.Fatalf("y = %v", got)
	}
	if _, err := m.Run(map[string]*ember.Tensor{"x": ember.Ones(ember.Shape{3, 2})}); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Fatalf("wrong input shape: %v", err)
	}
	if _, err := m.Run(nil); err == nil || !strings.Contains(err.Error(), `missing input "x"`) {
		t.Fatalf("missing input: %v", err)
	}
}

func wantErr[E error](t *testing.T, name string, err error, substr string) {
	t.Helper()
	var e E
	if err == nil || !errors.As(err, &e) || !strings.Contains(err.Error(), substr) {
		t.Errorf("%s: %v, want a %T containing %q", name, err, e, substr)
	}
}

func TestHostileModels(t *testing.T) {
	good, err := os.ReadFile("testdata/gpt2_block.onnx")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(good[:len(good)/2])
	wantErr[*FormatError](t, "truncated", err, "protobuf")
	garbage := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(garbage)
	_, err = Parse(garbage)
	wantErr[*FormatError](t, "garbage", err, "")
	_, err = Parse(nil)
	wantErr[*FormatError](t, "empty", err, "no graph")

	g := addModel()
	g.Node = []*pb.NodeProto{nd("Add", []string{"x", "b"}, []string{"a"}), nd("Relu", []string{"a"}, []string{"b"}),
		nd("Identity", []string{"a"}, []string{"y"})}
	_, err = Parse(model(g))
	wantErr[*FormatError](t, "cycle", err, "cycle")

	g = addModel()
	g.Initializer = nil
	_, err = Parse(model(g))
	wantErr[*FormatError](t, "missing initializer", err, `reads "w"`)

	g = addModel()
	g.Initializer[0].FloatData = g.Initializer[0].FloatData[:5]
	_, err = Parse(model(g))
	wantErr[*FormatError](t, "data shorter than dims", err, "hold 6 elements, the data has 5")

	g = addModel()
	g.Initializer[0].Dims = []int64{1 << 40, 1 << 40}
	g.Initializer[0].RawData = []byte{1, 2, 3, 4}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Parse(model(g))
	wantErr[*FormatError](t, "absurd dims", err, "overflow")
	g.Initializer[0].Dims = []int64{1 << 30, 1 << 10}
	_, err = Parse(model(g))
	wantErr[*FormatError](t, "huge dims, no data", err, "bytes of data")
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.TotalAlloc-before.TotalAlloc > 64<<20 {
		t.Errorf("absurd dims allocated %d MiB", (after.TotalAlloc-before.TotalAlloc)>>20)
	}

	g = addModel()
	g.Initializer[0].Dims = []int64{-2, -3}
	_, err = Parse(model(g))
	wantErr[*FormatError](t, "negative dims", err, "negative")

	// a shape that contradicts the data: Reshape of the 6-element w to [4, 2]
	g = addModel()
	g.Initializer = append(g.Initializer, &pb.TensorProto{Name: proto.String("s"), Dims: []int64{2}, DataType: proto.Int32(tInt64), Int64Data: []int64{4, 2}})
	g.Node = []*pb.NodeProto{nd("Reshape", []string{"w", "s"}, []string{"r"}), nd("Add", []string{"x", "r"}, []string{"y"})}
	_, err = Parse(model(g))
	wantErr[*NodeError](t, "contradicting reshape", err, "Reshape")

	// an absurd ConstantOfShape at run time: refused, not allocated
	g = addModel()
	g.Input = append(g.Input, &pb.ValueInfoProto{Name: proto.String("shape")})
	g.Node = []*pb.NodeProto{nd("ConstantOfShape", []string{"shape"}, []string{"y"})}
	m, err := Parse(model(g))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Run(map[string]*ember.Tensor{"x": ember.Ones(ember.Shape{2, 3}),
		"shape": ember.FromSlice([]int64{1 << 20, 1 << 20, 1 << 20}, nil)})
	wantErr[*NodeError](t, "absurd ConstantOfShape", err, "MaxElements")

	g = addModel()
	g.Node[0].OpType = proto.String("FrobnicateV2")
	_, err = Parse(model(g))
	wantErr[*UnsupportedError](t, "unknown op", err, `unsupported op FrobnicateV2 in node "Add_y"`)

	g = addModel()
	g.Node[0].Domain = proto.String("com.microsoft")
	_, err = Parse(model(g))
	wantErr[*UnsupportedError](t, "custom domain", err, "com.microsoft")

	m2 := &pb.ModelProto{IrVersion: proto.Int64(8), Graph: addModel(), OpsetImport: []*pb.OperatorSetIdProto{{Version: proto.Int64(99)}}}
	b, _ := proto.Marshal(m2)
	_, err = Parse(b)
	wantErr[*UnsupportedError](t, "opset 99", err, "opset 99")

	g = addModel()
	g.Node = append(g.Node, nd("Relu", []string{"x"}, []string{"y"}))
	_, err = Parse(model(g))
	wantErr[*FormatError](t, "two producers", err, "produced twice")
}

func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	raw := []byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64, 0, 0, 160, 64, 0, 0, 192, 64} // 1..6
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), append([]byte("HEADER"), raw...), 0o644); err != nil {
		t.Fatal(err)
	}
	ext := func(kv ...string) *pb.GraphProto {
		g := addModel()
		w := g.Initializer[0]
		w.FloatData = nil
		w.DataLocation = pb.TensorProto_EXTERNAL.Enum()
		for i := 0; i < len(kv); i += 2 {
			w.ExternalData = append(w.ExternalData, &pb.StringStringEntryProto{Key: proto.String(kv[i]), Value: proto.String(kv[i+1])})
		}
		return g
	}
	load := func(g *pb.GraphProto) (*Model, error) {
		p := filepath.Join(dir, "m.onnx")
		if err := os.WriteFile(p, model(g), 0o644); err != nil {
			t.Fatal(err)
		}
		return Load(p)
	}
	m, err := load(ext("location", "w.bin", "offset", "6", "length", "24"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Run(map[string]*ember.Tensor{"x": ember.Zeros(ember.Shape{2, 3})})
	if err != nil || out["y"].Float32s()[5] != 6 {
		t.Fatalf("external data: %v %v", out, err)
	}
	_, err = load(ext("location", "../../etc/passwd"))
	wantErr[*FormatError](t, "escaping location", err, "inside the model's folder")
	_, err = load(ext("location", "/etc/passwd"))
	wantErr[*FormatError](t, "absolute location", err, "inside the model's folder")
	_, err = load(ext("location", "w.bin", "offset", "20", "length", "24"))
	wantErr[*FormatError](t, "beyond the end", err, "beyond the end")
	_, err = load(ext("location", "w.bin", "offset", "0", "length", "8"))
	wantErr[*FormatError](t, "short length", err, "need 24 bytes")
	_, err = load(ext("location", "nope.bin"))
	wantErr[*FormatError](t, "missing file", err, "nope.bin")
	_, err = Parse(model(ext("location", "w.bin")))
	wantErr[*FormatError](t, "Parse with external data", err, "onnx.Load")
}

func FuzzParse(f *testing.F) {
	for _, n := range []string{"transformer_layer_op17", "gpt2_block", "recurrent_loop", "scripted_lists"} {
		b, err := os.ReadFile("testdata/" + n + ".onnx")
		if err == nil {
			f.Add(b)
		}
	}
	f.Add(model(addModel()))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err == nil && m == nil {
			t.Fatal("nil model without error")
		}
	})
}

// TestFoldsShapeArithmetic: with fixed input dims, the Shape → Gather →
// Unsqueeze → Concat → Reshape chains torch.onnx.export writes (for
// x.view(x.size(0), -1)) fold away at load, leaving the Reshape.
func TestFoldsShapeArithmetic(t *testing.T) {
	i64t := func(name string, dims []int64, v ...int64) *pb.TensorProto {
		return &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(tInt64), Int64Data: v}
	}
	g := &pb.GraphProto{Name: proto.String("view"), Input: []*pb.ValueInfoProto{vi("x", 2, 3, 4)}, Output: []*pb.ValueInfoProto{vi("y")},
		Initializer: []*pb.TensorProto{i64t("zero", nil, 0), i64t("axes", []int64{1}, 0), i64t("minus1", []int64{1}, -1)},
		Node: []*pb.NodeProto{nd("Shape", []string{"x"}, []string{"s"}), nd("Gather", []string{"s", "zero"}, []string{"n"}),
			nd("Unsqueeze", []string{"n", "axes"}, []string{"n1"}), nd("Concat", []string{"n1", "minus1"}, []string{"shape"},
				&pb.AttributeProto{Name: proto.String("axis"), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(0)}),
			nd("Reshape", []string{"x", "shape"}, []string{"y"})}}
	m, err := Parse(model(g))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.g.nodes) != 1 || m.g.nodes[0].opType != "Reshape" {
		var ops []string
		for _, n := range m.g.nodes {
			ops = append(ops, n.opType)
		}
		t.Errorf("nodes left after folding: %v, want [Reshape]", ops)
	}
	out, err := m.Run(map[string]*ember.Tensor{"x": ember.Zeros(ember.Shape{2, 3, 4})})
	if err != nil || !out["y"].Shape().Equal(ember.Shape{2, 12}) {
		t.Fatalf("y: %v %v", out, err)
	}
}
