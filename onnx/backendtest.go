package onnx

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/emberml/ember"
	pb "github.com/emberml/ember/onnx/internal/onnxpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Status is the outcome of one backend test case.
type Status int

// Outcomes of RunTestCase.
const (
	Pass Status = iota
	Fail
	Unsupported
)

func (s Status) String() string {
	return [...]string{"PASS", "FAIL", "UNSUPPORTED"}[s]
}

// CaseResult is one ONNX backend test case's outcome.
type CaseResult struct {
	Name   string
	Status Status
	Detail string  // the unsupported op, or what failed
	Worst  float64 // the largest |got - want| over the outputs
}

func (r CaseResult) String() string {
	s := fmt.Sprintf("%-11s %s", r.Status, r.Name)
	switch r.Status {
	case Fail:
		s += ": " + r.Detail
	case Unsupported:
		s += ": " + r.Detail
	case Pass:
		s += fmt.Sprintf(" (max abs err %.3g)", r.Worst)
	}
	return s
}

// Default tolerances of ONNX's backend tests (onnx/backend/test/runner).
const (
	DefaultRTol = 1e-3
	DefaultATol = 1e-7
)

// RunTestCase runs one case of ONNX's backend test suite: a folder with
// model.onnx and test_data_set_*/{input,output}_*.pb, on dev, comparing
// every output with |got - want| <= atol + rtol·|want| (NaN matches NaN).
func RunTestCase(dir string, dev ember.Device, rtol, atol float64) (res CaseResult) {
	res.Name = filepath.Base(dir)
	unsup := func(err error) bool {
		var u *UnsupportedError
		if errors.As(err, &u) {
			res.Status, res.Detail = Unsupported, u.Error()
			return true
		}
		return false
	}
	m, err := Load(filepath.Join(dir, "model.onnx"))
	if err != nil {
		if !unsup(err) {
			res.Status, res.Detail = Fail, err.Error()
		}
		return res
	}
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	sort.Strings(sets)
	if len(sets) == 0 {
		res.Status, res.Detail = Fail, "no test_data_set_* folders"
		return res
	}
	for _, set := range sets {
		ins, err := readSet(set, "input", m.Inputs)
		if err != nil {
			if !unsup(err) {
				res.Status, res.Detail = Fail, err.Error()
			}
			return res
		}
		wants, err := readSet(set, "output", m.Outputs)
		if err != nil {
			if !unsup(err) {
				res.Status, res.Detail = Fail, err.Error()
			}
			return res
		}
		feed := map[string]*ember.Tensor{}
		seqFeed := map[string][]*ember.Tensor{}
		for i, t := range ins {
			if i >= len(m.Inputs) {
				break
			}
			if t.empty {
				continue
			}
			if t.isSeq {
				var ts []*ember.Tensor
				for _, e := range t.seq {
					ts = append(ts, e.To(dev))
				}
				seqFeed[m.Inputs[i].Name] = ts
				continue
			}
			feed[m.Inputs[i].Name] = bf16Bits(t.t, m.Inputs[i]).To(dev)
		}
		var outs map[string]*ember.Tensor
		var seqOuts map[string][]*ember.Tensor
		var runErr error
		err = ember.Try(func() { outs, seqOuts, runErr = m.RunSequences(feed, seqFeed) })
		if err == nil {
			err = runErr
		}
		if err != nil {
			if !unsup(err) {
				res.Status, res.Detail = Fail, err.Error()
			}
			return res
		}
		for i, w := range wants {
			if i >= len(m.Outputs) {
				break
			}
			name := m.Outputs[i].Name
			if w.empty {
				if outs[name] != nil || seqOuts[name] != nil {
					res.Status, res.Detail = Fail, fmt.Sprintf("%s: output %q holds a value, want an empty optional", filepath.Base(set), name)
					return res
				}
				continue
			}
			if w.isSeq {
				got, ok := seqOuts[name]
				if !ok || len(got) != len(w.seq) {
					res.Status, res.Detail = Fail, fmt.Sprintf("%s: output %q: %d tensors, want a sequence of %d", filepath.Base(set), name, len(got), len(w.seq))
					return res
				}
				for j := range got {
					worst, msg := compare(got[j].CPU(), w.seq[j], rtol, atol)
					res.Worst = math.Max(res.Worst, worst)
					if msg != "" {
						res.Status, res.Detail = Fail, fmt.Sprintf("%s: output %q[%d]: %s", filepath.Base(set), name, j, msg)
						return res
					}
				}
				continue
			}
			got := outs[name]
			if got == nil {
				res.Status, res.Detail = Fail, fmt.Sprintf("output %q missing", name)
				return res
			}
			worst, msg := compare(got.CPU(), bf16Bits(w.t, m.Outputs[i]), rtol, atol)
			res.Worst = math.Max(res.Worst, worst)
			if msg != "" {
				res.Status, res.Detail = Fail, fmt.Sprintf("%s: output %q: %s", filepath.Base(set), name, msg)
				return res
			}
		}
	}
	res.Status = Pass
	return res
}

