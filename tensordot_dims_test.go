package ember

import (
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

// TestTensordotTooManyDims: dims=n beyond an operand's rank is torch's
// out-of-range error for the first dim that does not exist, however large
// n is (two slices n long were made first: 2^62 was a Go runtime panic,
// 2^40 a fatal out-of-memory error). torch.tensordot(ones(3), ones(3),
// dims=2) says "... but got -2"; (ones(2, 2), ones(2), 2) "... but got 1";
// (tensor(1.), ones(2), 1) "Dimension specified as -1 ..."; (ones(2, 2),
// tensor(1.), 1) "Dimension specified as 0 ...".
func TestTensordotTooManyDims(t *testing.T) {
	v, m, s := Ones(Shape{3}), Ones(Shape{2, 2}), Scalar(1)
	for _, c := range []struct {
		a, b *Tensor
		n    int
		msg  string
	}{
		{v, v, 2, "Dimension out of range (expected to be in range of [-1, 0], but got -2)"},
		{m, Ones(Shape{2}), 2, "Dimension out of range (expected to be in range of [-1, 0], but got 1)"},
		{s, Ones(Shape{2}), 1, "Dimension specified as -1 but tensor has no dimensions"},
		{m, s, 1, "Dimension specified as 0 but tensor has no dimensions"},
		{v, v, 1 << 40, "but got -1099511627776)"},
		{v, v, math.MaxInt, "Dimension out of range"},
	} {
		e := testenv.Raises[*ShapeError](t, "tensordot", func() { Tensordot(c.a, c.b, c.n) })
		if !strings.Contains(e.Error(), c.msg) {
			t.Fatalf("tensordot dims=%d: %q does not say %q", c.n, e.Error(), c.msg)
		}
	}
}
