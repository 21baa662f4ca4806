// Package npy reads and writes NumPy's .npy files (format versions 1.0, 2.0
// and 3.0) as ember tensors.
//
// Write stores ember's dtypes as NumPy's: Float32 '<f4', Float64 '<f8',
// Float16 '<f2', Int64 '<i8', Int32 '<i4', Bool '|b1' (NumPy has no
// bfloat16: BFloat16 is an error; cast it to Float32, which is exact).
// Read takes those and the other integer types NumPy writes, widening them
// to the ember dtype that holds their values (int8, uint8, int16 and uint16
// to Int32; uint32 and uint64 to Int64), big-endian data, and Fortran
// order. The complex, string and object dtypes are a *FormatError.
//
// Files are treated as hostile: the header is at most MaxHeader bytes, the
// shape must be a tuple of non-negative integers, and the data is read as it
// arrives, so a header that claims more elements than the input holds is an
// error after reading what the input has, never a large allocation.
package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/emberml/ember"
)

// MaxHeader bounds the header's length (NumPy itself writes short headers).
const MaxHeader = 1 << 16

var magic = []byte("\x93NUMPY")

// FormatError is a malformed .npy file.
type FormatError struct{ Msg string }

func (e *FormatError) Error() string { return "npy: " + e.Msg }

func bad(f string, a ...any) error { return &FormatError{Msg: fmt.Sprintf(f, a...)} }

// ReadFile reads a .npy file onto the CPU.
func ReadFile(path string) (*ember.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(bufio.NewReader(f))
}

// WriteFile writes t to path as a .npy file.
func WriteFile(path string, t *ember.Tensor) error {
	var buf bytes.Buffer
	if err := Write(&buf, t); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

type header struct {
	descr   string
	fortran bool
	shape   []int
}

// Read reads one .npy array from r onto the CPU.
func Read(r io.Reader) (*ember.Tensor, error) {
	if r == nil {
		return nil, errors.New("npy: nil reader")
	}
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil {
		return nil, bad("short file: %v", err)
	}
	if !bytes.Equal(pre[:6], magic) {
		return nil, bad("not a .npy file (bad magic)")
	}
	var hlen int
	switch pre[6] {
	case 1:
		b := make([]byte, 2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, bad("short header: %v", err)
		}
		hlen = int(binary.LittleEndian.Uint16(b))
	case 2, 3:
		b := make([]byte, 4)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, bad("short header: %v", err)
		}
		h := binary.LittleEndian.Uint32(b)
		if h > MaxHeader {
			return nil, bad("header of %d bytes, more than %d", h, MaxHeader)
		}
		hlen = int(h)
	default:
		return nil, bad("unknown format version %d.%d", pre[6], pre[7])
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, bad("short header: %v", err)
	}
	h, err := parseHeader(string(hb))
	if err != nil {
		return nil, err
	}
	kind, size, order, err := parseDescr(h.descr)
	if err != nil {
		return nil, err
	}
	n := int64(1)
	for _, d := range h.shape {
		if d > 0 && n > math.MaxInt64/int64(size)/int64(d) {
			return nil, bad("shape %v overflows", h.shape)
		}
		n *= int64(d)
	}
	need := n * int64(size)
	data, err := io.ReadAll(io.LimitReader(r, need))
	if err != nil {
		return nil, bad("reading data: %v", err)
	}
	if int64(len(data)) != need {
		return nil, bad("shape %v needs %d bytes of data, the file has %d", h.shape, need, len(data))
	}
	t, err := decode(data, kind, size, order, int(n))
	if err != nil {
		return nil, err
	}
	shape := ember.Shape(h.shape)
	if !h.fortran {
		return t.Reshape(shape...), nil
	}
	rev := make([]int, len(shape))
	perm := make([]int, len(shape))
	for i := range shape {
		rev[i] = shape[len(shape)-1-i]
		perm[i] = len(shape) - 1 - i
	}
	return t.Reshape(rev...).Permute(perm...).Contiguous(), nil
}

