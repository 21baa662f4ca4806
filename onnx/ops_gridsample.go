package onnx

import "github.com/emberml/ember"

// gridSample implements GridSample (opset 16; opset 20's linear and cubic
// modes are bilinear and bicubic) with ember.GridSample. A grid of
// another dtype than X is cast to X's; two-byte floats sample in float32.
func gridSample(n *node, in []*ember.Tensor) []*ember.Tensor {
	x, grid := in[0], in[1]
	mode := n.str("mode", "bilinear")
	switch mode {
	case "linear":
		mode = "bilinear"
	case "cubic":
		mode = "bicubic"
	}
	o := ember.GridSampleOptions{Mode: mode, PaddingMode: n.str("padding_mode", "zeros"), AlignCorners: n.int("align_corners", 0) != 0}
	dt := x.DType()
	if dt.IsHalf() {
		return []*ember.Tensor{ember.GridSample(x.Cast(ember.Float32), grid.Cast(ember.Float32), o).Cast(dt)}
	}
	if grid.DType() != dt {
		grid = grid.Cast(dt)
	}
	return []*ember.Tensor{ember.GridSample(x, grid, o)}
}

func init() { reg(gridSample, "GridSample") }
