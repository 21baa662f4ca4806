package nn_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/vision/models"
)

// model.fc = nn.Linear(512, 10): assigning the field replaces the child.
func TestReplaceChildByField(t *testing.T) {
	r := models.ResNet18()
	r.FC = nn.NewLinear(512, 10, true)
	// 11,689,512 parameters with the 1000-class head; 512·10+10 with the new one
	if got := nn.NumParameters(r); got != 11181642 {
		t.Fatalf("after m.FC = Linear(512, 10): %d parameters, want 11181642", got)
	}
	if w := r.StateDict()["fc.weight"]; w != r.FC.Weight {
		t.Fatal("StateDict's fc.weight is not the new head's")
	}
	r.To(ember.Meta)
	if r.FC.Weight.Device() != ember.Meta {
		t.Fatal("To did not move the new head")
	}
	// SetModule does the same, and writes the field
	head := nn.NewLinear(512, 3, false)
	r.SetModule("fc", head)
	if r.FC != head || nn.NumParameters(r) != 11181642-5130+1536 {
		t.Fatalf("SetModule: field %p, %d parameters", r.FC, nn.NumParameters(r))
	}
	// Sequential's Layers are bound too
	s := nn.NewSequential(nn.NewLinear(3, 4, true), nn.NewReLU())
	s.Layers[0] = nn.NewLinear(3, 2, true)
	if got := nn.NumParameters(s); got != 8 {
		t.Fatalf("Sequential after Layers[0] = Linear(3, 2): %d parameters, want 8", got)
	}
}

type noInit struct {
	nn.Base
	W *ember.Tensor
}

func (m *noInit) Forward(x *ember.Tensor) *ember.Tensor { return x }

type forgot struct {
	nn.Base
	Head  *nn.Linear
	Extra *ember.Tensor
}

func (m *forgot) Forward(x *ember.Tensor) *ember.Tensor { return m.Head.Forward(x) }

func moduleErr(t *testing.T, what, want string, f func()) {
	t.Helper()
	err := ember.Try(f)
	var me *nn.ModuleError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: %v, want a *nn.ModuleError saying %q", what, err, want)
	}
}

func TestRegistrationIsSafe(t *testing.T) {
	r := models.ResNet18(models.Width(4))
	moduleErr(t, "registering fc again", `"fc" is already registered as a sub-module`, func() { r.RegisterModule("fc", nn.NewLinear(32, 10, true)) })
	l := nn.NewLinear(2, 2, true)
	moduleErr(t, "a duplicate parameter", `"weight" is already registered`, func() { l.RegisterParameter("weight", &l.Bias) })

	m := &noInit{W: ember.Zeros(ember.Shape{2})}
	moduleErr(t, "To without Init", "Init was not called", func() { m.To(ember.CPU) })
	moduleErr(t, "registering without Init", "Init was not called", func() { m.RegisterParameter("w", &m.W) })

	// RegisterParameter marks the tensor as requiring grad, as nn.Parameter
	m.Init(m)
	m.RegisterParameter("w", &m.W)
	if !m.W.RequiresGrad() {
		t.Fatal("RegisterParameter left the tensor without requires_grad")
	}

	// a child (or a parameter) that was never registered: Check, and To
	f := &forgot{Head: nn.NewLinear(2, 2, true), Extra: ember.Zeros(ember.Shape{2}).SetRequiresGrad(true)}
	f.Init(f)
	err := nn.Check(f)
	if err == nil || !strings.Contains(err.Error(), "field Head holds a *nn.Linear that is not registered") || !strings.Contains(err.Error(), "field Extra requires grad but is not registered") {
		t.Fatalf("Check of unregistered fields: %v", err)
	}
	moduleErr(t, "To with an unregistered child", "not registered", func() { f.To(ember.CPU) })
	f.RegisterModule("head", f.Head)
	f.RegisterParameter("extra", &f.Extra)
	if err := nn.Check(f); err != nil {
		t.Fatal(err)
	}
	if err := nn.Check(models.ResNet18(models.Width(4))); err != nil {
		t.Fatalf("ResNet: %v", err)
	}
}