func parseDescr(d string) (kind byte, size int, order binary.ByteOrder, err error) {
	if len(d) < 3 {
		return 0, 0, nil, bad("dtype %q", d)
	}
	order = binary.LittleEndian
	switch d[0] {
	case '<', '|', '=':
	case '>':
		order = binary.BigEndian
	default:
		return 0, 0, nil, bad("dtype %q", d)
	}
	kind = d[1]
	size, e := strconv.Atoi(d[2:])
	ok := e == nil
	switch kind {
	case 'f':
		ok = ok && (size == 2 || size == 4 || size == 8)
	case 'i', 'u':
		ok = ok && (size == 1 || size == 2 || size == 4 || size == 8)
	case 'b':
		ok = ok && size == 1
	default:
		ok = false
	}
	if !ok {
		return 0, 0, nil, bad("unsupported dtype %q (ember reads float16/32/64, integers and bool)", d)
	}
	return kind, size, order, nil
}

func decode(b []byte, kind byte, size int, o binary.ByteOrder, n int) (*ember.Tensor, error) {
	u := func(i int) uint64 {
		switch size {
		case 1:
			return uint64(b[i])
		case 2:
			return uint64(o.Uint16(b[2*i:]))
		case 4:
			return uint64(o.Uint32(b[4*i:]))
		}
		return o.Uint64(b[8*i:])
	}
	switch {
	case kind == 'f' && size == 2:
		v := make([]uint16, n)
		for i := range v {
			v[i] = uint16(u(i))
		}
		return ember.FromBits(v, ember.Float16, nil), nil
	case kind == 'f' && size == 4:
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(uint32(u(i)))
		}
		return ember.FromSlice(v, nil), nil
	case kind == 'f':
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Float64frombits(u(i))
		}
		return ember.FromSlice(v, nil), nil
	case kind == 'b':
		v := make([]bool, n)
		for i := range v {
			v[i] = b[i] != 0
		}
		return ember.FromSlice(v, nil), nil
	case kind == 'i' && size == 8 || kind == 'u' && size >= 4:
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(u(i))
		}
		if kind == 'u' && size == 8 {
			for _, x := range v {
				if x < 0 {
					return nil, bad("uint64 value beyond int64's range")
				}
			}
		}
		return ember.FromSlice(v, nil), nil
	}
	v := make([]int32, n)
	for i := range v {
		x := u(i)
		switch {
		case kind == 'u':
			v[i] = int32(x)
		case size == 1:
			v[i] = int32(int8(x))
		case size == 2:
			v[i] = int32(int16(x))
		default:
			v[i] = int32(uint32(x))
		}
	}
	return ember.FromSlice(v, nil), nil
}

// parseHeader reads the Python dict literal NumPy writes:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
func parseHeader(s string) (header, error) {
	var h header
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return h, bad("header is not a dict: %.60q", s)
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	seen := map[string]bool{}
	for s != "" {
		key, rest, err := pyString(s)
		if err != nil {
			return h, err
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, ":") {
			return h, bad("header: expected ':' after %q", key)
		}
		rest = strings.TrimSpace(rest[1:])
		if seen[key] {
			return h, bad("header: key %q twice", key)
		}
		seen[key] = true
		switch key {
		case "descr":
			h.descr, rest, err = pyString(rest)
		case "fortran_order":
			switch {
			case strings.HasPrefix(rest, "True"):
				h.fortran, rest = true, rest[4:]
			case strings.HasPrefix(rest, "False"):
				rest = rest[5:]
			default:
				err = bad("header: fortran_order is not True or False")
			}
		case "shape":
			h.shape, rest, err = pyTuple(rest)
		default:
			err = bad("header: unknown key %q", key)
		}
		if err != nil {
			return h, err
		}
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(rest, ",") {
			rest = strings.TrimSpace(rest[1:])
		} else if rest != "" {
			return h, bad("header: expected ',' at %.20q", rest)
		}
		s = rest
	}
	if !seen["descr"] || !seen["shape"] {
		return h, bad("header lacks descr or shape")
	}
	return h, nil
}