// bf16Bits reads t as bfloat16 bits when the graph declares v bfloat16
// and the test data holds uint16 (widened to Int32 here): ONNX 1.12's
// backend test generator stored its bfloat16 inputs and outputs as UINT16
// tensors of the same bits.
func bf16Bits(t *ember.Tensor, v ValueInfo) *ember.Tensor {
	if v.DType != "bfloat16" || t.DType() != ember.Int32 {
		return t
	}
	vs := t.Int64s()
	bits := make([]uint16, len(vs))
	for i, x := range vs {
		if x < 0 || x > math.MaxUint16 {
			return t
		}
		bits[i] = uint16(x)
	}
	return ember.FromBits(bits, ember.BFloat16, t.Shape())
}

type named struct {
	t     *ember.Tensor
	seq   []*ember.Tensor // a sequence (isSeq)
	isSeq bool
	empty bool // an empty optional
	name  string
}

// readSet reads dir's KIND_*.pb files, as SequenceProto where vs declares
// a sequence and TensorProto otherwise.
func readSet(dir, kind string, vs []ValueInfo) ([]named, error) {
	var res []named
	for i := 0; ; i++ {
		p := filepath.Join(dir, fmt.Sprintf("%s_%d.pb", kind, i))
		if _, err := os.Stat(p); err != nil {
			break
		}
		if i < len(vs) && (vs[i].Kind == "sequence" || vs[i].Kind == "optional") {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			v, err := readValue(b, vs[i].Kind == "optional", p)
			if err != nil {
				return nil, err
			}
			res = append(res, v)
			continue
		}
		if i < len(vs) && vs[i].Kind != "" && vs[i].Kind != "tensor" {
			return nil, &UnsupportedError{OpType: vs[i].Kind + " value", Msg: fmt.Sprintf("test data for %q", vs[i].Name)}
		}
		t, name, err := ReadTensorFile(p)
		if err != nil {
			return nil, err
		}
		res = append(res, named{t: t, name: name})
	}
	return res, nil
}

