package nn_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// Self-attention over a batch of 2 sequences of 5 tokens (batch first), the
// last two tokens of the second sequence being padding: Attend returns the
// output and, with NeedWeights, the attention weights averaged over heads,
// which give the padding no weight (and sum to 1 over the keys).
func ExampleNewMultiheadAttention() {
	ember.ManualSeed(0)
	mha := nn.NewMultiheadAttention(16, 4, nn.BatchFirst())
	x := ember.Randn(ember.Shape{2, 5, 16})
	pad := ember.FromSlice([]bool{false, false, false, false, false, false, false, false, true, true}, ember.Shape{2, 5})
	ember.NoGrad(func() {
		y, w := mha.Attend(x, x, x, nn.MHAOptions{KeyPaddingMask: pad, NeedWeights: true})
		fmt.Println(y.Shape(), w.Shape())
		fmt.Println(w.Select(0, 1).Narrow(1, 3, 2).Sum()) // the weight of sequence 1's padding keys
		fmt.Println(ember.AllClose(w.Sum(ember.Dims(-1)), ember.Ones(ember.Shape{2, 5}), 1e-6, 1e-6))
	})
	// Output:
	// [2, 5, 16] [2, 5, 5]
	// tensor(0.)
	// true
}

// A two-layer pre-norm encoder with a final norm, as in PyTorch:
// nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 4, 64,
// batch_first=True, norm_first=True), 2, nn.LayerNorm(32)). Its state dict
// has PyTorch's keys, so enc.LoadStateDict takes a PyTorch checkpoint
// (weights.LoadPyTorch).
func ExampleNewTransformerEncoder() {
	ember.ManualSeed(0)
	layer := nn.NewTransformerEncoderLayer(32, 4, nn.FeedForward(64), nn.BatchFirst(), nn.NormFirst())
	enc := nn.NewTransformerEncoder(layer, 2, nn.NewLayerNorm(32))
	enc.Eval()
	x := ember.Randn(ember.Shape{3, 10, 32})
	y := enc.Encode(x, nn.TransformerMasks{SrcMask: nn.GenerateSquareSubsequentMask(10)})
	fmt.Println(y.Shape(), nn.NumParameters(enc))
	fmt.Println(enc.StateDict()["layers.1.self_attn.in_proj_weight"].Shape())
	// Output:
	// [3, 10, 32] 17152
	// [96, 32]
}

// A decoder layer attends its own causal prefix and the encoder's output.
func ExampleNewTransformerDecoderLayer() {
	ember.ManualSeed(0)
	dec := nn.NewTransformerDecoderLayer(8, 2, nn.FeedForward(16))
	dec.Eval()
	tgt, memory := ember.Randn(ember.Shape{4, 2, 8}), ember.Randn(ember.Shape{6, 2, 8}) // [T, N, E], [S, N, E]
	y := dec.Decode(tgt, memory, nn.TransformerMasks{TgtMask: nn.GenerateSquareSubsequentMask(4)})
	fmt.Println(y.Shape())
	// Output:
	// [4, 2, 8]
}

// The square subsequent mask lets position i attend positions j ≤ i.
func ExampleGenerateSquareSubsequentMask() {
	fmt.Println(nn.GenerateSquareSubsequentMask(3))
	// Output:
	// tensor([[0., -inf, -inf],
	//         [0., 0., -inf],
	//         [0., 0., 0.]])
}

// RMSNorm scales each row to a root mean square of 1 (times its weight).
func ExampleNewRMSNorm() {
	r := nn.NewRMSNorm(4, 1e-6)
	fmt.Println(r)
	fmt.Println(r.Forward(ember.FromSlice([]float32{1, -1, 1, -1, 2, 2, 2, 2}, ember.Shape{2, 4})).Detach())
	// Output:
	// RMSNorm((4,), eps=1e-06, elementwise_affine=True)
	// tensor([[ 1.0000, -1.0000,  1.0000, -1.0000],
	//         [ 1.0000,  1.0000,  1.0000,  1.0000]])
}