func TestFrozenBackbone(t *testing.T) {
	ember.ManualSeed(3)
	r := models.ResNet18(models.Width(4), models.NumClasses(3))
	r.RequiresGrad(false)
	r.FC.RequiresGrad(true)
	x := ember.Randn(ember.Shape{2, 3, 32, 32})
	feats := r.Layer4.Forward(r.Layer3.Forward(r.Layer2.Forward(r.Layer1.Forward(r.MaxPool.Forward(r.BN1.Forward(r.Conv1.Forward(x)).ReLU())))))
	if feats.RequiresGrad() || feats.GradFn() != "" {
		t.Fatalf("the frozen backbone recorded a graph (%s)", feats.GradFn())
	}
	r.Forward(x).Sum().Backward()
	for _, p := range r.NamedParameters() {
		if got := p.Tensor.Grad() != nil; got != strings.HasPrefix(p.Name, "fc.") {
			t.Fatalf("%s: has grad %v", p.Name, got)
		}
	}
	// d sum(fc(f)) / d bias = batch size, per class
	if got := r.FC.Bias.Grad().Float32s(); fmt.Sprint(got) != "[2 2 2]" {
		t.Fatalf("fc.bias grad = %v, want [2 2 2]", got)
	}
	r.ZeroGrad()
	if r.FC.Weight.Grad() != nil || r.FC.Bias.Grad() != nil {
		t.Fatal("ZeroGrad left gradients")
	}
}

func TestModuleRepr(t *testing.T) {
	b, err := os.ReadFile("../testdata/nn/repr.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	blk := &Block{Conv1: nn.NewConv2d(4, 8, 3, nn.Stride(2), nn.Padding(1), nn.NoBias()), BN1: nn.NewBatchNorm2d(8),
		Downsample: nn.NewSequential(nn.NewConv2d(4, 8, 1, nn.Stride(2), nn.NoBias()), nn.NewBatchNorm2d(8))}
	blk.Init(blk)
	blk.RegisterModule("conv1", blk.Conv1)
	blk.RegisterModule("bn1", blk.BN1)
	blk.RegisterModule("downsample", blk.Downsample)
	got := map[string]fmt.Stringer{
		"linear": nn.NewSequential(nn.NewLinear(3, 1, true)),
		"cnn":    models.SimpleCNN(1, 10),
		"misc": nn.NewSequential(nn.NewEmbedding(10, 3), nn.NewLayerNorm(3), nn.NewDropout(0.25), nn.NewLeakyReLU(0.2), nn.NewGELU(),
			nn.NewSequential(nn.NewConv2d(4, 8, 3, nn.Dilation(2), nn.Groups(2), nn.NoBias()), nn.NewAvgPool2d(3, 2, 1)),
			nn.NewBatchNorm1d(6), nn.NewAdaptiveAvgPool2d(1, 1), nn.NewSigmoid(), nn.NewTanh(), nn.NewLinear(4, 2, false)),
		"block": blk,
	}
	for name, m := range got {
		if s := fmt.Sprint(m); s != want[name] {
			t.Errorf("%s:\n%s\nwant (PyTorch):\n%s", name, s, want[name])
		}
	}
}

type Block struct {
	nn.Base
	Conv1      *nn.Conv2d
	BN1        *nn.BatchNorm
	Downsample *nn.Sequential
}

func (b *Block) Forward(x *ember.Tensor) *ember.Tensor { return x }

// TestNilFunctions: MapParameters, MapBuffers and DDP's NoSync given a nil
// function panic with a *ModuleError, not a runtime error.
func TestNilFunctions(t *testing.T) {
	l := nn.NewLinear(2, 2, true)
	moduleErr(t, "MapParameters(nil)", "nil function", func() { l.MapParameters(nil) })
	moduleErr(t, "MapBuffers(nil)", "nil function", func() { l.MapBuffers(nil) })
	moduleErr(t, "NoSync(nil)", "nil function", func() { new(nn.DistributedDataParallel).NoSync(nil) })
}

