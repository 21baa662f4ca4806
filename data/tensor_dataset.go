package data

import (
	"fmt"

	"github.com/emberml/ember"
)

// TensorDataset is torch.utils.data.TensorDataset for an (input, target)
// pair: sample i is (Inputs[i], Targets[i]), slices of dim 0.
type TensorDataset struct {
	Inputs, Targets *ember.Tensor
}

// NewTensorDataset returns the dataset of inputs and targets, which must
// have the same size along dim 0.
func NewTensorDataset(inputs, targets *ember.Tensor) (*TensorDataset, error) {
	if inputs == nil {
		return nil, fmt.Errorf("data: TensorDataset: nil inputs")
	}
	if inputs.Dim() == 0 {
		return nil, fmt.Errorf("data: TensorDataset: inputs must have a dim 0 (got a 0-dim tensor)")
	}
	if targets == nil || targets.Dim() == 0 || targets.Shape()[0] != inputs.Shape()[0] {
		return nil, fmt.Errorf("data: TensorDataset: size mismatch between tensors: inputs %v, targets %v", inputs.Shape(), shapeOf(targets))
	}
	return &TensorDataset{Inputs: inputs, Targets: targets}, nil
}

// Len is the size of dim 0.
func (d *TensorDataset) Len() int { return d.Inputs.Shape()[0] }

// Get returns sample i (views of the tensors); a negative i counts from
// the end, and an i outside the samples panics with an *ember.IndexError,
// as torch's dataset[i].
func (d *TensorDataset) Get(i int) (*ember.Tensor, *ember.Tensor) {
	i = sampleIndex("data.TensorDataset.Get", i, d.Len())
	return d.Inputs.Select(0, i), d.Targets.Select(0, i)
}

func shapeOf(t *ember.Tensor) any {
	if t == nil {
		return "nil"
	}
	return t.Shape()
}
