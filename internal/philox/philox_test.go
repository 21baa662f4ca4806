package philox

import (
	"math"
	"testing"
)

// Known-answer vectors from Random123's kat_vectors (philox4x32, 10 rounds).
func TestKnownAnswers(t *testing.T) {
	cases := []struct {
		c    [4]uint32
		k    [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, c := range cases {
		if got := Raw(c.c, c.k); got != c.want {
			t.Errorf("Raw(%x, %x) = %x, want %x", c.c, c.k, got, c.want)
		}
	}
}

func TestStreamContract(t *testing.T) {
	// Element i of a call at offset 5 is lane i%4 of Block(seed, 5+i/4),
	// whatever slice of the call a worker fills.
	all := make([]float32, 11)
	FillUniform32(all, 42, 5, 0)
	part := make([]float32, 4)
	FillUniform32(part, 42, 5, 6)
	for j := range part {
		if part[j] != all[6+j] {
			t.Fatalf("split fill differs at %d", 6+j)
		}
	}
	b := Block(42, 5+9/4)
	if want := float32(b[9%4]>>8) / 16777216; all[9] != want {
		t.Fatalf("element 9 = %v, want %v", all[9], want)
	}
}

func TestNormalMoments(t *testing.T) {
	n := 200000
	x := make([]float64, n)
	FillNormal64(x, 1, 0, 0)
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	mean, variance := s/float64(n), s2/float64(n)-(s/float64(n))*(s/float64(n))
	// standard error of the mean is 1/sqrt(n) ≈ 0.0022
	if math.Abs(mean) > 0.01 || math.Abs(variance-1) > 0.02 {
		t.Fatalf("mean %v variance %v", mean, variance)
	}
}
