package onnx

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
	"github.com/emberml/ember/npy"
	pb "github.com/emberml/ember/onnx/internal/onnxpb"
	"google.golang.org/protobuf/proto"
)

// toHalf rewrites a float32 tensor proto as et (tFloat16 or tBfloat16)
// raw data, rounding each value to nearest even.
func toHalf(tp *pb.TensorProto, et int32) {
	if tp.GetDataType() != tFloat {
		return
	}
	v := tp.FloatData
	if raw := tp.GetRawData(); raw != nil {
		v = make([]float32, len(raw)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	dt := ember.Float16
	if et == tBfloat16 {
		dt = ember.BFloat16
	}
	var bits []uint16
	if len(v) > 0 {
		bits = ember.FromSlice(v, nil).Cast(dt).Bits()
	}
	raw := make([]byte, 2*len(bits))
	for i, b := range bits {
		binary.LittleEndian.PutUint16(raw[2*i:], b)
	}
	tp.FloatData, tp.RawData, tp.DataType = nil, raw, proto.Int32(et)
}

// halfGraph converts a float32 graph to et as onnxconverter-common's
// float16 converter does: every float initializer, Constant and
// ConstantOfShape value, declared input, output and value_info, and Cast
// to float.
func halfGraph(g *pb.GraphProto, et int32) {
	for _, tp := range g.Initializer {
		toHalf(tp, et)
	}
	for _, vs := range [][]*pb.ValueInfoProto{g.Input, g.Output, g.ValueInfo} {
		for _, v := range vs {
			if tt := v.GetType().GetTensorType(); tt != nil && tt.GetElemType() == tFloat {
				tt.ElemType = proto.Int32(et)
			}
		}
	}
	for _, n := range g.Node {
		for _, a := range n.Attribute {
			if a.T != nil {
				toHalf(a.T, et)
			}
			if n.GetOpType() == "Cast" && a.GetName() == "to" && a.GetI() == tFloat {
				a.I = proto.Int64(int64(et))
			}
		}
	}
}

// TestHalfExportedModels converts PyTorch's exported transformer layers
// and GPT-2 block (testdata/export.py) to float16 and bfloat16 graphs and
// runs them on the two-byte input: the outputs stay within the two-byte
// type's error of PyTorch's float32 outputs (max |ember - torch| under 0.5%
// of max |torch| for float16, 3% for bfloat16; a two-byte graph rounds
// every intermediate, about 2^-11 and 2^-8 relative each).
func TestHalfExportedModels(t *testing.T) {
	t.Run("cpu", func(t *testing.T) { halfExported(t, ember.CPU) })
	t.Run("cuda", func(t *testing.T) {
		if testing.Short() {
			t.Skip("emulated kernels: runs in the full suite")
		}
		if ember.DeviceCount() == 0 {
			restore := cudatest.Use(t)
			defer restore()
		}
		halfExported(t, ember.CUDA(0))
	})
}

func halfExported(t *testing.T, dev ember.Device) {
	for _, name := range []string{"transformer_layer_op17", "transformer_layer_op13", "gpt2_block"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".onnx"))
		if err != nil {
			t.Fatal(err)
		}
		x, err := npy.ReadFile(filepath.Join("testdata", name+".input.npy"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := npy.ReadFile(filepath.Join("testdata", name+".output.npy"))
		if err != nil {
			t.Fatal(err)
		}
		big := want.Abs().Max().Item()
		for _, c := range []struct {
			et  int32
			dt  ember.DType
			tol float64
		}{{tFloat16, ember.Float16, 0.005}, {tBfloat16, ember.BFloat16, 0.03}} {
			mp := &pb.ModelProto{}
			if err := proto.Unmarshal(b, mp); err != nil {
				t.Fatal(err)
			}
			halfGraph(mp.Graph, c.et)
			hb, err := proto.Marshal(mp)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Parse(hb)
			if err != nil {
				t.Fatalf("%s in %v: %v", name, c.dt, err)
			}
			in := x
			if x.DType().IsFloat() {
				in = x.Cast(c.dt)
			}
			out, err := m.Run(map[string]*ember.Tensor{m.Inputs[0].Name: in.To(dev)})
			if err != nil {
				t.Fatalf("%s in %v: %v", name, c.dt, err)
			}
			got := out[m.Outputs[0].Name].CPU()
			if got.DType() != c.dt || !got.Shape().Equal(want.Shape()) {
				t.Fatalf("%s in %v: output %v %v", name, c.dt, got.DType(), got.Shape())
			}
			d := got.Cast(ember.Float32).Sub(want).Abs().Max().Item()
			t.Logf("%s in %v on %s: max |ember - torch float32| = %.3g, %.2f%% of max |torch| %.3g", name, c.dt, dev, d, 100*d/big, big)
			if !(d <= c.tol*big) {
				t.Errorf("%s in %v: max |ember - torch| = %g, over %g%% of %g", name, c.dt, d, 100*c.tol, big)
			}
		}
	}
}
