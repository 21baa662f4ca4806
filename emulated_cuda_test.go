package ember

import (
	"testing"

	"github.com/emberml/ember/backend/cuda/cudatest"
)

// TestOnEmulatedCUDA reruns the gradient checks and PyTorch gradient
// fixtures with an emulated cuda:0 present (the real CUDA kernels built with
// g++), so conv, pooling, batch norm, losses and every backward rule run
// through the CUDA backend as they would on a GPU, and so do Functions
// applied with Apply.
func TestOnEmulatedCUDA(t *testing.T) {
	if testing.Short() {
		t.Skip("about 10 s of emulated kernels: runs in the full suite")
	}
	if DeviceCount() > 0 {
		t.Skip("a real GPU is present: the other tests run on it")
	}
	restore := cudatest.Use(t)
	defer restore()
	if DeviceCount() != 1 {
		t.Fatalf("emulated device count %d", DeviceCount())
	}
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"GradcheckElementwise", TestGradcheckElementwise},
		{"EveryOpHasAGradient", TestEveryOpHasAGradient},
		{"DeferredChecks", TestDeferredChecks},
		{"GradcheckReductions", TestGradcheckReductions},
		{"GradcheckMatMul", TestGradcheckMatMul},
		{"GradcheckViews", TestGradcheckViews},
		{"GradcheckNN", TestGradcheckNN},
		{"BackwardAccumulates", TestBackwardAccumulates},
		{"InPlaceOps", TestInPlaceOps},
		{"InPlaceViewFixtures", TestInPlaceViewFixtures},
		{"InPlaceViewHistory", TestInPlaceViewHistory},
		{"InPlaceViewErrors", TestInPlaceViewErrors},
		{"CastGrad", TestCastGrad},
		{"BatchNormRunningStats", TestBatchNormRunningStats},
		{"GradFixturesConv2d", TestGradFixturesConv2d},
		{"GradFixturesBatchNorm", TestGradFixturesBatchNorm},
		{"GradFixturesCrossEntropy", TestGradFixturesCrossEntropy},
		{"GradFixturesSoftmax", TestGradFixturesSoftmax},
		{"GradFixturesPool", TestGradFixturesPool},
		{"GradFixturesConvSame", TestGradFixturesConvSame},
		{"GradFixturesConvTranspose", TestGradFixturesConvTranspose},
		{"GradFixturesPool1d", TestGradFixturesPool1d},
		{"GradFixturesAdaptiveMaxPool", TestGradFixturesAdaptiveMaxPool},
		{"PoolCeilModeFloat32", TestPoolCeilModeFloat32},
		{"FunctionGradcheck", TestFunctionGradcheck},
		{"GradFixturesIndex", TestGradFixturesIndex},
		{"IndexingIdioms", TestIndexingIdioms},
		{"GradModePerGoroutine", TestGradModePerGoroutine},
		{"GradcheckIndexOps", TestGradcheckIndexOps},
		{"EmbeddingPaddingGrad", TestEmbeddingPaddingGrad},
		{"IndexErrors", TestIndexErrors},
		{"SortStableTies", TestSortStableTies},
		{"Multinomial", TestMultinomial},
		{"SDPAFixtures", TestSDPAFixtures},
		{"SmallOpsFixtures", TestSmallOpsFixtures},
		{"SmallOps2Fixtures", TestSmallOps2Fixtures},
		{"SmallOps2Gradcheck", TestSmallOps2Gradcheck},
		{"SmallOps2ByHand", TestSmallOps2ByHand},
		{"SDPAGradcheck", TestSDPAGradcheck},
		{"SDPAFullyMaskedRow", TestSDPAFullyMaskedRow},
		{"SDPAHandWorked", TestSDPAHandWorked},
		{"SDPADropout", TestSDPADropout},
		{"GradFixturesInterpolate", TestGradFixturesInterpolate},
		{"GradFixturesPixelShuffle", TestGradFixturesPixelShuffle},
		{"GradFixturesFold", TestGradFixturesFold},
		{"InterpErrorsAsTorch", TestInterpErrorsAsTorch},
		{"InterpolateHalf", TestInterpolateHalf},
		{"GradGradElementwise", TestGradGradElementwise},
		{"GradGradReductionsViews", TestGradGradReductionsViews},
		{"SecondDerivativeFixtures", TestSecondDerivativeFixtures},
		{"GradPenaltyFixture", TestGradPenaltyFixture},
		{"GradPenaltyConvFixture", TestGradPenaltyConvFixture},
		{"GradGradConv2d", TestGradGradConv2d},
		{"GradGradPool", TestGradGradPool},
		{"GradRunsNoHooks", TestGradRunsNoHooks},
		{"GradMLPInputFixture", TestGradMLPInputFixture},
		{"GradOptions", TestGradOptions},
		{"BackwardCreateGraph", TestBackwardCreateGraph},
		{"DoubleBackwardNotImplemented", TestDoubleBackwardNotImplemented},
		{"GradGradNorm", TestGradGradNorm},
		{"GradGradEmbedding", TestGradGradEmbedding},
		{"GradGradAttention", TestGradGradAttention},
		{"GradGradFunction", TestGradGradFunction},
		{"GradGradProdScan", TestGradGradProdScan},
		{"GradPenaltyLayerNormFixture", TestGradPenaltyLayerNormFixture},
		{"GradPenaltyTransformerFixture", TestGradPenaltyTransformerFixture},
		{"HVPMiscFixture", TestHVPMiscFixture},
	} {
		t.Run(tc.name, tc.f)
	}
}

// onEmulatedCUDA skips in -short mode (emulated kernels are slow) and where
// a real GPU is present (the tests run on it), and otherwise installs the
// emulated cuda:0 until the test ends.
func onEmulatedCUDA(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("emulated kernels: runs in the full suite")
	}
	if DeviceCount() > 0 {
		t.Skip("a real GPU is present")
	}
	t.Cleanup(cudatest.Use(t))
}