// TestLoadStateDictRefusesBadTensors: a nil, meta or released tensor in a
// state dict is an error that changes nothing, not a panic, and not a
// silent no-op (copying out of a meta tensor loaded nothing); other dtypes
// convert, as copy_ does.
func TestLoadStateDictRefusesBadTensors(t *testing.T) {
	l := nn.NewLinear(3, 2, true)
	before := l.Weight.Detach().Clone()
	released := ember.Ones(ember.Shape{2, 3})
	released.Release()
	bias := ember.Zeros(ember.Shape{2})
	for name, w := range map[string]*ember.Tensor{
		"nil":      nil,
		"meta":     ember.Ones(ember.Shape{2, 3}, ember.On(ember.Meta)),
		"released": released,
	} {
		var err error
		if perr := ember.Try(func() { err = l.LoadStateDict(map[string]*ember.Tensor{"weight": w, "bias": bias}, true) }); perr != nil {
			t.Fatalf("%s: panicked: %v", name, perr)
		}
		if err == nil {
			t.Errorf("%s weight loaded", name)
		}
		if !ember.Equal(l.Weight, before) || l.Bias.Abs().Sum().Item() == 0 {
			t.Errorf("%s: a failed load changed the module", name)
		}
	}
	w := ember.FromSlice([]int64{1, 2, 3, 4, 5, 6}, ember.Shape{2, 3})
	if err := l.LoadStateDict(map[string]*ember.Tensor{"weight": w, "bias": bias}, true); err != nil || l.Weight.DType() != ember.Float32 || l.Weight.Detach().Sum().Item() != 21 {
		t.Errorf("int64 weights: %v, %v", err, l.Weight)
	}
}

// A Sequential grows as a Go slice does (append to Layers) or through
// Append, PyTorch's append; both register the layer.
func TestSequentialGrows(t *testing.T) {
	s := nn.NewSequential(nn.NewLinear(3, 4, true))
	s.Layers = append(s.Layers, nn.NewLinear(4, 2, true)) // 3·4+4 + 4·2+2 = 26
	if got := nn.NumParameters(s); got != 26 {
		t.Fatalf("after append(s.Layers, Linear(4, 2)): %d parameters, want 26", got)
	}
	if s.StateDict()["1.weight"] != s.Layers[1].(*nn.Linear).Weight {
		t.Fatal("StateDict lacks the appended layer's 1.weight")
	}
	s.Append(nn.NewReLU()).Append(nn.NewLinear(2, 1, false)) // + 2
	if got, want := nn.NumParameters(s), 28; got != want || s.Len() != 4 {
		t.Fatalf("after two Appends: %d parameters and %d layers, want %d and 4", got, s.Len(), want)
	}
	if !strings.Contains(s.String(), "(3): Linear(in_features=2, out_features=1, bias=False)") {
		t.Fatalf("repr lacks the appended layer:\n%s", s)
	}
	moduleErr(t, "Append(nil)", "nil module", func() { s.Append(nil) })
	s.To(ember.Meta) // Check finds every layer registered
	if s.Layers[3].(*nn.Linear).Weight.Device() != ember.Meta {
		t.Fatal("To did not move the appended layer")
	}

	// the same module twice: listed once (as PyTorch's parameters()), in
	// StateDict under both names; each slot is its own child, so replacing
	// the second leaves the first
	l := nn.NewLinear(2, 2, true)
	d := nn.NewSequential(l, nn.NewReLU(), l)
	if got, sd := nn.NumParameters(d), d.StateDict(); got != 6 || len(sd) != 4 || sd["2.weight"] != l.Weight {
		t.Fatalf("Sequential(l, ReLU, l): %d parameters, state dict %d keys, want 6 and 4", got, len(sd))
	}
	if n := d.NamedParameters(); len(n) != 2 || n[0].Name != "0.weight" || n[1].Name != "0.bias" {
		t.Fatalf("NamedParameters of Sequential(l, ReLU, l): %v, want 0.weight and 0.bias", n)
	}
	d.To(ember.Meta) // moved once: the two slots still share
	if d.Layers[0] != d.Layers[2] || l.Weight.Device() != ember.Meta || d.StateDict()["2.weight"] != l.Weight {
		t.Fatal("To(meta) untied the shared layer")
	}
	d.Layers[2] = nn.NewLinear(2, 3, true)
	if sd := d.StateDict(); sd["0.weight"] != l.Weight || sd["2.weight"].Shape()[0] != 3 || nn.NumParameters(d) != 15 {
		t.Fatalf("after Layers[2] = Linear(2, 3): 0.weight %v, 2.weight %v", sd["0.weight"].Shape(), sd["2.weight"].Shape())
	}

	m := nn.NewModuleList(nn.NewLinear(1, 1, false))
	m.Modules = append(m.Modules, nn.NewLinear(1, 1, false))
	m.Append(nn.NewLinear(1, 2, false))
	if got := nn.NumParameters(m); got != 4 || m.Len() != 3 {
		t.Fatalf("ModuleList after append and Append: %d parameters, %d modules, want 4 and 3", got, m.Len())
	}
}

