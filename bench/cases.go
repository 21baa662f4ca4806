package bench

import (
	"fmt"
	"runtime"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/vision/models"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// ElemN is the element count of the reduction and elementwise cases (16M).
const ElemN = 16 << 20

// SetThreads makes ember's CPU kernels and the Go scheduler use n threads
// (cpu.SetThreads and runtime.GOMAXPROCS); n <= 0 leaves them as they are.
// It returns the thread count in effect.
func SetThreads(n int) int {
	if n > 0 {
		runtime.GOMAXPROCS(n)
		cpu.SetThreads(n)
	}
	return cpu.Threads()
}

// Cases returns every case, in the order they are reported:
//
//	sgemm_256 … sgemm_2048  ember MatMul of two contiguous n×n float32 matrices (2n³ FLOP)
//	conv3x3                 ember.Conv2d 64→64, 3×3, padding 1, bias, on 8×64×56×56
//	sum_16M                 Sum of 16M float32 (reads 64 MiB)
//	axpb_16M                x.MulScalar(2).AddScalar(1) on 16M float32 (two ops, each reads and writes 64 MiB)
//	cast_16M_bf16           Cast of 16M float32 to bfloat16 (reads 64 MiB, writes 32 MiB)
//	axpb_16M_bf16           axpb_16M on bfloat16 (two ops, each reads and writes 32 MiB)
//	sum_16M_bf16            Sum of 16M bfloat16 (reads 32 MiB; float32 accumulation, bfloat16 result)
//	resnet18_fwd            ResNet-18 forward, batch 16, 3×224×224, eval mode, NoGrad
//	cnn_train_step          models.SimpleCNN(1, 10) on 64×1×28×28: forward, cross entropy, backward, SGD step
//	resnet18_finetune_step  ResNet-18, backbone frozen (requires_grad false), a new 10-class head, train
//	                        mode, batch 32, 3×64×64: forward, cross entropy, backward, SGD step
//	mnist_epoch             MNISTEpochSteps (16) steps of `ember train`'s loop for the CNN on synthetic
//	                        Fashion-MNIST-shaped batches of 64 (a full epoch is 938 such steps)
//	gonum_sgemm_1024        gonum's pure-Go Sgemm at 1024, a reference row
//	sdpa_causal             ScaledDotProductAttention, causal, 4×12×512×64 float32, forward + backward
//	gpt2_fwd, gpt2_decode, gpt_train_step  the transformer cases (transformers.go)
//	onnx_resnet18           resnet18_fwd's model exported by torch.onnx.export, run by package onnx
//	                        (batch 16, 224×224); PyTorch runs the same module eagerly
//	bgemm_1024              MatMul of two 1024×1024 bfloat16 matrices, bfloat16 out (torch.mm on bf16)
//	hgemm_1024              MatMul of two 1024×1024 float16 matrices, float16 out (no PyTorch case: 1.13 has no CPU fp16 mm)
//	resnet18_fwd_bf16       resnet18_fwd under Autocast(CPU, BFloat16)
//	cnn_train_step_amp      cnn_train_step with the forward and loss under Autocast(CPU, BFloat16)
//
// The FLOP counts of the networks are their conv and linear layers'
// multiply-adds ×2 (ResNet-18: 1.814 GMAC per image), and ×3 that for a
// training step (forward, input and weight gradients), the usual convention.
func Cases() []Case {
	var cs []Case
	for _, n := range []int{256, 512, 1024, 2048} {
		cs = append(cs, Case{Name: fmt.Sprintf("sgemm_%d", n), Desc: fmt.Sprintf("MatMul %d×%d·%d×%d float32", n, n, n, n), Unit: FLOP, Setup: sgemm(n)})
	}
	cs = append(cs,
		Case{Name: "conv3x3", Desc: "Conv2d 3×3 64→64 pad 1 on 8×64×56×56", Unit: FLOP, Setup: conv3x3},
		Case{Name: "sum_16M", Desc: "Sum of 16M float32", Unit: Bytes, Setup: sum16M},
		Case{Name: "axpb_16M", Desc: "x*2+1 (MulScalar, AddScalar) on 16M float32", Unit: Bytes, Setup: axpb16M},
		Case{Name: "cast_16M_bf16", Desc: "Cast of 16M float32 to bfloat16", Unit: Bytes, Setup: cast16MBF16},
		Case{Name: "axpb_16M_bf16", Desc: "x*2+1 (MulScalar, AddScalar) on 16M bfloat16", Unit: Bytes, Setup: axpb16MBF16},
		Case{Name: "sum_16M_bf16", Desc: "Sum of 16M bfloat16", Unit: Bytes, Setup: sum16MBF16},
		Case{Name: "resnet18_fwd", Desc: "ResNet-18 forward, batch 16, 224×224, eval, no grad", Unit: FLOP, Setup: resnet18Fwd},
		Case{Name: "cnn_train_step", Desc: "SimpleCNN train step, batch 64, 28×28 (fwd, CE, bwd, SGD)", Unit: FLOP, Setup: cnnTrainStep},
		Case{Name: "resnet18_finetune_step", Desc: "ResNet-18 frozen backbone, new 10-class head, batch 32, 64×64 (fwd, CE, bwd, SGD)", Unit: FLOP, Setup: resnet18FinetuneStep},
		Case{Name: "mnist_epoch", Desc: fmt.Sprintf("%d CNN training steps of batch 64 on synthetic 28×28 (ember train's loop; an epoch is 938)", MNISTEpochSteps), Unit: FLOP, Setup: mnistEpoch},
		Case{Name: "gonum_sgemm_1024", Desc: "gonum blas/gonum Sgemm 1024 (reference)", Unit: FLOP, Setup: gonumSgemm(1024)},
		Case{Name: "sdpa_causal", Desc: "ScaledDotProductAttention causal, 4×12×512×64 float32, fwd + bwd", Unit: FLOP, Setup: sdpaCausal},
		Case{Name: "gpt2_fwd", Desc: "GPT-2 small (124M) forward, batch 1, 128 tokens, NoGrad", Unit: FLOP, Setup: gpt2Fwd},
		Case{Name: "gpt2_decode", Desc: fmt.Sprintf("GPT-2 small, %d greedy steps with the KV cache after a 128-token prompt", GPT2DecodeTokens), Unit: FLOP, Setup: gpt2Decode},
		Case{Name: "gpt_train_step", Desc: "nanoGPT shape (4 layers, 4 heads, 128 wide, block 128, vocab 256), batch 32: fwd, CE, bwd, clip, AdamW", Unit: FLOP, Setup: gptTrainStep},
		Case{Name: "onnx_resnet18", Desc: "ResNet-18 from torch.onnx.export run by package onnx, batch 16, 224×224", Unit: FLOP, Setup: onnxResNet18},
		Case{Name: "bgemm_1024", Desc: "MatMul 1024×1024·1024×1024 bfloat16 in and out (float32 accumulation)", Unit: FLOP, Setup: halfGemm(1024, ember.BFloat16)},
		Case{Name: "hgemm_1024", Desc: "MatMul 1024×1024·1024×1024 float16 in and out (float32 accumulation)", Unit: FLOP, Setup: halfGemm(1024, ember.Float16)},
		Case{Name: "resnet18_fwd_bf16", Desc: "ResNet-18 forward, batch 16, 224×224, eval, no grad, under Autocast(bfloat16)", Unit: FLOP, Setup: resnet18FwdBF16},
		Case{Name: "cnn_train_step_amp", Desc: "SimpleCNN train step, batch 64, 28×28, forward and loss under Autocast(bfloat16)", Unit: FLOP, Setup: cnnTrainStepAMP},
	)
	return cs
}

func sgemm(n int) func() (func() float64, error) {
	return func() (func() float64, error) {
		ember.ManualSeed(1)
		a := ember.Randn(ember.Shape{n, n})
		b := ember.Randn(ember.Shape{n, n})
		flops := 2 * float64(n) * float64(n) * float64(n)
		return func() float64 {
			a.MatMul(b).Release()
			return flops
		}, nil
	}
}

// ConvFLOPs is 2·N·Cout·OH·OW·(Cin/groups)·KH·KW.
func ConvFLOPs(n, cin, cout, oh, ow, kh, kw, groups int) float64 {
	return 2 * float64(n) * float64(cout) * float64(oh) * float64(ow) * float64(cin/groups) * float64(kh) * float64(kw)
}

func conv3x3() (func() float64, error) {
	ember.ManualSeed(1)
	x := ember.Randn(ember.Shape{8, 64, 56, 56})
	w := ember.Randn(ember.Shape{64, 64, 3, 3})
	b := ember.Randn(ember.Shape{64})
	flops := ConvFLOPs(8, 64, 64, 56, 56, 3, 3, 1)
	one := [2]int{1, 1}
	return func() float64 {
		ember.Conv2d(x, w, b, one, one, one, 1).Release()
		return flops
	}, nil
}

func sum16M() (func() float64, error) {
	x := ember.Rand(ember.Shape{ElemN})
	return func() float64 {
		x.Sum().Release()
		return 4 * ElemN
	}, nil
}

func axpb16M() (func() float64, error) {
	x := ember.Rand(ember.Shape{ElemN})
	return func() float64 {
		t := x.MulScalar(2)
		t.AddScalar(1).Release()
		t.Release()
		return 2 * 2 * 4 * ElemN // two ops, each reads and writes 16M float32
	}, nil
}

func cast16MBF16() (func() float64, error) {
	x := ember.Rand(ember.Shape{ElemN})
	return func() float64 {
		x.Cast(ember.BFloat16).Release()
		return (4 + 2) * ElemN // reads 16M float32, writes 16M bfloat16
	}, nil
}

func axpb16MBF16() (func() float64, error) {
	x := ember.Rand(ember.Shape{ElemN}).Cast(ember.BFloat16)
	return func() float64 {
		t := x.MulScalar(2)
		t.AddScalar(1).Release()
		t.Release()
		return 2 * 2 * 2 * ElemN // two ops, each reads and writes 16M bfloat16
	}, nil
}

func sum16MBF16() (func() float64, error) {
	x := ember.Rand(ember.Shape{ElemN}).Cast(ember.BFloat16)
	return func() float64 {
		x.Sum().Release()
		return 2 * ElemN
	}, nil
}

// ResNet18MACs is the multiply-adds of one ResNet-18 forward on a 3×h×h
// image (its convolutions and the classifier; 1.814e9 at 224).
func ResNet18MACs(h int) float64 {
	macs := 0.0
	conv := func(cin, cout, k, stride int) {
		h = (h+2*(k/2)-k)/stride + 1
		macs += ConvFLOPs(1, cin, cout, h, h, k, k, 1) / 2
	}
	conv(3, 64, 7, 2)
	h = (h+2-3)/2 + 1 // max pool 3, stride 2, padding 1
	in := 64
	for stage, planes := range []int{64, 128, 256, 512} {
		for block := range 2 {
			stride := 1
			if stage > 0 && block == 0 {
				stride = 2
			}
			hin := h
			conv(in, planes, 3, stride)
			conv(planes, planes, 3, 1)
			if stride != 1 || in != planes {
				hd := (hin-1)/stride + 1
				macs += ConvFLOPs(1, in, planes, hd, hd, 1, 1, 1) / 2
			}
			in = planes
		}
	}
	return macs + 512*1000
}

func resnet18Fwd() (func() float64, error) {
	ember.ManualSeed(1)
	m := models.ResNet18()
	m.Eval()
	x := ember.Randn(ember.Shape{16, 3, 224, 224})
	flops := 2 * 16 * ResNet18MACs(224)
	return func() float64 {
		ember.NoGrad(func() { m.Forward(x).Release() })
		return flops
	}, nil
}

// SimpleCNNMACs is the multiply-adds of one models.SimpleCNN(1, 10) forward
// on a 1×28×28 image.
func SimpleCNNMACs() float64 {
	return (ConvFLOPs(1, 1, 32, 28, 28, 3, 3, 1)+ConvFLOPs(1, 32, 64, 14, 14, 3, 3, 1))/2 + 64*7*7*128 + 128*10
}

func cnnTrainStep() (run func() float64, err error) {
	if !autogradWorks() {
		return nil, notAvailable("no autograd")
	}
	ember.ManualSeed(1)
	m := models.SimpleCNN(1, 10)
	m.Train(true)
	params := optim.ModuleParams(m)
	opt := optim.NewSGD(params, nil, 0.05, 0.9, 0, 5e-4, false) // nil: gradients from p.Grad()
	x := ember.Randn(ember.Shape{64, 1, 28, 28})
	tg := make([]int64, 64)
	for i := range tg {
		tg[i] = int64(i*7) % 10
	}
	y := ember.FromSlice(tg, ember.Shape{64})
	ce := nn.CrossEntropyLoss{}
	flops := 3 * 2 * 64 * SimpleCNNMACs()
	return func() float64 {
		opt.ZeroGrad()
		loss := ce.Loss(m.Forward(x), y)
		loss.Backward()
		opt.Step()
		return flops
	}, nil
}

// resnet18FinetuneStep is a fine-tuning step of a frozen ResNet-18: every
// parameter but the new classifier's has requires_grad false, so backward
// reaches only the classifier. The model is in training mode (batch
// statistics in BatchNorm, as a fine-tuning loop runs it).
func resnet18FinetuneStep() (run func() float64, err error) {
	if !autogradWorks() {
		return nil, notAvailable("no autograd")
	}
	ember.ManualSeed(1)
	m := models.ResNet18(models.NumClasses(10))
	params := FreezeBackbone(m)
	m.Train(true)
	opt := optim.NewSGD(params, nil, 0.01, 0.9, 0, 0, false)
	const batch = 32
	x := ember.Randn(ember.Shape{batch, 3, 64, 64})
	tg := make([]int64, batch)
	for i := range tg {
		tg[i] = int64(i*7) % 10
	}
	y := ember.FromSlice(tg, ember.Shape{batch})
	ce := nn.CrossEntropyLoss{}
	// the forward, and the classifier's input and weight gradients
	flops := 2*batch*ResNet18MACs(64) + 2*2*batch*512*10
	return func() float64 {
		opt.ZeroGrad()
		loss := ce.Loss(m.Forward(x), y)
		loss.Backward()
		opt.Step()
		return flops
	}, nil
}

// FreezeBackbone sets requires_grad false on every parameter of m but its
// classifier's (m.FC) and returns the classifier's, for the optimizer.
func FreezeBackbone(m *models.ResNet) []optim.Param {
	head := map[*ember.Tensor]bool{}
	for _, p := range m.FC.Parameters() {
		head[p] = true
	}
	var params []optim.Param
	for _, n := range m.NamedParameters() {
		if !head[n.Tensor] {
			n.Tensor.SetRequiresGrad(false)
			continue
		}
		params = append(params, optim.Param{Name: n.Name, Tensor: n.Tensor})
	}
	return params
}

// MNISTEpochSteps is how many training steps the mnist_epoch case runs.
const MNISTEpochSteps = 16

// mnistEpoch is what a Fashion-MNIST epoch of `ember train --model cnn`
// costs, per MNISTEpochSteps steps (a full epoch, 938 steps, would take a
// minute): its loop (zero the gradients, forward, cross entropy, backward,
// SGD step, cosine schedule step, the loss's value and the accuracy's argmax)
// over a new batch of 64 each step, cut from synthetic images in [0, 1)
// (the data loader is left out).
func mnistEpoch() (run func() float64, err error) {
	if !autogradWorks() {
		return nil, notAvailable("no autograd")
	}
	ember.ManualSeed(1)
	m := models.SimpleCNN(1, 10)
	m.Train(true)
	opt := optim.NewSGD(optim.ModuleParams(m), nil, 0.05, 0.9, 0, 5e-4, false)
	sched := optim.CosineAnnealingLR(opt, 5*938, 0)
	const batch = 64
	xs := ember.Rand(ember.Shape{MNISTEpochSteps * batch, 1, 28, 28})
	tg := make([]int64, MNISTEpochSteps*batch)
	for i := range tg {
		tg[i] = int64(i % 10)
	}
	ys := ember.FromSlice(tg, ember.Shape{MNISTEpochSteps * batch})
	ce := nn.CrossEntropyLoss{}
	flops := MNISTEpochSteps * 3 * 2 * batch * SimpleCNNMACs()
	return func() float64 {
		correct := 0
		for s := range MNISTEpochSteps {
			x := xs.Narrow(0, s*batch, batch).Contiguous()
			y := ys.Narrow(0, s*batch, batch).Contiguous()
			opt.ZeroGrad()
			out := m.Forward(x)
			loss := ce.Loss(out, y)
			loss.Backward()
			opt.Step()
			sched.Step()
			_ = loss.Item()
			for i, p := range out.ArgMaxDim(1, false).Int64s() {
				if p == tg[s*batch+i] {
					correct++
				}
			}
		}
		_ = correct
		return flops
	}, nil
}

// autogradWorks reports whether Backward fills a leaf's gradient.
func autogradWorks() (ok bool) {
	return catch(func() {
		w := ember.Ones(ember.Shape{2}).SetRequiresGrad(true)
		w.Mul(w).Sum().Backward()
		ok = w.Grad() != nil
	}) == nil && ok
}

func gonumSgemm(n int) func() (func() float64, error) {
	return func() (func() float64, error) {
		ember.ManualSeed(1)
		a := ember.Randn(ember.Shape{n, n}).Float32s()
		b := ember.Randn(ember.Shape{n, n}).Float32s()
		c := make([]float32, n*n)
		var impl gonum.Implementation
		flops := 2 * float64(n) * float64(n) * float64(n)
		return func() float64 {
			impl.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n)
			return flops
		}, nil
	}
}

