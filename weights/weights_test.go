package weights

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

type expect struct {
	Shape []int           `json:"shape"`
	DType string          `json:"dtype"`
	Data  json.RawMessage `json:"data"`
}

func loadExpected(t *testing.T) map[string]expect {
	b, err := os.ReadFile("../testdata/nn/weights.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]expect
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// check compares a loaded tensor to a fixture written by PyTorch.
func check(t *testing.T, name string, got *ember.Tensor, want expect) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: missing", name)
		return
	}
	if !got.Shape().Equal(ember.Shape(want.Shape)) && !(len(want.Shape) == 0 && got.Dim() == 0) {
		t.Errorf("%s: shape %v, want %v", name, got.Shape(), want.Shape)
	}
	// weights.json predates the two-byte dtypes: its f16/bf16 entries name
	// float32, the type they used to widen to; they now load unwidened.
	if got.DType().String() != want.DType && !(got.DType().IsHalf() && want.DType == "float32" && strings.Contains(name, "16")) {
		t.Errorf("%s: dtype %v, want %s", name, got.DType(), want.DType)
	}
	switch want.DType {
	case "bool":
		var w []bool
		json.Unmarshal(want.Data, &w)
		g := got.Bools()
		for i := range w {
			if g[i] != w[i] {
				t.Errorf("%s[%d] = %v, want %v", name, i, g[i], w[i])
			}
		}
	default:
		var w []float64
		json.Unmarshal(want.Data, &w)
		g := got.Cast(ember.Float64).Float64s()
		if len(g) != len(w) {
			t.Fatalf("%s: %d elements, want %d", name, len(g), len(w))
		}
		for i := range w {
			if g[i] != w[i] && !(math.IsNaN(g[i]) && math.IsNaN(w[i])) {
				t.Errorf("%s[%d] = %v, want %v", name, i, g[i], w[i])
			}
		}
	}
}

func TestLoadPyTorchFixture(t *testing.T) {
	want := loadExpected(t)
	got, err := LoadPyTorch("../testdata/nn/weights.pth")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d tensors, want %d: %v", len(got), len(want), Keys(got))
	}
	for k, w := range want {
		check(t, k, got[k], w)
	}
}

func TestLoadSafetensorsFixture(t *testing.T) {
	want := loadExpected(t)
	got, err := LoadSafetensors("../testdata/nn/weights.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	for k, w := range want {
		if strings.HasPrefix(k, "base_") {
			continue
		}
		check(t, k, got[k], w)
	}
	data, _ := os.ReadFile("../testdata/nn/weights.safetensors")
	_, meta, err := ParseSafetensors(data)
	if err != nil || meta["format"] != "pt" {
		t.Errorf("metadata %v, %v; want format=pt", meta, err)
	}
}

func TestLoadPyTorchNestedCheckpoint(t *testing.T) {
	got, err := LoadPyTorch("../testdata/nn/checkpoint.pth")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["model.a.weight"] == nil {
		t.Fatalf("keys %v, want [model.a.weight]", Keys(got))
	}
	check(t, "model.a.weight", got["model.a.weight"], loadExpected(t)["f32"])
}

func TestSafetensorsRoundTrip(t *testing.T) {
	in := map[string]*ember.Tensor{
		"a": ember.FromSlice([]float32{1, 2, 3, 4, 5, 6}, ember.Shape{2, 3}).T(),
		"b": ember.FromSlice([]int64{-1, 1 << 50}, nil),
		"c": ember.FromSlice([]bool{true, false}, nil),
		"d": ember.Scalar(1.25, ember.Dtype(ember.Float64)),
		"e": ember.FromSlice([]int32{7}, nil),
	}
	p := filepath.Join(t.TempDir(), "x.safetensors")
	if err := SaveSafetensors(p, in); err != nil {
		t.Fatal(err)
	}
	// readable by all as torch.save's files are, not 0600 as the temporary
	// file it was renamed from
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("saved file mode %v (%v), want -rw-r--r--", st.Mode(), err)
	}
	raw, _ := os.ReadFile(p)
	hl := binary.LittleEndian.Uint64(raw)
	if (8+hl)%8 != 0 {
		t.Errorf("data section at %d, not 8-aligned", 8+hl)
	}
	// The header is what the reference writer produces for these tensors.
	if !bytes.Contains(raw, []byte(`"a":{"data_offsets":[0,24],"dtype":"F32","shape":[3,2]}`)) {
		t.Errorf("header %s", raw[8:8+hl])
	}
	out, err := LoadSafetensors(p)
	if err != nil {
		t.Fatal(err)
	}
	if g := out["a"].Float32s(); g[0] != 1 || g[1] != 4 || g[2] != 2 || g[5] != 6 {
		t.Errorf("a = %v, want transposed [1 4 2 5 3 6]", g)
	}
	if g := out["b"].Int64s(); g[1] != 1<<50 {
		t.Errorf("b = %v", g)
	}
	if g := out["c"].Bools(); !g[0] || g[1] {
		t.Errorf("c = %v", g)
	}
	if out["d"].Dim() != 0 || out["d"].Item() != 1.25 || out["d"].DType() != ember.Float64 {
		t.Errorf("d = %v", out["d"])
	}
	if out["e"].DType() != ember.Int32 {
		t.Errorf("e dtype %v", out["e"].DType())
	}
}

