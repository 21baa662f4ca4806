package tensorboard_test

import (
	"fmt"
	"os"

	"github.com/emberml/ember/tensorboard"
)

func ExampleSummaryWriter() {
	dir, _ := os.MkdirTemp("", "runs")
	defer os.RemoveAll(dir)
	w, err := tensorboard.NewSummaryWriter(dir) // then: tensorboard --logdir DIR
	if err != nil {
		fmt.Println(err)
		return
	}
	for step := int64(0); step < 3; step++ {
		w.AddScalar("loss/train", 1/float64(step+1), step)
	}
	w.AddText("run", "lr 0.05, batch 64", 0)
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	evs, err := tensorboard.ReadEvents(w.Path()) // every CRC checked
	fmt.Println(len(evs), evs[0].GetFileVersion(), err)
	for _, e := range evs[1:4] {
		v := e.GetSummary().Value[0]
		fmt.Println(e.Step, v.Tag, v.GetSimpleValue())
	}
	// Output:
	// 5 brain.Event:2 <nil>
	// 0 loss/train 1
	// 1 loss/train 0.5
	// 2 loss/train 0.33333334
}
