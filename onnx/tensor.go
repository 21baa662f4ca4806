package onnx

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/emberml/ember"
	pb "github.com/emberml/ember/onnx/internal/onnxpb"
	"google.golang.org/protobuf/proto"
)

// ONNX element types (TensorProto.DataType).
const (
	tFloat    = 1
	tUint8    = 2
	tInt8     = 3
	tUint16   = 4
	tInt16    = 5
	tInt32    = 6
	tInt64    = 7
	tString   = 8
	tBool     = 9
	tFloat16  = 10
	tDouble   = 11
	tUint32   = 12
	tUint64   = 13
	tBfloat16 = 16
)

var dtypeNames = map[int32]string{tFloat: "float32", tUint8: "uint8", tInt8: "int8", tUint16: "uint16", tInt16: "int16",
	tInt32: "int32", tInt64: "int64", tString: "string", tBool: "bool", tFloat16: "float16", tDouble: "float64",
	tUint32: "uint32", tUint64: "uint64", 14: "complex64", 15: "complex128", tBfloat16: "bfloat16"}

func dtypeName(t int32) string {
	if s, ok := dtypeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("type%d", t)
}

// inputType is the ember dtype that holds an input declared with the ONNX
// element type name (as ValueInfo.DType); false when there is none.
func inputType(name string) (ember.DType, bool) {
	for code, n := range dtypeNames {
		if n == name {
			dt, err := emberType(code)
			return dt, err == nil
		}
	}
	return 0, false
}

// emberType maps an ONNX element type to the ember dtype holding it: the
// narrow integer types widen to Int32 (uint32 and uint64 to Int64), which
// keeps their values; float16 and bfloat16 are ember's Float16 and
// BFloat16; strings and complex numbers have no ember dtype.
func emberType(t int32) (ember.DType, error) {
	switch t {
	case tFloat:
		return ember.Float32, nil
	case tDouble:
		return ember.Float64, nil
	case tInt64, tUint32, tUint64:
		return ember.Int64, nil
	case tInt32, tUint8, tInt8, tUint16, tInt16:
		return ember.Int32, nil
	case tBool:
		return ember.Bool, nil
	case tFloat16:
		return ember.Float16, nil
	case tBfloat16:
		return ember.BFloat16, nil
	}
	return 0, &UnsupportedError{OpType: "dtype " + dtypeName(t), Msg: "ember has no " + dtypeName(t) + " tensors"}
}

// budget counts the bytes a parse may still materialise, and the nodes it
// has read (subgraphs included).
type budget struct {
	left  int64
	nodes int
}

func (b *budget) take(n int64, what string) error {
	if n < 0 || n > b.left {
		return formatErr("%s needs %d bytes, more than the load limit allows (onnx.SetLoadLimit)", what, n)
	}
	b.left -= n
	return nil
}

// ReadTensorFile reads a serialized TensorProto (the input_*.pb / output_*.pb
// files of ONNX's backend tests) onto the CPU.
func ReadTensorFile(path string) (*ember.Tensor, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	tp := &pb.TensorProto{}
	if err := proto.Unmarshal(b, tp); err != nil {
		return nil, "", formatErr("%s: not a TensorProto: %v", path, err)
	}
	t, err := tensorFromProto(tp, filepath.Dir(path), &budget{left: limitFor(int64(len(b)))})
	return t, tp.GetName(), err
}

func checkDims(name string, dims []int64) (ember.Shape, int64, error) {
	sh := make(ember.Shape, len(dims))
	n := int64(1)
	for i, d := range dims {
		if d < 0 {
			return nil, 0, formatErr("tensor %q: negative dimension %d", name, d)
		}
		if d > 0 && n > math.MaxInt64/4/d {
			return nil, 0, formatErr("tensor %q: dimensions %v overflow", name, dims)
		}
		n *= d
		sh[i] = int(d)
	}
	return sh, n, nil
}

func elemSize(t int32) int64 {
	switch t {
	case tDouble, tInt64, tUint64:
		return 8
	case tFloat, tInt32, tUint32:
		return 4
	case tUint16, tInt16, tFloat16, tBfloat16:
		return 2
	}
	return 1
}

