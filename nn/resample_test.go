package nn_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// resampleFixtures is testdata/nn/resample.json (gen_interp_fixtures.py):
// PyTorch 1.13's reprs of the resampling layers and their outputs on
// arange inputs.
type resampleFixtures struct {
	Repr    map[string]string `json:"repr"`
	Outputs map[string]struct {
		InputShape []int     `json:"input_shape"`
		Shape      []int     `json:"shape"`
		Data       []float64 `json:"data"`
	} `json:"outputs"`
}

func loadResample(t *testing.T) resampleFixtures {
	t.Helper()
	b, err := os.ReadFile("../testdata/nn/resample.json")
	if err != nil {
		t.Fatal(err)
	}
	var f resampleFixtures
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestResampleLayersReprAsTorch(t *testing.T) {
	f := loadResample(t)
	got := map[string]fmt.Stringer{
		"upsample_scale":  nn.NewUpsample(ember.InterpolateOptions{ScaleFactor: []float64{2}}),
		"upsample_size":   nn.NewUpsample(ember.InterpolateOptions{Size: []int{3, 4}, Mode: "bilinear", AlignCorners: true}),
		"upsample_size1":  nn.NewUpsample(ember.InterpolateOptions{Size: []int{5}, Mode: "bicubic"}),
		"upsample_scales": nn.NewUpsample(ember.InterpolateOptions{ScaleFactor: []float64{2, 1.5}}),
		"nearest2d":       nn.NewUpsamplingNearest2d(nil, []float64{2}),
		"bilinear2d":      nn.NewUpsamplingBilinear2d([]int{3, 4}, nil),
		"pixel_shuffle":   nn.NewPixelShuffle(2),
		"pixel_unshuffle": nn.NewPixelUnshuffle(3),
		"unfold":          nn.NewUnfold([2]int{2, 2}, [2]int{}, [2]int{}, [2]int{}),
		"unfold_hw":       nn.NewUnfold([2]int{2, 3}, [2]int{1, 1}, [2]int{1, 0}, [2]int{2, 2}),
		"fold":            nn.NewFold([2]int{4, 5}, [2]int{2, 2}, [2]int{}, [2]int{}, [2]int{}),
		"fold_hw":         nn.NewFold([2]int{4, 4}, [2]int{2, 2}, [2]int{}, [2]int{}, [2]int{1, 2}),
	}
	for name, m := range got {
		if s := fmt.Sprint(m); s != f.Repr[name] {
			t.Errorf("%s: %s, PyTorch %s", name, s, f.Repr[name])
		}
	}
}

func TestResampleLayersForwardAsTorch(t *testing.T) {
	f := loadResample(t)
	layers := map[string]nn.Module{
		"upsample_scale": nn.NewUpsample(ember.InterpolateOptions{ScaleFactor: []float64{2}}),
		"upsample_size":  nn.NewUpsample(ember.InterpolateOptions{Size: []int{3, 4}, Mode: "bilinear", AlignCorners: true}),
		"bilinear2d_5x7": nn.NewUpsamplingBilinear2d([]int{5, 7}, nil),
		"nearest2d":      nn.NewUpsamplingNearest2d(nil, []float64{2}),
		"pixel_shuffle":  nn.NewPixelShuffle(2),
		"unfold_hw":      nn.NewUnfold([2]int{2, 3}, [2]int{1, 1}, [2]int{1, 0}, [2]int{2, 2}),
		"fold_hw":        nn.NewFold([2]int{4, 4}, [2]int{2, 2}, [2]int{}, [2]int{}, [2]int{1, 2}),
	}
	for name, m := range layers {
		want, ok := f.Outputs[name]
		if !ok {
			t.Fatalf("no fixture %s", name)
		}
		x := ember.Arange(0, float64(ember.Shape(want.InputShape).NumElements()), 1, ember.Dtype(ember.Float64)).
			DivScalar(10).Reshape(want.InputShape...)
		y := m.(interface {
			Forward(*ember.Tensor) *ember.Tensor
		}).Forward(x)
		if !y.Shape().Equal(ember.Shape(want.Shape)) {
			t.Fatalf("%s: shape %v, PyTorch %v", name, y.Shape(), want.Shape)
		}
		for i, v := range y.Float64s() {
			if math.Abs(v-want.Data[i]) > 1e-9 {
				t.Fatalf("%s[%d] = %v, PyTorch %v", name, i, v, want.Data[i])
			}
		}
	}
}
