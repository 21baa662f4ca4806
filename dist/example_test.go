package dist_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/dist"
)

// A program started by `ember launch`, torchrun or srun calls
// InitProcessGroup with empty Options, which reads its rank and world from
// the environment. Here the world has one process, so it runs anywhere.
func Example() {
	g, err := dist.InitProcessGroup("cpu", dist.Options{WorldSize: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()

	grad := ember.FromSlice([]float32{1, 2, 3}, nil)
	if err := g.AllReduce(grad, dist.Avg); err != nil { // the mean over the ranks
		fmt.Println(err)
		return
	}
	fmt.Println("rank", g.Rank(), "of", g.WorldSize(), grad.Float32s())
	// Output: rank 0 of 1 [1 2 3]
}
