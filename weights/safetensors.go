package weights

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/emberml/ember"
)

// MaxSafetensorsHeader is the largest JSON header accepted, as in the
// reference implementation (100 MB).
const MaxSafetensorsHeader = 100_000_000

var stDTypes = map[string]elemKind{
	"F64": kF64, "F32": kF32, "F16": kF16, "BF16": kBF16,
	"I64": kI64, "I32": kI32, "I16": kI16, "I8": kI8, "U8": kU8, "U32": kU32,
	"BOOL": kBool,
}

type stEntry struct {
	DType   string
	Shape   []int64
	Offsets [2]int64
}

// parseHeader walks the header's top-level object, calling f with each key
// and the decoder positioned at its value, which f must consume.
func parseHeader(hdr []byte, f func(name string, dec *json.Decoder) error) error {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("header is not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("header is not a JSON object: %v", err)
		}
		name, ok := tok.(string)
		if !ok {
			return fmt.Errorf("header is not a JSON object")
		}
		if err := f(name, dec); err != nil {
			return err
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return fmt.Errorf("header is not a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the header's JSON object")
	}
	return nil
}

// parseEntry reads {"dtype": s, "shape": [ints], "data_offsets": [a, b]}
// with each field exactly once, no other field, integers written as
// integers, and exactly two offsets.
func parseEntry(dec *json.Decoder) (e stEntry, err error) {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return e, fmt.Errorf("not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return e, err
		}
		key, _ := tok.(string)
		if seen[key] {
			return e, fmt.Errorf("field %q appears twice", key)
		}
		seen[key] = true
		switch key {
		case "dtype":
			tok, err := dec.Token()
			s, ok := tok.(string)
			if err != nil || !ok {
				return e, fmt.Errorf("dtype is not a string")
			}
			e.DType = s
		case "shape":
			if e.Shape, err = intArray(dec, "shape"); err != nil {
				return e, err
			}
			if e.Shape == nil {
				e.Shape = []int64{}
			}
		case "data_offsets":
			offs, err := intArray(dec, "data_offsets")
			if err != nil {
				return e, err
			}
			if len(offs) != 2 {
				return e, fmt.Errorf("data_offsets holds %d numbers, want 2", len(offs))
			}
			e.Offsets = [2]int64{offs[0], offs[1]}
		default:
			return e, fmt.Errorf("unknown field %q", key)
		}
	}
	if _, err := dec.Token(); err != nil {
		return e, err
	}
	for _, k := range []string{"dtype", "shape", "data_offsets"} {
		if !seen[k] {
			return e, fmt.Errorf("no %s field", k)
		}
	}
	return e, nil
}

// maxRank bounds a shape's length.
const maxRank = 64

