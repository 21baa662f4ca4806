// Package models holds reference networks with torchvision's module layout,
// so torchvision state dicts load by name.
package models

//go:generate go run github.com/emberml/ember/internal/nilguard/gen

import (
	"github.com/emberml/ember"
	"github.com/emberml/ember/hub"
	"github.com/emberml/ember/nn"
)

// BasicBlock is torchvision's two-conv residual block.
type BasicBlock struct {
	nn.Base
	Conv1, Conv2 *nn.Conv2d
	BN1, BN2     *nn.BatchNorm
	Downsample   *nn.Sequential // nil when the shapes already match
}

func newBlock(in, planes, stride int) *BasicBlock {
	b := &BasicBlock{
		Conv1: nn.NewConv2d(in, planes, 3, nn.Stride(stride), nn.Padding(1), nn.NoBias()),
		BN1:   nn.NewBatchNorm2d(planes),
		Conv2: nn.NewConv2d(planes, planes, 3, nn.Padding(1), nn.NoBias()),
		BN2:   nn.NewBatchNorm2d(planes),
	}
	b.Init(b)
	b.RegisterModule("conv1", b.Conv1)
	b.RegisterModule("bn1", b.BN1)
	b.RegisterModule("conv2", b.Conv2)
	b.RegisterModule("bn2", b.BN2)
	if stride != 1 || in != planes {
		b.Downsample = nn.NewSequential(nn.NewConv2d(in, planes, 1, nn.Stride(stride), nn.NoBias()), nn.NewBatchNorm2d(planes))
		b.RegisterModule("downsample", b.Downsample)
	}
	return b
}

// Forward is relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)).
func (b *BasicBlock) Forward(x *ember.Tensor) *ember.Tensor {
	nn.CheckNil(b, "Forward")
	idt := x
	if b.Downsample != nil {
		idt = b.Downsample.Forward(x)
	}
	y := b.BN1.Forward(b.Conv1.Forward(x)).ReLU()
	y = b.BN2.Forward(b.Conv2.Forward(y))
	return y.Add(idt).ReLU()
}

// ResNet is torchvision.models.ResNet with basic blocks.
type ResNet struct {
	nn.Base
	Conv1                          *nn.Conv2d
	BN1                            *nn.BatchNorm
	MaxPool                        *nn.Pool
	Layer1, Layer2, Layer3, Layer4 *nn.Sequential
	AvgPool                        *nn.AdaptiveAvgPool2d
	FC                             *nn.Linear
}

// Option configures a ResNet.
type Option func(*config)

type config struct {
	classes, in, width int
	arch               *Weights // the architecture's own weights (ResNet18, ResNet34)
	pretrained         bool
	from               *Weights // PretrainedFrom's
	hubOpts            []hub.Option
}

// NumClasses sets the classifier's outputs (default 1000).
func NumClasses(n int) Option { return func(c *config) { c.classes = n } }

// InChannels sets the input channels (default 3).
func InChannels(n int) Option { return func(c *config) { c.in = n } }

// Width sets the first stage's channels (default 64; stages double it).
// Other widths break compatibility with torchvision's weights but make
// small test models.
func Width(n int) Option { return func(c *config) { c.width = n } }

// NewResNet builds a basic-block ResNet with the given blocks per stage.
// Conv weights are initialised as torchvision does (kaiming_normal_,
// fan_out, relu). Pretrained needs ResNet18 or ResNet34, which know their
// weights; PretrainedFrom works here too.
func NewResNet(layers [4]int, opts ...Option) *ResNet {
	c := config{classes: 1000, in: 3, width: 64}
	for _, o := range opts {
		o(&c)
	}
	r := newResNet(layers, c)
	if w := c.weights(); w != nil {
		if err := loadInto(r, w, c); err != nil {
			panic(err)
		}
	} else if c.pretrained {
		panic(&PretrainedError{Reason: "models.Pretrained: NewResNet with custom layers has no published weights (use PretrainedFrom)"})
	}
	return r
}

func newResNet(layers [4]int, c config) *ResNet {
	w := c.width
	r := &ResNet{
		Conv1:   nn.NewConv2d(c.in, w, 7, nn.Stride(2), nn.Padding(3), nn.NoBias()),
		BN1:     nn.NewBatchNorm2d(w),
		MaxPool: nn.NewMaxPool2d(3, 2, 1),
		AvgPool: nn.NewAdaptiveAvgPool2d(1, 1),
		FC:      nn.NewLinear(8*w, c.classes, true),
	}
	r.Init(r)
	in := w
	stage := func(planes, n, stride int) *nn.Sequential {
		blocks := []nn.Module{newBlock(in, planes, stride)}
		in = planes
		for i := 1; i < n; i++ {
			blocks = append(blocks, newBlock(planes, planes, 1))
		}
		return nn.NewSequential(blocks...)
	}
	r.Layer1 = stage(w, layers[0], 1)
	r.Layer2 = stage(2*w, layers[1], 2)
	r.Layer3 = stage(4*w, layers[2], 2)
	r.Layer4 = stage(8*w, layers[3], 2)
	for _, m := range []struct {
		n string
		m nn.Module
	}{{"conv1", r.Conv1}, {"bn1", r.BN1}, {"maxpool", r.MaxPool}, {"layer1", r.Layer1}, {"layer2", r.Layer2},
		{"layer3", r.Layer3}, {"layer4", r.Layer4}, {"avgpool", r.AvgPool}, {"fc", r.FC}} {
		r.RegisterModule(m.n, m.m)
	}
	r.MapParameters(func(_ string, t *ember.Tensor) *ember.Tensor {
		if t.Dim() == 4 {
			return nn.KaimingNormalFanOut(t)
		}
		return t
	})
	return r
}

// ResNet18 is NewResNet([2, 2, 2, 2]); with Pretrained, torchvision's
// ResNet18_Weights.IMAGENET1K_V1.
func ResNet18(opts ...Option) *ResNet {
	return NewResNet([4]int{2, 2, 2, 2}, append([]Option{defaultWeights(ResNet18Weights)}, opts...)...)
}

// ResNet34 is NewResNet([3, 4, 6, 3]); with Pretrained, torchvision's
// ResNet34_Weights.IMAGENET1K_V1.
func ResNet34(opts ...Option) *ResNet {
	return NewResNet([4]int{3, 4, 6, 3}, append([]Option{defaultWeights(ResNet34Weights)}, opts...)...)
}

// Forward maps [N, C, H, W] images to [N, classes] logits.
func (r *ResNet) Forward(x *ember.Tensor) *ember.Tensor {
	nn.CheckNil(r, "Forward")
	x = r.MaxPool.Forward(r.BN1.Forward(r.Conv1.Forward(x)).ReLU())
	x = r.Layer4.Forward(r.Layer3.Forward(r.Layer2.Forward(r.Layer1.Forward(x))))
	return r.FC.Forward(r.AvgPool.Forward(x).Flatten(1, -1))
}
