package ember

import (
	"errors"
	"testing"
)

// TestHalfLinspace: bfloat16/float16 Linspace is torch.linspace's values
// bit for bit (PyTorch 1.13 computes them in the two-byte type, its
// vectorised lanes included); a finite bound past the type's range is a
// ValueError, as torch's "value cannot be converted ... without overflow".
func TestHalfLinspace(t *testing.T) {
	halfOpsCases(t, func(t *testing.T, c halfOpCase) {
		got := Linspace(c.arg("start"), c.arg("end"), int(c.arg("steps")), Dtype(halfDT(c.Out.Dtype)), On(halfOpsDev))
		checkHalfOut(t, "linspace", got, c.Out, 0)
	}, "linspace")
	for _, c := range []struct {
		dt  DType
		end float64
	}{{Float16, 65504.5}, {BFloat16, 3.39e38}} {
		var ve *ValueError
		if err := Try(func() { Linspace(0, c.end, 3, Dtype(c.dt)) }); !errors.As(err, &ve) {
			t.Errorf("Linspace(0, %v, 3, %v): %v", c.end, c.dt, err)
		}
	}
	// in range: 65504 itself, and bfloat16 takes 65504.5
	if got := Linspace(0, 65504, 3, Dtype(Float16)).Float32s(); got[2] != 65504 || got[1] != 32752 {
		t.Errorf("Linspace(0, 65504, 3, float16) = %v", got)
	}
	Linspace(0, 65504.5, 3, Dtype(BFloat16))
}
