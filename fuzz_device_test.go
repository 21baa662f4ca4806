package ember_test

import (
	"testing"

	"github.com/emberml/ember"
)

// FuzzParseDevice: any string parses to a device or a *ParseError, and a
// device's String parses back to the same device.
func FuzzParseDevice(f *testing.F) {
	for _, s := range []string{"cpu", "meta", "cuda", "cuda:1", " CUDA:07 ", "cuda:-1", "cuda:+1", "cuda:", "gpu", "cuda:99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ember.ParseDevice(s)
		if err != nil {
			if _, ok := err.(*ember.DeviceParseError); !ok {
				t.Fatalf("%q: %T %v", s, err, err)
			}
			return
		}
		back, err := ember.ParseDevice(d.String())
		if err != nil || back != d {
			t.Fatalf("%q → %v → %v, %v", s, d, back, err)
		}
	})
}
