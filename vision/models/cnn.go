package models

import "github.com/emberml/ember/nn"

// SimpleCNN is a small convolutional classifier for 28×28 images:
// conv 3×3 in→32, BN, ReLU, max-pool 2; conv 3×3 32→64, BN, ReLU, max-pool 2;
// linear 64·7·7→128, ReLU, linear 128→classes. Its state dict keys are those
// of the same torch.nn.Sequential (bench/train_torch.py builds it).
func SimpleCNN(inChannels, classes int) *nn.Sequential {
	return nn.NewSequential(
		nn.NewConv2d(inChannels, 32, 3, nn.Padding(1)), nn.NewBatchNorm2d(32), nn.NewReLU(), nn.NewMaxPool2d(2, 0, 0),
		nn.NewConv2d(32, 64, 3, nn.Padding(1)), nn.NewBatchNorm2d(64), nn.NewReLU(), nn.NewMaxPool2d(2, 0, 0),
		nn.NewFlatten(), nn.NewLinear(64*7*7, 128, true), nn.NewReLU(), nn.NewLinear(128, classes, true),
	)
}
