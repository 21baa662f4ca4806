package onnx

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
	pb "github.com/emberml/ember/onnx/internal/onnxpb"
	"google.golang.org/protobuf/proto"
)

func halfVI(name string, et int32, dims ...int64) *pb.ValueInfoProto {
	v := vi(name, dims...)
	v.Type.GetTensorType().ElemType = &et
	return v
}

// halfTensor is an initializer of ONNX type et (tFloat16 or tBfloat16)
// holding vals (exactly representable), as raw_data or int32_data.
func halfTensor(name string, et int32, dims []int64, vals []float32, raw bool) *pb.TensorProto {
	dt := ember.Float16
	if et == tBfloat16 {
		dt = ember.BFloat16
	}
	bits := ember.FromSlice(vals, nil).Cast(dt).Bits()
	tp := &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(et)}
	if raw {
		tp.RawData = make([]byte, 2*len(bits))
		for i, b := range bits {
			binary.LittleEndian.PutUint16(tp.RawData[2*i:], b)
		}
	} else {
		for _, b := range bits {
			tp.Int32Data = append(tp.Int32Data, int32(b))
		}
	}
	return tp
}

// TestHalfGraph runs a float16 / bfloat16 graph (initializers in both
// storage forms, MatMul, Add, Relu, Softmax, Cast between the types, Mul)
// on the CPU and an emulated cuda:0. The values are small dyadic numbers,
// so every result but the softmax is exact; the softmax is exp's value
// rounded to float16, within one float16 ulp.
func TestHalfGraph(t *testing.T) {
	to := func(et int64) *pb.AttributeProto {
		return &pb.AttributeProto{Name: proto.String("to"), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(et)}
	}
	g := &pb.GraphProto{Name: proto.String("half"),
		Node: []*pb.NodeProto{
			nd("MatMul", []string{"x", "w"}, []string{"h"}),
			nd("Add", []string{"h", "b"}, []string{"h2"}),
			nd("Relu", []string{"h2"}, []string{"r"}),
			nd("Softmax", []string{"h2"}, []string{"sm"}),
			nd("Cast", []string{"r"}, []string{"rb"}, to(tBfloat16)),
			nd("Mul", []string{"rb", "s"}, []string{"z"}),
			nd("Add", []string{"z", "u"}, []string{"z2"}),
			nd("Cast", []string{"z2"}, []string{"f"}, to(tFloat)),
		},
		Initializer: []*pb.TensorProto{
			halfTensor("w", tFloat16, []int64{3, 2}, []float32{1, 0, 0, 1, 1, -1}, true),
			halfTensor("b", tFloat16, []int64{2}, []float32{0.5, 1}, false),
			halfTensor("s", tBfloat16, []int64{2}, []float32{2, -0.25}, false),
			halfTensor("u", tBfloat16, []int64{2}, []float32{0.125, 256}, true),
		},
		Input: []*pb.ValueInfoProto{halfVI("x", tFloat16, 2, 3)},
		Output: []*pb.ValueInfoProto{halfVI("r", tFloat16, 2, 2), halfVI("sm", tFloat16, 2, 2),
			halfVI("z2", tBfloat16, 2, 2), vi("f", 2, 2)}}
	m, err := Parse(model(g))
	if err != nil {
		t.Fatal(err)
	}
	if m.Inputs[0].DType != "float16" || m.Outputs[2].DType != "bfloat16" {
		t.Fatalf("inputs %v, outputs %v", m.Inputs, m.Outputs)
	}
	run := func(t *testing.T, dev ember.Device) {
		x := ember.FromSlice([]float32{1, 2, 3, -1, 0.5, 2}, ember.Shape{2, 3}, ember.On(dev)).Cast(ember.Float16)
		out, err := m.Run(map[string]*ember.Tensor{"x": x})
		if err != nil {
			t.Fatal(err)
		}
		// h = x·w = [[4, -1], [1, -1.5]], h2 = h + b = [[4.5, 0], [1.5, -0.5]]
		for _, c := range []struct {
			name string
			dt   ember.DType
			want []float32
		}{
			{"r", ember.Float16, []float32{4.5, 0, 1.5, 0}},
			{"z2", ember.BFloat16, []float32{9.125, 256, 3.125, 256}},
			{"f", ember.Float32, []float32{9.125, 256, 3.125, 256}},
		} {
			got := out[c.name]
			if got.DType() != c.dt || !slices.Equal(got.CPU().Float32s(), c.want) {
				t.Errorf("%s on %s: %v %v, want %v %v", c.name, dev, got.DType(), got.CPU().Float32s(), c.dt, c.want)
			}
		}
		sm := out["sm"]
		if sm.DType() != ember.Float16 {
			t.Fatalf("softmax in %v", sm.DType())
		}
		p := func(a, b float64) float64 { return math.Exp(a) / (math.Exp(a) + math.Exp(b)) }
		want := []float64{p(4.5, 0), p(0, 4.5), p(1.5, -0.5), p(-0.5, 1.5)}
		for i, g := range sm.CPU().Float32s() {
			ulp := math.Ldexp(1, math.Ilogb(want[i])-10)
			if math.Abs(float64(g)-want[i]) > ulp {
				t.Errorf("softmax[%d] on %s = %v, want %v within a float16 ulp (%g)", i, dev, g, want[i], ulp)
			}
		}
	}
	t.Run("cpu", func(t *testing.T) { run(t, ember.CPU) })
	t.Run("cuda", func(t *testing.T) {
		if testing.Short() {
			t.Skip("emulated kernels: runs in the full suite")
		}
		if ember.DeviceCount() == 0 {
			restore := cudatest.Use(t)
			defer restore()
		}
		run(t, ember.CUDA(0))
	})
}
