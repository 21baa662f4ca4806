package onnx

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
	pb "github.com/emberml/ember/onnx/internal/onnxpb"
	"google.golang.org/protobuf/proto"
)

type fixTensor struct {
	Shape []int64   `json:"shape"`
	Data  []float64 `json:"data"`
}

// TestRecurrentAgainstTorch runs RNN, GRU and LSTM nodes on the cases of
// testdata/rnn_fixtures.json (gen_rnn_fixtures.py: PyTorch's layers, with
// pack_padded_sequence for sequence_lens) on the CPU and an emulated cuda:0.
func TestRecurrentAgainstTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/rnn_fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Cases []struct {
			Name, Op string
			Attrs    map[string]any
			Inputs   [][2]json.RawMessage
			Outputs  []fixTensor
		}
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if ember.DeviceCount() == 0 {
		restore := cudatest.Use(t)
		defer restore()
	}
	for _, c := range fx.Cases {
		n := &pb.NodeProto{OpType: proto.String(c.Op), Name: proto.String(c.Name)}
		g := &pb.GraphProto{Name: proto.String(c.Name), Node: []*pb.NodeProto{n}}
		for k, v := range c.Attrs {
			a := &pb.AttributeProto{Name: proto.String(k)}
			switch v := v.(type) {
			case string:
				a.Type, a.S = pb.AttributeProto_STRING.Enum(), []byte(v)
			case float64:
				if k == "clip" {
					a.Type, a.F = pb.AttributeProto_FLOAT.Enum(), proto.Float32(float32(v))
				} else {
					a.Type, a.I = pb.AttributeProto_INT.Enum(), proto.Int64(int64(v))
				}
			case []any:
				a.Type = pb.AttributeProto_STRINGS.Enum()
				for _, s := range v {
					a.Strings = append(a.Strings, []byte(s.(string)))
				}
			}
			n.Attribute = append(n.Attribute, a)
		}
		feed := map[string]*ember.Tensor{}
		for _, in := range c.Inputs {
			var name string
			var ft *fixTensor
			if err := json.Unmarshal(in[0], &name); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(in[1], &ft); err != nil {
				t.Fatal(err)
			}
			if ft == nil {
				n.Input = append(n.Input, "")
				continue
			}
			n.Input = append(n.Input, name)
			vinfo := vi(name, ft.Shape...)
			if name == "sequence_lens" {
				vinfo.Type.GetTensorType().ElemType = proto.Int32(tInt32)
				v := make([]int32, len(ft.Data))
				for i, x := range ft.Data {
					v[i] = int32(x)
				}
				feed[name] = ember.FromSlice(v, ember.Shape{len(v)})
			} else {
				feed[name] = ember.FromSlice(toF32(ft.Data), toShape(ft.Shape))
			}
			g.Input = append(g.Input, vinfo)
		}
		outs := []string{"Y", "Y_h", "Y_c"}[:len(c.Outputs)]
		n.Output = outs
		for _, o := range outs {
			g.Output = append(g.Output, untyped(o))
		}
		m, err := Parse(model(g))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, dev := range []ember.Device{ember.CPU, ember.CUDA(0)} {
			f := map[string]*ember.Tensor{}
			for k, v := range feed {
				f[k] = v.To(dev)
			}
			res, err := m.Run(f)
			if err != nil {
				t.Fatalf("%s on %v: %v", c.Name, dev, err)
			}
			for i, o := range outs {
				want := ember.FromSlice(toF32(c.Outputs[i].Data), toShape(c.Outputs[i].Shape))
				got := res[o].CPU()
				if !got.Shape().Equal(want.Shape()) || !ember.AllClose(got, want, 1e-5, 1e-5) {
					t.Errorf("%s on %v: %s = %v %v, want %v %v", c.Name, dev, o, got.Shape(), got.Float32s(), want.Shape(), want.Float32s())
				}
			}
		}
	}
}

func toF32(v []float64) []float32 {
	r := make([]float32, len(v))
	for i, x := range v {
		r[i] = float32(x)
	}
	return r
}

func toShape(v []int64) ember.Shape {
	r := make(ember.Shape, len(v))
	for i, x := range v {
		r[i] = int(x)
	}
	return r
}