// halfGemm is an n×n MatMul of two-byte operands, in and out dt: torch.mm
// on bfloat16 (bgemm_1024), float16 (hgemm_1024; torch 1.13 has no CPU
// float16 mm).
func halfGemm(n int, dt ember.DType) func() (func() float64, error) {
	return func() (func() float64, error) {
		ember.ManualSeed(1)
		a := ember.Randn(ember.Shape{n, n}).Cast(dt)
		b := ember.Randn(ember.Shape{n, n}).Cast(dt)
		flops := 2 * float64(n) * float64(n) * float64(n)
		return func() float64 {
			a.MatMul(b).Release()
			return flops
		}, nil
	}
}

func resnet18FwdBF16() (func() float64, error) {
	ember.ManualSeed(1)
	m := models.ResNet18()
	m.Eval()
	x := ember.Randn(ember.Shape{16, 3, 224, 224})
	flops := 2 * 16 * ResNet18MACs(224)
	return func() float64 {
		ember.NoGrad(func() {
			ember.Autocast(ember.CPU, ember.BFloat16, func() { m.Forward(x).Release() })
		})
		return flops
	}, nil
}

func cnnTrainStepAMP() (run func() float64, err error) {
	if !autogradWorks() {
		return nil, notAvailable("no autograd")
	}
	ember.ManualSeed(1)
	m := models.SimpleCNN(1, 10)
	m.Train(true)
	opt := optim.NewSGD(optim.ModuleParams(m), nil, 0.05, 0.9, 0, 5e-4, false)
	x := ember.Randn(ember.Shape{64, 1, 28, 28})
	tg := make([]int64, 64)
	for i := range tg {
		tg[i] = int64(i*7) % 10
	}
	y := ember.FromSlice(tg, ember.Shape{64})
	ce := nn.CrossEntropyLoss{}
	flops := 3 * 2 * 64 * SimpleCNNMACs()
	return func() float64 {
		opt.ZeroGrad()
		var loss *ember.Tensor
		ember.Autocast(ember.CPU, ember.BFloat16, func() { loss = ce.Loss(m.Forward(x), y) })
		loss.Backward()
		opt.Step()
		return flops
	}, nil
}
