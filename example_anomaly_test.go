package ember_test

import (
	"fmt"
	"strings"

	"github.com/emberml/ember"
)

// DetectAnomaly finds the op whose backward first produced a NaN, and
// where its forward was called (the lines after the first).
func ExampleDetectAnomaly() {
	x := ember.FromSlice([]float64{0, 1}, ember.Shape{2}).SetRequiresGrad(true)
	ember.DetectAnomaly(func() {
		loss := x.Sqrt().MulScalar(0).Sum()
		err := ember.Try(func() { loss.Backward() })
		lines := strings.Split(err.Error(), "\n")
		fmt.Println(lines[0])
		fmt.Println(lines[1])
		fmt.Println(strings.Contains(lines[2], "example_anomaly_test.go:15"))
	})
	// Output:
	// backward: Function 'SqrtBackward0' returned nan values in its 0th output.
	// Traceback of forward call that caused the error:
	// true
}