// A weight tied between two layers (a decoder sharing its embedding's
// matrix) is one parameter, and stays one through To.
func TestTiedWeights(t *testing.T) {
	emb := nn.NewEmbedding(5, 3)
	head := nn.NewLinear(3, 5, false)
	head.Weight = emb.Weight
	s := nn.NewSequential(emb, head)
	if got := nn.NumParameters(s); got != 15 {
		t.Fatalf("tied embedding and head: %d parameters, want 15", got)
	}
	s.To(ember.Meta)
	if emb.Weight != head.Weight || emb.Weight.Device() != ember.Meta || !emb.Weight.RequiresGrad() {
		t.Fatal("To(meta) untied the weights")
	}
	n := 0
	s.MapParameters(func(_ string, p *ember.Tensor) *ember.Tensor { n++; return ember.Zeros(p.Shape()) })
	if n != 1 || emb.Weight != head.Weight {
		t.Fatalf("MapParameters called f %d times and left the weights tied: %v; want once, tied", n, emb.Weight == head.Weight)
	}
}

// Listing a Sequential grown by append only reads it (goroutines may list
// it at once: run with -race), a child registered under another name does
// not shift the slots, and SetModule binds an appended slot by its name.
func TestSequentialTailIsReadOnly(t *testing.T) {
	s := nn.NewSequential(nn.NewLinear(2, 2, true))
	s.RegisterModule("extra", nn.NewLinear(1, 1, false)) // 1 parameter
	s.Layers = append(s.Layers, nn.NewLinear(2, 3, true), nn.NewReLU())
	var wg sync.WaitGroup
	counts := make([]int, 4)
	for g := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[g] = nn.NumParameters(s)
			_ = s.String()
		}()
	}
	wg.Wait()
	for _, n := range counts {
		if n != 6+1+9 {
			t.Fatalf("NumParameters from goroutines: %v, want 16 each", counts)
		}
	}
	names, _ := s.Children()
	if got := strings.Join(names, ","); got != "0,extra,1,2" {
		t.Fatalf("children %s, want 0,extra,1,2", got)
	}
	head := nn.NewLinear(2, 5, false)
	s.SetModule("1", head)
	if s.Layers[1] != head || nn.NumParameters(s) != 6+1+10 {
		t.Fatalf("SetModule(\"1\") on an appended slot: Layers[1] %v, %d parameters, want the new head and 17", s.Layers[1], nn.NumParameters(s))
	}
}