func intArray(dec *json.Decoder, what string) ([]int64, error) {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, fmt.Errorf("%s is not an array", what)
	}
	var out []int64
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		num, ok := tok.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%s holds %v, not an integer", what, tok)
		}
		v, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s holds %s, not a 64-bit integer", what, num)
		}
		if len(out) == maxRank {
			return nil, fmt.Errorf("%s holds more than %d numbers", what, maxRank)
		}
		out = append(out, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// LoadSafetensors reads every tensor of a .safetensors file onto the CPU.
func LoadSafetensors(path string) (map[string]*ember.Tensor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, _, err := ParseSafetensors(data)
	if err != nil {
		if fe, ok := err.(*FormatError); ok {
			fe.Path = path
		}
		return nil, err
	}
	return m, nil
}

// ParseSafetensors decodes a safetensors file held in memory. It returns the
// tensors and the header's __metadata__ strings (nil when absent).
func ParseSafetensors(data []byte) (map[string]*ember.Tensor, map[string]string, error) {
	bad := func(format string, a ...any) error {
		return &FormatError{Format: "safetensors", Msg: fmt.Sprintf(format, a...)}
	}
	if len(data) < 8 {
		return nil, nil, bad("file of %d bytes is too short for the 8-byte header length", len(data))
	}
	hlen := binary.LittleEndian.Uint64(data)
	if hlen > MaxSafetensorsHeader {
		return nil, nil, bad("header length %d exceeds the %d-byte limit", hlen, MaxSafetensorsHeader)
	}
	if hlen > uint64(len(data)-8) {
		return nil, nil, bad("header length %d runs past the end of the %d-byte file", hlen, len(data))
	}
	hdr := data[8 : 8+hlen]
	if len(hdr) == 0 || hdr[0] != '{' {
		return nil, nil, bad("header does not start with '{'")
	}
	// The reference parser reads the header as a UTF-8 string; Go's JSON
	// would replace bad bytes in a name, and two parsers must never read
	// one file differently.
	if !utf8.Valid(hdr) {
		return nil, nil, bad("header is not valid UTF-8")
	}
	body := data[8+hlen:]
	bud := newBudget(int64(len(data)))
	var meta map[string]string
	type span struct {
		name       string
		begin, end int64
	}
	var spans []span
	entries := map[string]stEntry{}
	err := parseHeader(hdr, func(name string, dec *json.Decoder) error {
		if name == "__metadata__" {
			if meta != nil {
				return fmt.Errorf("__metadata__ appears twice")
			}
			if err := dec.Decode(&meta); err != nil {
				return fmt.Errorf("__metadata__ is not a string-to-string object: %v", err)
			}
			if meta == nil {
				meta = map[string]string{}
			}
			return nil
		}
		if _, dup := entries[name]; dup {
			return fmt.Errorf("tensor %q appears twice", name)
		}
		e, err := parseEntry(dec)
		if err != nil {
			return fmt.Errorf("tensor %q: %v", name, err)
		}
		k, ok := stDTypes[e.DType]
		if !ok {
			return fmt.Errorf("tensor %q: unsupported dtype %q", name, e.DType)
		}
		n := int64(1)
		for _, d := range e.Shape {
			if d < 0 {
				return fmt.Errorf("tensor %q: negative dimension in shape %v", name, e.Shape)
			}
			if d != 0 && n > (1<<60)/int64(k.size())/d {
				return fmt.Errorf("tensor %q: shape %v overflows", name, e.Shape)
			}
			n *= d
		}
		b, end := e.Offsets[0], e.Offsets[1]
		if b < 0 || end < b || end > int64(len(body)) {
			return fmt.Errorf("tensor %q: data_offsets [%d, %d] outside the %d-byte data section", name, b, end, len(body))
		}
		if end-b != n*int64(k.size()) {
			return fmt.Errorf("tensor %q: %s shape %v needs %d bytes, data_offsets give %d", name, e.DType, e.Shape, n*int64(k.size()), end-b)
		}
		if err := bud.tensor(); err != nil {
			return err
		}
		if err := bud.charge(n*int64(k.dtype().Size())+int64(len(name)), fmt.Sprintf("tensor %q", name)); err != nil {
			return err
		}
		entries[name] = e
		spans = append(spans, span{name, b, end})
		return nil
	})
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	// The data section must be covered exactly, with no holes or overlaps.
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].begin != spans[j].begin {
			return spans[i].begin < spans[j].begin
		}
		return spans[i].end < spans[j].end
	})
	pos := int64(0)
	for _, s := range spans {
		if s.begin != pos {
			return nil, nil, bad("tensor %q: data starts at %d, expected %d (hole or overlap)", s.name, s.begin, pos)
		}
		pos = s.end
	}
	if pos != int64(len(body)) {
		return nil, nil, bad("data section has %d bytes, tensors cover %d", len(body), pos)
	}
	out := make(map[string]*ember.Tensor, len(entries))
	for name, e := range entries {
		shape := make(ember.Shape, len(e.Shape))
		for i, d := range e.Shape {
			shape[i] = int(d)
		}
		out[name] = decode(stDTypes[e.DType], body[e.Offsets[0]:e.Offsets[1]], shape)
	}
	return out, meta, nil
}