// tensorFromProto converts an ONNX tensor to a CPU ember tensor, checking
// the data against the dims before allocating anything.
func tensorFromProto(tp *pb.TensorProto, dir string, bud *budget) (*ember.Tensor, error) {
	name := tp.GetName()
	dt, err := emberType(tp.GetDataType())
	if err != nil {
		if u, ok := err.(*UnsupportedError); ok {
			u.Msg = fmt.Sprintf("tensor %q: %s", name, u.Msg)
		}
		return nil, err
	}
	if tp.Segment != nil {
		return nil, &UnsupportedError{OpType: "segmented tensor", Msg: fmt.Sprintf("tensor %q", name)}
	}
	shape, n, err := checkDims(name, tp.GetDims())
	if err != nil {
		return nil, err
	}
	et := tp.GetDataType()
	raw := tp.GetRawData()
	if tp.GetDataLocation() == pb.TensorProto_EXTERNAL {
		raw, err = externalData(tp, dir, n*elemSize(et), bud)
		if err != nil {
			return nil, err
		}
	}
	var count int64
	switch {
	case raw != nil || tp.GetDataLocation() == pb.TensorProto_EXTERNAL:
		if int64(len(raw)) != n*elemSize(et) {
			return nil, formatErr("tensor %q: dims %v need %d bytes of data, it has %d", name, tp.GetDims(), n*elemSize(et), len(raw))
		}
		count = n
	case et == tFloat:
		count = int64(len(tp.FloatData))
	case et == tDouble:
		count = int64(len(tp.DoubleData))
	case et == tInt64:
		count = int64(len(tp.Int64Data))
	case et == tUint32 || et == tUint64:
		count = int64(len(tp.Uint64Data))
	default:
		count = int64(len(tp.Int32Data))
	}
	if count != n {
		return nil, formatErr("tensor %q: dims %v hold %d elements, the data has %d", name, tp.GetDims(), n, count)
	}
	if err := bud.take(n*8+64, fmt.Sprintf("tensor %q", name)); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	switch dt {
	case ember.Float32:
		v := tp.FloatData
		if raw != nil {
			v = make([]float32, n)
			for i := range v {
				v[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
			}
		}
		return ember.FromSlice(append([]float32(nil), v...), shape), nil
	case ember.Float64:
		v := tp.DoubleData
		if raw != nil {
			v = make([]float64, n)
			for i := range v {
				v[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
			}
		}
		return ember.FromSlice(append([]float64(nil), v...), shape), nil
	case ember.Int64:
		v := make([]int64, n)
		for i := range v {
			switch {
			case raw != nil && et == tUint32:
				v[i] = int64(le.Uint32(raw[4*i:]))
			case raw != nil:
				v[i] = int64(le.Uint64(raw[8*i:]))
			case et == tInt64:
				v[i] = tp.Int64Data[i]
			default:
				v[i] = int64(tp.Uint64Data[i])
			}
		}
		return ember.FromSlice(v, shape), nil
	case ember.Float16, ember.BFloat16:
		// raw_data: little-endian bits; int32_data: the bits in each
		// int32's low 16
		v := make([]uint16, n)
		for i := range v {
			if raw != nil {
				v[i] = le.Uint16(raw[2*i:])
			} else {
				v[i] = uint16(tp.Int32Data[i])
			}
		}
		return ember.FromBits(v, dt, shape), nil
	case ember.Bool:
		v := make([]bool, n)
		for i := range v {
			if raw != nil {
				v[i] = raw[i] != 0
			} else {
				v[i] = tp.Int32Data[i] != 0
			}
		}
		return ember.FromSlice(v, shape), nil
	default: // Int32 and the narrow integers
		v := make([]int32, n)
		for i := range v {
			if raw == nil {
				v[i] = tp.Int32Data[i]
				switch et {
				case tUint8:
					v[i] = int32(uint8(v[i]))
				case tInt8:
					v[i] = int32(int8(v[i]))
				case tUint16:
					v[i] = int32(uint16(v[i]))
				case tInt16:
					v[i] = int32(int16(v[i]))
				}
				continue
			}
			switch et {
			case tUint8:
				v[i] = int32(raw[i])
			case tInt8:
				v[i] = int32(int8(raw[i]))
			case tUint16:
				v[i] = int32(le.Uint16(raw[2*i:]))
			case tInt16:
				v[i] = int32(int16(le.Uint16(raw[2*i:])))
			default:
				v[i] = int32(le.Uint32(raw[4*i:]))
			}
		}
		return ember.FromSlice(v, shape), nil
	}
}

// externalData reads a tensor's bytes from the file its external_data names:
// a relative path inside the model's folder (no "..", no absolute paths, no
// symbolic links), with offset and length inside the file.
func externalData(tp *pb.TensorProto, dir string, want int64, bud *budget) ([]byte, error) {
	name := tp.GetName()
	if dir == "" {
		return nil, formatErr("tensor %q has external data; use onnx.Load (which knows the model's folder)", name)
	}
	var loc string
	off, length := int64(0), int64(-1)
	for _, kv := range tp.ExternalData {
		var err error
		switch kv.GetKey() {
		case "location":
			loc = kv.GetValue()
		case "offset":
			off, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		}
		if err != nil || off < 0 {
			return nil, formatErr("tensor %q: bad external data %s=%q", name, kv.GetKey(), kv.GetValue())
		}
	}
	clean := filepath.Clean(filepath.FromSlash(loc))
	if loc == "" || filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return nil, formatErr("tensor %q: external data location %q must be a relative path inside the model's folder", name, loc)
	}
	path := filepath.Join(dir, clean)
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, formatErr("tensor %q: external data: %v", name, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, formatErr("tensor %q: external data %q is not a regular file", name, loc)
	}
	if length < 0 {
		length = fi.Size() - off
	}
	if length != want {
		return nil, formatErr("tensor %q: dims %v need %d bytes, the external data has %d", name, tp.GetDims(), want, length)
	}
	if off > fi.Size() || length > fi.Size()-off {
		return nil, formatErr("tensor %q: external data [%d, %d) is beyond the end of %q (%d bytes)", name, off, off+length, loc, fi.Size())
	}
	// External bytes are the file's own size: they count once against the budget
	// on top of the widened tensor.
	bud.left += length
	if err := bud.take(length, fmt.Sprintf("tensor %q", name)); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, length)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, formatErr("tensor %q: reading external data: %v", name, err)
	}
	return buf, nil
}