func stFile(hdr string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(hdr)))
	b.WriteString(hdr)
	b.Write(data)
	return b.Bytes()
}

func TestSafetensorsRejects(t *testing.T) {
	huge := make([]byte, 8)
	binary.LittleEndian.PutUint64(huge, 1<<62)
	cases := map[string][]byte{
		"short":       {1, 2, 3},
		"header cap":  huge,
		"past end":    stFile(`{}`, nil)[:9],
		"not json":    stFile(`{x`, nil),
		"not object":  stFile(`[1]`, nil),
		"dtype":       stFile(`{"a":{"dtype":"Q8","shape":[1],"data_offsets":[0,1]}}`, []byte{0}),
		"size":        stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)),
		"offsets":     stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 4)),
		"reversed":    stFile(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[1,0]}}`, make([]byte, 1)),
		"overlap":     stFile(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}`, make([]byte, 3)),
		"hole":        stFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, make([]byte, 2)),
		"trailing":    stFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, make([]byte, 2)),
		"negative":    stFile(`{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}}`, nil),
		"overflow":    stFile(`{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, nil),
		"unknown key": stFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1}}`, []byte{0}),
		"metadata":    stFile(`{"__metadata__":{"a":1}}`, nil),
	}
	for name, data := range cases {
		_, _, err := ParseSafetensors(data)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if _, ok := err.(*FormatError); !ok {
			t.Errorf("%s: error %T %v, want *FormatError", name, err, err)
		}
	}
}

