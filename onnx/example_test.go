package onnx_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/onnx"
)

// Load a model torch.onnx.export wrote (an nn.TransformerEncoderLayer),
// describe it and run it on the CPU; on a GPU, give Run inputs on cuda:0.
func ExampleLoad() {
	m, err := onnx.Load("testdata/transformer_layer_op17.onnx")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("opset", m.Opset)
	fmt.Println("input ", m.Inputs[0])
	fmt.Println("output", m.Outputs[0])
	x := ember.Randn(ember.Shape{2, 7, 32})
	out, err := m.Run(map[string]*ember.Tensor{"input": x})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out["output"].Shape())
	// Output:
	// opset 17
	// input  input: float32[2, 7, 32]
	// output output: float32[2, 7, 32]
	// [2, 7, 32]
}

// An op ember does not run is reported when the model loads, naming the node.
func ExampleUnsupportedError() {
	_, err := onnx.Load("/usr/share/libonnx-testdata/data/node/test_nonmaxsuppression_single_box/model.onnx")
	fmt.Println(err)
}

// The ONNX backend test cases run one folder at a time (this prints
// "PASS test_relu" where Debian's libonnx-testdata is installed).
func ExampleRunTestCase() {
	dir := "/usr/share/libonnx-testdata/data/node/test_relu"
	if !onnx.IsTestCase(dir) {
		return // libonnx-testdata is not installed
	}
	r := onnx.RunTestCase(dir, ember.CPU, onnx.DefaultRTol, onnx.DefaultATol)
	fmt.Println(r.Status, r.Name)
}

// A graph with sequence inputs or outputs runs with RunSequences (this
// prints the three tensors of the output sequence where Debian's
// libonnx-testdata is installed).
func ExampleModel_RunSequences() {
	m, err := onnx.Load("/usr/share/libonnx-testdata/data/node/test_sequence_insert_at_back/model.onnx")
	if err != nil {
		return // libonnx-testdata is not installed
	}
	seq := []*ember.Tensor{ember.FromSlice([]int64{1, 2}, nil), ember.FromSlice([]int64{3}, nil)}
	_, seqs, err := m.RunSequences(map[string]*ember.Tensor{"tensor": ember.FromSlice([]int64{7, 8, 9}, nil)},
		map[string][]*ember.Tensor{"sequence": seq})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range seqs["output_sequence"] {
		fmt.Println(t.Int64s())
	}
}
