package npy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

var base = []float64{0, 1, -2, 3, 4, 5}

func TestReadNumPyFiles(t *testing.T) {
	for _, tc := range []struct {
		file string
		dt   ember.DType
		abs  bool
	}{
		{"f4", ember.Float32, false}, {"f8", ember.Float64, false}, {"i8", ember.Int64, false}, {"i4", ember.Int32, false},
		{"i2", ember.Int32, false}, {"i1", ember.Int32, false}, {"u1", ember.Int32, true}, {"u2", ember.Int32, true},
		{"u4", ember.Int64, true}, {"u8", ember.Int64, true}, {"fortran", ember.Float32, false}, {"bigendian", ember.Float64, false},
	} {
		x, err := ReadFile(filepath.Join("testdata", tc.file+".npy"))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if x.DType() != tc.dt || !x.Shape().Equal(ember.Shape{2, 3}) {
			t.Fatalf("%s: %v %v", tc.file, x.DType(), x.Shape())
		}
		got := x.Float64s()
		for i, w := range base {
			if tc.abs && w < 0 {
				w = -w
			}
			if got[i] != w {
				t.Fatalf("%s: %v, want %v", tc.file, got, base)
			}
		}
	}
	b, err := ReadFile("testdata/b1.npy")
	if err != nil || b.DType() != ember.Bool || b.Bools()[0] || !b.Bools()[1] {
		t.Fatalf("b1: %v %v", b, err)
	}
	s, err := ReadFile("testdata/scalar.npy")
	if err != nil || s.Dim() != 0 || s.Item() != 2.5 {
		t.Fatalf("scalar: %v %v", s, err)
	}
	e, err := ReadFile("testdata/empty.npy")
	if err != nil || !e.Shape().Equal(ember.Shape{0, 3}) {
		t.Fatalf("empty: %v %v", e, err)
	}
	h, err := ReadFile("testdata/f2.npy")
	if err != nil || h.DType() != ember.Float16 || !ember.Equal(h.Cast(ember.Float32), ember.FromSlice(base, ember.Shape{2, 3}).Cast(ember.Float32)) {
		t.Fatalf("f2: %v %v", h, err)
	}
	// NumPy's float16 bits of 1.5, -0, 65504, 2^-24, +Inf, -Inf, NaN, 0.1
	hard, err := ReadFile("testdata/f2hard.npy")
	if err != nil || !slices.Equal(hard.Bits(), []uint16{15872, 32768, 31743, 1, 31744, 64512, 32256, 11878}) {
		t.Fatalf("f2hard: %v %v", hard, err)
	}
}

// TestWriteReadByNumPy writes every dtype and has NumPy read it back.
func TestWriteReadByNumPy(t *testing.T) {
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	x := ember.FromSlice(base, ember.Shape{2, 3})
	if err := WriteFile(filepath.Join(dir, "bf16.npy"), x.Cast(ember.BFloat16)); err == nil || !strings.Contains(err.Error(), "no bfloat16") {
		t.Errorf("bfloat16: %v", err)
	}
	for _, dt := range []ember.DType{ember.Float32, ember.Float64, ember.Float16, ember.Int64, ember.Int32, ember.Bool} {
		name := filepath.Join(dir, dt.String()+".npy")
		if err := WriteFile(name, x.Cast(dt)); err != nil {
			t.Fatal(err)
		}
		back, err := ReadFile(name)
		if err != nil || !ember.Equal(back, x.Cast(dt)) {
			t.Fatalf("%v: round trip %v %v", dt, back, err)
		}
	}
	if err := WriteFile(filepath.Join(dir, "one.npy"), ember.FromSlice([]float32{7}, ember.Shape{1})); err != nil {
		t.Fatal(err)
	}
	script := `import numpy as np, sys, os
d = sys.argv[1]
for n, dt in [("float32","<f4"),("float64","<f8"),("float16","<f2"),("int64","<i8"),("int32","<i4"),("bool","|b1")]:
    a = np.load(os.path.join(d, n + ".npy"))
    assert a.dtype == np.dtype(dt), (n, a.dtype)
    want = np.array([[0, 1, -2], [3, 4, 5]]).astype(dt)
    assert a.shape == (2, 3) and (a == want).all(), (n, a)
a = np.load(os.path.join(d, "one.npy"))
assert a.shape == (1,) and a[0] == 7
print("ok")`
	out, err := exec.Command(py, "-c", script, dir).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "No module named") {
			t.Skip("no numpy")
		}
		t.Fatalf("numpy: %v\n%s", err, out)
	}
}

func TestHostileNpy(t *testing.T) {
	good, _ := os.ReadFile("testdata/f4.npy")
	hdr := func(h string) []byte {
		b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
		return append(b, h...)
	}
	for name, b := range map[string][]byte{
		"empty":       {},
		"magic":       []byte("PK\x03\x04 not npy"),
		"truncated":   good[:len(good)-3],
		"header":      good[:20],
		"version":     append([]byte("\x93NUMPY\x09\x00"), 0, 0),
		"absurd dims": hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000000), }"),
		"overflow":    hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }"),
		"negative":    hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"),
		"object":      hdr("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"),
		"no shape":    hdr("{'descr': '<f4', 'fortran_order': False}"),
		"not a dict":  hdr("__import__('os')"),
		"dup key":     hdr("{'descr': '<f4', 'descr': '<f8', 'shape': (1,)}"),
		"v2 huge hdr": append([]byte("\x93NUMPY\x02\x00"), 0xff, 0xff, 0xff, 0x7f),
	} {
		_, err := Read(bytes.NewReader(b))
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a *FormatError", name, err)
		}
	}
}

func FuzzRead(f *testing.F) {
	for _, n := range []string{"f4", "i1", "b1", "fortran", "bigendian", "scalar"} {
		b, _ := os.ReadFile("testdata/" + n + ".npy")
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := Read(bytes.NewReader(b))
		if err == nil && x == nil {
			t.Fatal("nil tensor without error")
		}
	})
}

func ExampleWrite() {
	var buf bytes.Buffer
	_ = Write(&buf, ember.FromSlice([]float32{1, 2, 3, 4}, ember.Shape{2, 2}))
	x, _ := Read(&buf)
	fmt.Println(x.Shape(), x.Float32s())
	// Output: [2, 2] [1 2 3 4]
}

// TestNilArguments: a nil reader, writer or tensor is an error.
func TestNilArguments(t *testing.T) {
	if _, err := Read(nil); err == nil {
		t.Error("Read(nil) succeeded")
	}
	if err := Write(nil, ember.Ones(ember.Shape{2})); err == nil {
		t.Error("Write to a nil writer succeeded")
	}
	if err := Write(io.Discard, nil); err == nil {
		t.Error("Write of a nil tensor succeeded")
	}
}
