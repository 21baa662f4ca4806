package datasets

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

func TestFashionMNISTReal(t *testing.T) {
	_, err := os.Stat(filepath.Join(DefaultFashionMNISTDir, "t10k-labels-idx1-ubyte.gz"))
	testenv.NeedLib(t, "dataset-fashion-mnist", err)
	t.Setenv("EMBER_DATA_DIR", "")
	for _, c := range []struct {
		train  bool
		n      int
		labels []int
		sum0   int // sum of the first image's bytes
		px     int // byte 400 of the second image
	}{
		{true, 60000, []int{9, 0, 0, 3, 0}, 76247, 197},
		{false, 10000, []int{9, 2, 1, 1, 6}, 33456, 86},
	} {
		ds, err := FashionMNIST(c.train)
		if err != nil {
			t.Fatal(err)
		}
		if ds.Len() != c.n || ds.Rows != 28 || ds.Cols != 28 {
			t.Fatalf("train=%v: %d samples of %dx%d", c.train, ds.Len(), ds.Rows, ds.Cols)
		}
		for i, l := range c.labels {
			if ds.Label(i) != l {
				t.Errorf("label %d = %d, want %d", i, ds.Label(i), l)
			}
		}
		s := 0
		for _, b := range ds.Pixels(0) {
			s += int(b)
		}
		if s != c.sum0 || int(ds.Pixels(1)[400]) != c.px {
			t.Errorf("pixel sums %d, %d; want %d, %d", s, ds.Pixels(1)[400], c.sum0, c.px)
		}
		x, y := ds.Get(1)
		if !x.Shape().Equal([]int{1, 28, 28}) || y.Dim() != 0 || int(y.Item()) != c.labels[1] {
			t.Errorf("Get(1) = %v, %v", x.Shape(), y)
		}
		if got := x.Float32s()[400]; got != float32(c.px)/255 {
			t.Errorf("pixel = %v, want %v", got, float32(c.px)/255)
		}
	}
}

func TestMissingDataset(t *testing.T) {
	dir := t.TempDir()
	_, err := FashionMNIST(true, Dir(dir))
	var me *MissingError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "install the Debian package dataset-fashion-mnist") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v", err)
	}
	t.Setenv("EMBER_DATA_DIR", dir)
	_, err = FashionMNIST(false)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("EMBER_DATA_DIR not used: %v", err)
	}
}

func idxBytes(dims []uint32, data []byte) []byte {
	b := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		b = append(b, byte(d>>24), byte(d>>16), byte(d>>8), byte(d))
	}
	return append(b, data...)
}

func TestSmallDatasetFromDir(t *testing.T) {
	dir := t.TempDir()
	img := make([]byte, 2*2*3)
	img[5] = 255
	write := func(name string, b []byte, gz bool) {
		if gz {
			var buf bytes.Buffer
			w := gzip.NewWriter(&buf)
			w.Write(b)
			w.Close()
			b, name = buf.Bytes(), name+".gz"
		}
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	write("train-images-idx3-ubyte", idxBytes([]uint32{2, 2, 3}, img), true)
	write("train-labels-idx1-ubyte", idxBytes([]uint32{2}, []byte{4, 7}), false)
	ds, err := LoadMNIST(true, Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	x, y := ds.Get(0)
	if !x.Shape().Equal([]int{1, 2, 3}) || x.Float32s()[5] != 1 || y.Item() != 4 {
		t.Errorf("Get(0) = %v %v", x, y)
	}
	// Python's indexing: -1 is the last sample; past either end an
	// IndexError (was a Go "slice bounds out of range")
	if _, y := ds.Get(-1); y.Item() != 7 || ds.Label(-2) != 4 || ds.Pixels(-2)[5] != 255 {
		t.Errorf("Get(-1) = %v, Label(-2) = %d, Pixels(-2) = %v", y, ds.Label(-2), ds.Pixels(-2))
	}
	for _, i := range []int{2, -3} {
		e := testenv.Raises[*ember.IndexError](t, "Get out of range", func() { ds.Get(i) })
		if e.Index != int64(i) || e.Size != 2 {
			t.Error(e)
		}
		testenv.Raises[*ember.IndexError](t, "Pixels out of range", func() { ds.Pixels(i) })
		testenv.Raises[*ember.IndexError](t, "Label out of range", func() { ds.Label(i) })
	}
	write("train-labels-idx1-ubyte", idxBytes([]uint32{2}, []byte{4, 10}), false)
	if _, err := LoadMNIST(true, Dir(dir)); err == nil {
		t.Error("label 10 accepted")
	}
}

func TestParseIDXRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"short":    {0, 0},
		"magic":    {1, 0, 8, 1, 0, 0, 0, 1, 0},
		"type":     {0, 0, 0x0d, 1, 0, 0, 0, 1, 0},
		"ndims":    {0, 0, 8, 0},
		"huge":     idxBytes([]uint32{1 << 31, 1 << 31}, nil),
		"truncate": idxBytes([]uint32{100}, []byte{1, 2}),
		"gzip":     {0x1f, 0x8b, 0, 0},
	} {
		if _, err := ParseIDX(bytes.NewReader(b)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzParseIDX(f *testing.F) {
	for _, n := range []string{"idx_good.gz", "idx_bad_crc.gz"} {
		if b, err := os.ReadFile("../../testdata/hostile/" + n); err == nil {
			f.Add(b)
		}
	}
	f.Add(idxBytes([]uint32{2, 3}, []byte{1, 2, 3, 4, 5, 6}))
	f.Add(idxBytes([]uint32{1 << 20}, []byte{1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseIDX(bytes.NewReader(b))
		if err != nil {
			return
		}
		n := 1
		for _, d := range x.Dims {
			n *= d
		}
		if n != len(x.Data) {
			t.Fatalf("dims %v but %d bytes", x.Dims, len(x.Data))
		}
	})
}

// The crafted files are made by testdata/hostile/gen_hostile.py: a gzipped
// IDX file with one pixel flipped after its CRC was computed, and the file
// before the flip.
func TestParseIDXChecksGzipCRC(t *testing.T) {
	good, err := ReadIDX("../../testdata/hostile/idx_good.gz")
	if err != nil {
		t.Fatal(err)
	}
	if len(good.Dims) != 3 || good.Dims[0] != 2 || good.Dims[1] != 4 || good.Dims[2] != 4 || good.Data[31] != 31 {
		t.Errorf("good file: dims %v data %v", good.Dims, good.Data)
	}
	_, err = ReadIDX("../../testdata/hostile/idx_bad_crc.gz")
	if _, ok := err.(*IDXError); !ok || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("flipped pixel: %v, want an *IDXError naming the checksum", err)
	}
	// Bytes past the declared data are no IDX file.
	if _, err := ParseIDX(bytes.NewReader(idxBytes([]uint32{2}, []byte{1, 2, 3}))); err == nil {
		t.Error("trailing byte accepted")
	}
}

// A file declaring more than exactBytes of data is read in chunks: a header
// that lies costs what the stream holds.
func TestParseIDXLargeDeclared(t *testing.T) {
	b := idxBytes([]uint32{exactBytes + 5}, make([]byte, exactBytes+5))
	x, err := ParseIDX(bytes.NewReader(b))
	if err != nil || len(x.Data) != exactBytes+5 {
		t.Fatalf("err %v", err)
	}
	if _, err := ParseIDX(bytes.NewReader(b[:len(b)-1])); err == nil || !strings.Contains(err.Error(), "file has") {
		t.Errorf("truncated: %v", err)
	}
}