func TestPyTorchRejects(t *testing.T) {
	good, err := os.ReadFile("../testdata/nn/weights.pth")
	if err != nil {
		t.Fatal(err)
	}
	// Every truncation of a valid file is an error, never a panic.
	for n := 0; n < len(good); n += 97 {
		if _, err := ParsePyTorch(good[:n]); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
	if _, err := ParsePyTorch([]byte{0x80, 0x02, 0x8a, 0x0a}); err == nil || !strings.Contains(err.Error(), "legacy") {
		t.Errorf("legacy file: %v", err)
	}
}

func TestScanPickle(t *testing.T) {
	ok := []byte("\x80\x02}q\x00X\x01\x00\x00\x00aK\x01s.")
	if err := scanPickle(ok); err != nil {
		t.Errorf("valid pickle: %v", err)
	}
	for name, p := range map[string][]byte{
		"binbytes8 huge": []byte("\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\x7f."),
		"frame huge":     []byte("\x80\x04\x95\xff\xff\xff\xff\x00\x00\x00\x00."),
		"binunicode":     []byte("X\x10\x00\x00\x00ab."),
		"no stop":        []byte("\x80\x02N"),
		"bad opcode":     []byte("\xff."),
		"line":           []byte("cos\nsystem"),
	} {
		if err := scanPickle(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestHalf(t *testing.T) {
	for h, want := range map[uint16]float32{0x3c00: 1, 0xc000: -2, 0x7bff: 65504, 0x0001: 5.9604645e-08, 0x8000: float32(math.Copysign(0, -1)), 0x7c00: float32(math.Inf(1))} {
		if got := half(h); got != want || math.Signbit(float64(got)) != math.Signbit(float64(want)) {
			t.Errorf("half(%#04x) = %v, want %v", h, got, want)
		}
	}
	if !math.IsNaN(float64(half(0x7e00))) {
		t.Error("half(0x7e00) is not NaN")
	}
}

func zipWith(t testing.TB, files map[string][]byte) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	zw.Close()
	return b.Bytes()
}

func TestPyTorchRefusesGlobals(t *testing.T) {
	// os.system is never called: it is an opaque object, and so is what
	// "calling" it gives
	evil := zipWith(t, map[string][]byte{"a/data.pkl": []byte("cos\nsystem\n(S'touch /tmp/ember-pwned'\ntR.")})
	_, err := ParsePyTorch(evil)
	if err == nil || !strings.Contains(err.Error(), "top-level object is a pickled os.system, not a dict of tensors") {
		t.Errorf("err = %v, want os.system refused", err)
	}
	if _, err := os.Stat("/tmp/ember-pwned"); err == nil {
		t.Error("os.system ran")
	}
	evil = zipWith(t, map[string][]byte{"a/data.pkl": []byte("(dS'w'\ncos\nsystem\n(S'touch /tmp/ember-pwned'\ntRs.")})
	if m, err := ParsePyTorch(evil); err != nil || len(m) != 0 {
		t.Errorf("a dict holding os.system('…'): %v %v, want it skipped", m, err)
	}
	// A storage claiming more elements than its record holds.
	pkl := "\x80\x02}X\x01\x00\x00\x00actorch._utils\n_rebuild_tensor_v2\n(ctorch\nFloatStorage\n" +
		"(X\x07\x00\x00\x00storageq\x00h\x00X\x01\x00\x00\x000X\x03\x00\x00\x00cpuJ\x00\x00\x00\x10tQK\x00K\x02\x85K\x01\x85\x89NtRs."
	// fix the persistent id: ('storage', FloatStorage, '0', 'cpu', numel)
	pkl = strings.Replace(pkl, "(ctorch\nFloatStorage\n(X\x07\x00\x00\x00storageq\x00h\x00", "(X\x07\x00\x00\x00storagectorch\nFloatStorage\n", 1)
	_, err = ParsePyTorch(zipWith(t, map[string][]byte{"a/data.pkl": []byte(pkl), "a/data/0": make([]byte, 8)}))
	if err == nil || !strings.Contains(err.Error(), "its record holds 8") {
		t.Errorf("err = %v, want a storage size mismatch", err)
	}
}

// What PyTorch 1.13 writes for a whole module and for complex, quantized
// and sparse tensors (testdata/gen_pth_fixtures.py) is refused with an
// error saying so and what to save instead, not "global ... is not
// allowed".
func TestPyTorchUnsupportedSaysWhat(t *testing.T) {
	for file, want := range map[string]string{
		"module.pth":         "top-level object is a pickled torch.nn.modules.linear.Linear, not a dict of tensors (for a model saved whole with torch.save(model), save model.state_dict() instead)",
		"module_in_dict.pth": `key "model" is a pickled torch.nn.modules.linear.Linear holding tensors, which are not read`,
		"complex.pth":        "global torch.ComplexFloatStorage: complex tensors are not supported",
		"quantized.pth":      "global torch._utils._rebuild_qtensor: quantized tensors are not supported",
		"sparse.pth":         "global torch._utils._rebuild_sparse_tensor: sparse, nested and other tensors that are not strided are not supported",
	} {
		path := filepath.Join("..", "testdata", "pth", file)
		_, err := LoadPyTorch(path)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Path != path || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant a *FormatError containing %q", file, err, want)
		}
	}
}

// A checkpoint holding Python objects beside its state dict (an
// argparse.Namespace, NumPy scalars, torch.Size, a dtype, a device:
// testdata/gen_pth_fixtures.py) loads its tensors; the objects, holding
// none, are skipped without running anything. Each used to fail the whole
// load ("global argparse.Namespace is not allowed").
func TestPyTorchSkipsPythonObjects(t *testing.T) {
	m, err := LoadPyTorch(filepath.Join("..", "testdata", "pth", "extras.pth"))
	if err != nil {
		t.Fatal(err)
	}
	if ks := strings.Join(Keys(m), " "); ks != "state_dict.fc.bias state_dict.fc.weight" {
		t.Fatalf("keys %s", ks)
	}
	if w, b := m["state_dict.fc.weight"], m["state_dict.fc.bias"]; fmt.Sprint(w.Shape(), w.Float32s(), b.Float32s()) != "[2, 2] [1 2 3 4] [0.5 -0.5]" {
		t.Errorf("weight %v, bias %v", w, b)
	}
}

// WriteSafetensors to a nil writer is an error, not a nil dereference.
func TestWriteSafetensorsNilWriter(t *testing.T) {
	if err := WriteSafetensors(nil, map[string]*ember.Tensor{"a": ember.Ones(ember.Shape{2})}, nil); err == nil {
		t.Error("nil writer accepted")
	}
}

// Tensors in lists and tuples (testdata/gen_pth_fixtures.py) load under
// index keys, as nn.ModuleList names its entries; they were dropped
// without a word, and a top-level list was refused.
func TestPyTorchListsAndTuples(t *testing.T) {
	m, err := LoadPyTorch(filepath.Join("..", "testdata", "pth", "lists.pth"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k, v := range m {
		got[k] = fmt.Sprint(v.DType(), v.Shape(), v.Float64s())
	}
	want := map[string]string{
		"anchors.0": "float32 [2] [1 2]", "anchors.1": "float32 [1] [3]",
		"pair.0": "int64 [1] [4]", "pair.1.w": "float32 [1, 1] [5]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	m, err = LoadPyTorch(filepath.Join("..", "testdata", "pth", "toplist.pth"))
	if err != nil || len(m) != 2 || fmt.Sprint(m["0"].Float64s(), m["1"].Int64s()) != "[1] [2 3]" {
		t.Errorf("top-level list: %v %v", m, err)
	}
}