// readValue reads a serialized SequenceProto of tensors, or an
// OptionalProto (opt) of a tensor or such a sequence (onnx-data.proto).
func readValue(b []byte, opt bool, path string) (named, error) {
	if !opt {
		ts, err := readSequence(b, path)
		return named{seq: ts, isSeq: true}, err
	}
	v := named{empty: true}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return v, formatErr("%s: not an OptionalProto: %v", path, protowire.ParseError(n))
		}
		b = b[n:]
		if typ == protowire.BytesType && num >= 3 && num <= 7 {
			data, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return v, formatErr("%s: not an OptionalProto: %v", path, protowire.ParseError(n))
			}
			b = b[n:]
			switch num {
			case 3:
				tp := &pb.TensorProto{}
				if err := proto.Unmarshal(data, tp); err != nil {
					return v, formatErr("%s: not an OptionalProto: %v", path, err)
				}
				t, err := tensorFromProto(tp, filepath.Dir(path), &budget{left: limitFor(int64(len(data)))})
				if err != nil {
					return v, err
				}
				v = named{t: t}
			case 5:
				ts, err := readSequence(data, path)
				if err != nil {
					return v, err
				}
				v = named{seq: ts, isSeq: true}
			default:
				return v, &UnsupportedError{OpType: "optional value", Msg: fmt.Sprintf("%s: an optional of a map or sparse tensor", path)}
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return v, formatErr("%s: not an OptionalProto: %v", path, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return v, nil
}

// readSequence reads a serialized SequenceProto of tensors (field 3 holds
// the tensors; the other kinds of elements are unsupported).
func readSequence(b []byte, path string) ([]*ember.Tensor, error) {
	bud := &budget{left: limitFor(int64(len(b)))}
	ts := []*ember.Tensor{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, formatErr("%s: not a SequenceProto: %v", path, protowire.ParseError(n))
		}
		b = b[n:]
		if num >= 4 && num <= 7 {
			return nil, &UnsupportedError{OpType: "sequence value", Msg: fmt.Sprintf("%s: a sequence of non-tensors", path)}
		}
		if num == 3 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, formatErr("%s: not a SequenceProto: %v", path, protowire.ParseError(n))
			}
			tp := &pb.TensorProto{}
			if err := proto.Unmarshal(v, tp); err != nil {
				return nil, formatErr("%s: not a SequenceProto: %v", path, err)
			}
			t, err := tensorFromProto(tp, filepath.Dir(path), bud)
			if err != nil {
				return nil, err
			}
			ts = append(ts, t)
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, formatErr("%s: not a SequenceProto: %v", path, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return ts, nil
}

// compare returns the largest absolute error and a message when got and want
// differ (shape, kind or values).
func compare(got, want *ember.Tensor, rtol, atol float64) (float64, string) {
	if !got.Shape().Equal(want.Shape()) {
		return math.Inf(1), fmt.Sprintf("shape %v, want %v", got.Shape(), want.Shape())
	}
	if (want.DType() == ember.Bool) != (got.DType() == ember.Bool) || isFloat(want) != isFloat(got) {
		return math.Inf(1), fmt.Sprintf("dtype %v, want %v", got.DType(), want.DType())
	}
	if !isFloat(want) {
		g, w := got.Int64s(), want.Int64s()
		if want.DType() == ember.Bool {
			gb, wb := got.Bools(), want.Bools()
			for i := range wb {
				if gb[i] != wb[i] {
					return 1, fmt.Sprintf("element %d is %v, want %v", i, gb[i], wb[i])
				}
			}
			return 0, ""
		}
		for i := range w {
			if g[i] != w[i] {
				return math.Abs(float64(g[i] - w[i])), fmt.Sprintf("element %d is %d, want %d", i, g[i], w[i])
			}
		}
		return 0, ""
	}
	g, w := got.Float64s(), want.Float64s()
	worst := 0.0
	bad := -1
	for i := range w {
		if math.IsNaN(w[i]) && math.IsNaN(g[i]) || w[i] == g[i] {
			continue
		}
		d := math.Abs(g[i] - w[i])
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		if d > worst {
			worst = d
		}
		if !(d <= atol+rtol*math.Abs(w[i])) && bad < 0 {
			bad = i
		}
	}
	if bad >= 0 {
		return worst, fmt.Sprintf("element %d is %g, want %g (max abs err %.3g)", bad, g[bad], w[bad], worst)
	}
	return worst, ""
}

// IsTestCase reports whether dir holds a backend test case (model.onnx).
func IsTestCase(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "model.onnx"))
	return err == nil
}

// TestCases lists the test cases under dir: dir itself if it is one, else
// its subfolders that are (sorted).
func TestCases(dir string) []string {
	if IsTestCase(dir) {
		return []string{dir}
	}
	ents, _ := os.ReadDir(dir)
	var res []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() && IsTestCase(p) {
			res = append(res, p)
		}
	}
	return res
}

// Summary formats counts as "N passed, M failed, K unsupported".
func Summary(rs []CaseResult) string {
	var p, f, u int
	for _, r := range rs {
		switch r.Status {
		case Pass:
			p++
		case Fail:
			f++
		default:
			u++
		}
	}
	return fmt.Sprintf("%d passed, %d failed, %d unsupported", p, f, u)
}

var _ = strings.TrimSpace
