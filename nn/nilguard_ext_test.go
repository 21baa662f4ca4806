package nn_test

import (
	"testing"

	"github.com/emberml/ember/internal/nilguard/nilguardtest"
	"github.com/emberml/ember/nn"
)

// Every method of every module type of nn on a nil receiver (a module
// field that was never constructed) panics with an *nn.ModuleError naming
// the type and method, the list below is every module type of the package,
// and zz_nilguard.go is current (go generate ./nn).
func TestNilModules(t *testing.T) {
	nilguardtest.Check(t,
		(*nn.Activation)(nil), (*nn.AdaptiveAvgPool1d)(nil), (*nn.AdaptiveAvgPool2d)(nil), (*nn.AdaptiveMaxPool2d)(nil), (*nn.BatchNorm)(nil), (*nn.Bilinear)(nil), (*nn.Conv1d)(nil), (*nn.Conv2d)(nil), (*nn.ConvTranspose2d)(nil),
		(*nn.DataParallel)(nil), (*nn.DistributedDataParallel)(nil), (*nn.Dropout)(nil), (*nn.Embedding)(nil), (*nn.EmbeddingBag)(nil), (*nn.GRU)(nil), (*nn.GRUCell)(nil),
		(*nn.GroupNorm)(nil), (*nn.InstanceNorm)(nil), (*nn.LocalResponseNorm)(nil), (*nn.LPPool)(nil), (*nn.LSTM)(nil), (*nn.LSTMCell)(nil), (*nn.LayerNorm)(nil), (*nn.Linear)(nil), (*nn.MaxUnpool)(nil), (*nn.ModuleList)(nil), (*nn.MultiheadAttention)(nil),
		(*nn.NonDynamicallyQuantizableLinear)(nil), (*nn.PReLU)(nil), (*nn.Pad)(nil), (*nn.Pool)(nil), (*nn.Pool1d)(nil), (*nn.RMSNorm)(nil), (*nn.RNN)(nil), (*nn.RNNCell)(nil), (*nn.RReLU)(nil), (*nn.Sequential)(nil),
		(*nn.TransformerDecoder)(nil), (*nn.TransformerDecoderLayer)(nil), (*nn.TransformerEncoder)(nil),
		(*nn.TransformerEncoderLayer)(nil),
		(*nn.Fold)(nil), (*nn.PixelShuffle)(nil), (*nn.PixelUnshuffle)(nil), (*nn.Unfold)(nil), (*nn.Upsample)(nil))
}