// SaveSafetensors writes tensors to path in the safetensors format, keys in
// sorted order. The file is written to a temporary name and renamed; it is
// readable by all (mode 0644, as a file Python creates under the usual
// umask), not only by its owner as a temporary file is.
func SaveSafetensors(path string, tensors map[string]*ember.Tensor) error {
	return SaveSafetensorsMeta(path, tensors, nil)
}

// SaveSafetensorsMeta is SaveSafetensors with __metadata__ strings.
func SaveSafetensorsMeta(path string, tensors map[string]*ember.Tensor, meta map[string]string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := WriteSafetensors(tmp, tensors, meta); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// WriteSafetensors writes tensors (and optional metadata) in the
// safetensors format to w. Tensors may live on any device with data.
func WriteSafetensors(w io.Writer, tensors map[string]*ember.Tensor, meta map[string]string) error {
	if w == nil {
		return fmt.Errorf("safetensors: nil writer")
	}
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		if n == "__metadata__" {
			return fmt.Errorf("safetensors: the key __metadata__ is reserved")
		}
		names = append(names, n)
	}
	sort.Strings(names)
	hdr := map[string]any{}
	if len(meta) > 0 {
		hdr["__metadata__"] = meta
	}
	blobs := make([][]byte, len(names))
	var off int64
	for i, n := range names {
		t := tensors[n]
		if t == nil {
			return fmt.Errorf("safetensors: tensor %q is nil", n)
		}
		b, dt, err := encode(t)
		if err != nil {
			return fmt.Errorf("safetensors: tensor %q: %w", n, err)
		}
		blobs[i] = b
		shape := t.Shape()
		if shape == nil {
			shape = ember.Shape{}
		}
		hdr[n] = map[string]any{"dtype": dt, "shape": shape, "data_offsets": [2]int64{off, off + int64(len(b))}}
		off += int64(len(b))
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	for len(js)%8 != 0 { // align the data section to 8 bytes, as the reference writer does
		js = append(js, ' ')
	}
	var lenb [8]byte
	binary.LittleEndian.PutUint64(lenb[:], uint64(len(js)))
	if _, err := w.Write(lenb[:]); err != nil {
		return err
	}
	if _, err := w.Write(js); err != nil {
		return err
	}
	for _, b := range blobs {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// encode returns t's elements little-endian and the safetensors dtype name.
func encode(t *ember.Tensor) (b []byte, dtype string, err error) {
	err = ember.Try(func() {
		switch t.DType() {
		case ember.Float32:
			v := t.Float32s()
			b = make([]byte, 4*len(v))
			for i, x := range v {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
			}
			dtype = "F32"
		case ember.Float64:
			v := t.Float64s()
			b = make([]byte, 8*len(v))
			for i, x := range v {
				binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
			}
			dtype = "F64"
		case ember.Int64:
			v := t.Int64s()
			b = make([]byte, 8*len(v))
			for i, x := range v {
				binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
			}
			dtype = "I64"
		case ember.Int32:
			v := t.Int32s()
			b = make([]byte, 4*len(v))
			for i, x := range v {
				binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
			}
			dtype = "I32"
		case ember.Bool:
			v := t.Bools()
			b = make([]byte, len(v))
			for i, x := range v {
				if x {
					b[i] = 1
				}
			}
			dtype = "BOOL"
		case ember.BFloat16, ember.Float16:
			v := t.Bits()
			b = make([]byte, 2*len(v))
			for i, x := range v {
				binary.LittleEndian.PutUint16(b[2*i:], x)
			}
			dtype = "BF16"
			if t.DType() == ember.Float16 {
				dtype = "F16"
			}
		default:
			panic(fmt.Errorf("unsupported dtype %v", t.DType()))
		}
	})
	return
}
