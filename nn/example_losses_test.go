package nn_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// CTCLoss sums over every alignment of the targets with the inputs. With
// two frames of uniform probabilities over {blank, 1}, the target [1] has
// three alignments (1 1, blank 1, 1 blank) of probability 1/4 each, so the
// loss is −log(3/4).
func ExampleCTCLoss() {
	logProbs := ember.Full(ember.Shape{2, 1, 2}, 0.5, ember.Dtype(ember.Float64)).Log() // [T, N, C]
	targets := ember.FromSlice([]int64{1}, ember.Shape{1, 1})
	lengths := ember.FromSlice([]int64{2}, ember.Shape{1})
	targetLengths := ember.FromSlice([]int64{1}, ember.Shape{1})
	loss := nn.CTCLoss{Reduction: nn.Sum}.Loss(logProbs, targets, lengths, targetLengths)
	fmt.Printf("%.6f\n", loss.Item())
	// Output: 0.287682
}

// TripletMarginLoss pulls an anchor towards a positive and away from a
// negative: max(0, margin + d(a, p) − d(a, n)) = max(0, 1 + 1 − 3) = 0
// here, and 1 + 1 − 1.5 = 0.5 with the negative closer.
func ExampleTripletMarginLoss() {
	a := ember.FromSlice([]float64{0, 0}, ember.Shape{1, 2})
	p := ember.FromSlice([]float64{1, 0}, ember.Shape{1, 2})
	crit := nn.NewTripletMarginLoss()
	crit.Eps = 0 // exact distances for the example
	for _, n := range [][]float64{{0, 3}, {0, 1.5}} {
		fmt.Println(crit.Loss(a, p, ember.FromSlice(n, ember.Shape{1, 2})).Item())
	}
	// Output:
	// 0
	// 0.5
}