func pyString(s string) (string, string, error) {
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') {
		return "", "", bad("header: expected a string at %.20q", s)
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", "", bad("header: unterminated string")
	}
	return s[1 : 1+end], s[2+end:], nil
}

func pyTuple(s string) ([]int, string, error) {
	if !strings.HasPrefix(s, "(") {
		return nil, "", bad("header: shape is not a tuple")
	}
	end := strings.IndexByte(s, ')')
	if end < 0 {
		return nil, "", bad("header: unterminated shape")
	}
	shape := []int{}
	for _, f := range strings.Split(s[1:end], ",") {
		f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "L"))
		if f == "" {
			continue
		}
		d, err := strconv.ParseInt(f, 10, 64)
		if err != nil || d < 0 || d > math.MaxInt32*int64(1<<16) {
			return nil, "", bad("header: bad dimension %q", f)
		}
		shape = append(shape, int(d))
	}
	return shape, s[end+1:], nil
}

// Write writes t (from any device) as a .npy (version 1.0) array.
func Write(w io.Writer, t *ember.Tensor) error {
	if t == nil {
		return errors.New("npy: nil tensor")
	}
	if w == nil {
		return errors.New("npy: nil writer")
	}
	var descr string
	var data []byte
	le := binary.LittleEndian
	var err error
	err = ember.Try(func() {
		switch t.DType() {
		case ember.Float32:
			descr = "<f4"
			v := t.Float32s()
			data = make([]byte, 4*len(v))
			for i, x := range v {
				le.PutUint32(data[4*i:], math.Float32bits(x))
			}
		case ember.Float64:
			descr = "<f8"
			v := t.Float64s()
			data = make([]byte, 8*len(v))
			for i, x := range v {
				le.PutUint64(data[8*i:], math.Float64bits(x))
			}
		case ember.Float16:
			descr = "<f2"
			v := t.CPU().Bits()
			data = make([]byte, 2*len(v))
			for i, x := range v {
				le.PutUint16(data[2*i:], x)
			}
		case ember.Int64:
			descr = "<i8"
			v := t.Int64s()
			data = make([]byte, 8*len(v))
			for i, x := range v {
				le.PutUint64(data[8*i:], uint64(x))
			}
		case ember.Int32:
			descr = "<i4"
			v := t.Int32s()
			data = make([]byte, 4*len(v))
			for i, x := range v {
				le.PutUint32(data[4*i:], uint32(x))
			}
		case ember.Bool:
			descr = "|b1"
			v := t.Bools()
			data = make([]byte, len(v))
			for i, x := range v {
				if x {
					data[i] = 1
				}
			}
		}
	})
	if err != nil {
		return err
	}
	if t.DType() == ember.BFloat16 {
		return fmt.Errorf("npy: NumPy has no bfloat16; cast the tensor to Float32 (exact) to write it")
	}
	if descr == "" {
		return fmt.Errorf("npy: cannot write dtype %v", t.DType())
	}
	dims := make([]string, t.Dim())
	for i, d := range t.Shape() {
		dims[i] = strconv.Itoa(d)
	}
	sh := strings.Join(dims, ", ")
	if len(dims) == 1 {
		sh += ","
	}
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, sh)
	// pad so that the data starts on a 64-byte boundary, ending in '\n'
	total := len(magic) + 2 + 2 + len(hdr) + 1
	hdr += strings.Repeat(" ", (64-total%64)%64) + "\n"
	if len(hdr) > math.MaxUint16 {
		return errors.New("npy: header too long")
	}
	var buf bytes.Buffer
	buf.Write(magic)
	buf.Write([]byte{1, 0})
	binary.Write(&buf, le, uint16(len(hdr)))
	buf.WriteString(hdr)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
