package nn_test

import (
	"errors"
	"reflect"
	"sort"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/vision/models"
)

// modules lists every module reachable through the registry, depth-first.
func modules(m nn.Module) []nn.Module {
	out := []nn.Module{m}
	_, kids := m.Registry().Children()
	for _, k := range kids {
		out = append(out, modules(k)...)
	}
	return out
}

func values(ts []nn.Named) map[string][]float64 {
	out := map[string][]float64{}
	for _, n := range ts {
		out[n.Name] = n.Tensor.Cast(ember.Float64).Float64s()
	}
	return out
}

func sameValues(t *testing.T, what string, got, want map[string][]float64) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s changed", what)
	}
}

func names(ts []nn.Named) []string {
	var out []string
	for _, n := range ts {
		out = append(out, n.Name)
	}
	sort.Strings(out)
	return out
}

func zeroGrads(m nn.Module) {
	for _, p := range m.Parameters() {
		p.ZeroGrad()
	}
}

func grads(m nn.Module) map[string]*ember.Tensor {
	out := map[string]*ember.Tensor{}
	for _, n := range m.NamedParameters() {
		out[n.Name] = n.Tensor.Grad()
	}
	return out
}

// checkReplica checks that a replica of m is a copy that shares no module
// and no tensor with m, computes what m computes from the copied tensors it
// holds in its own fields, passes gradients back to m's parameters, and
// leaves m's parameters and buffers alone when its own change.
func checkReplica(t *testing.T, name string, m nn.Module, x *ember.Tensor) {
	t.Helper()
	rep := nn.ReplicaOn(m, ember.CPU)
	if reflect.TypeOf(rep) != reflect.TypeOf(m) {
		t.Fatalf("%s: replica is a %T", name, rep)
	}
	om, rm := modules(m), modules(rep)
	if len(om) != len(rm) {
		t.Fatalf("%s: %d modules in the replica, %d in the original", name, len(rm), len(om))
	}
	orig := map[nn.Module]bool{}
	for _, o := range om {
		orig[o] = true
	}
	for i, r := range rm {
		if orig[r] {
			t.Fatalf("%s: replica shares module %d (%T) with the original", name, i, r)
		}
		if reflect.TypeOf(r) != reflect.TypeOf(om[i]) || r.Training() != om[i].Training() {
			t.Fatalf("%s: module %d is a %T (training %v), want %T (training %v)", name, i, r, r.Training(), om[i], om[i].Training())
		}
	}
	if !reflect.DeepEqual(names(rep.NamedParameters()), names(m.NamedParameters())) ||
		!reflect.DeepEqual(names(rep.NamedBuffers()), names(m.NamedBuffers())) {
		t.Fatalf("%s: replica's names differ", name)
	}
	ot := map[*ember.Tensor]bool{}
	for _, p := range append(m.Parameters(), m.Buffers()...) {
		ot[p] = true
	}
	for _, p := range append(rep.Parameters(), rep.Buffers()...) {
		if ot[p] {
			t.Fatalf("%s: replica shares a tensor with the original", name)
		}
	}
	sameValues(t, name+": replica's state", values(append(rep.NamedParameters(), rep.NamedBuffers()...)), values(append(m.NamedParameters(), m.NamedBuffers()...)))

	// the replica's forward and backward: outputs equal, gradients reach
	// the original parameters and equal those of the original's own backward
	bufs := values(m.NamedBuffers())
	zeroGrads(m)
	yr := rep.Forward(x)
	sameValues(t, name+": original buffers after the replica's forward", values(m.NamedBuffers()), bufs)
	if len(m.Parameters()) > 0 {
		yr.Square().Sum().Backward()
	}
	gr := grads(m)
	for _, p := range rep.Parameters() {
		if p.IsLeaf() {
			t.Fatalf("%s: a replica parameter is a leaf: gradients would stop there", name)
		}
	}
	zeroGrads(m)
	ym := m.Forward(x)
	if !ember.AllClose(yr, ym, 1e-6, 1e-6) {
		t.Fatalf("%s: replica output differs from the original's", name)
	}
	if len(m.Parameters()) > 0 {
		ym.Square().Sum().Backward()
	}
	for k, g := range grads(m) {
		if g == nil || gr[k] == nil || !ember.AllClose(gr[k], g, 1e-5, 1e-6) {
			t.Fatalf("%s: gradient of %s through the replica %v, want %v", name, k, gr[k], g)
		}
	}
	zeroGrads(m)

	// the replica's forward reads its own fields: zeroing its parameters
	// changes its output and leaves the original's parameters alone
	if len(m.Parameters()) > 0 {
		params := values(m.NamedParameters())
		for _, p := range rep.Parameters() {
			p.Detach().ZeroInPlace()
		}
		sameValues(t, name+": original parameters after zeroing the replica's", values(m.NamedParameters()), params)
		if ember.AllClose(rep.Forward(x), m.Forward(x), 1e-6, 1e-6) {
			t.Fatalf("%s: the replica's output ignores its own (zeroed) parameters", name)
		}
	}
}

func randn(shape ...int) *ember.Tensor { return ember.Randn(shape) }

// withBuffers gives BatchNorms running statistics other than 0 and 1, so
// eval-mode outputs depend on them.
func withBuffers(m nn.Module) nn.Module {
	for _, b := range m.NamedBuffers() {
		if b.Tensor.DType().IsFloat() {
			b.Tensor.CopyFrom(ember.Rand(b.Tensor.Shape()).AddScalar(0.5))
		}
	}
	return m
}

func TestReplicateEveryModule(t *testing.T) {
	ember.ManualSeed(1)
	img := randn(3, 2, 8, 8)
	for _, c := range []struct {
		name string
		m    nn.Module
		x    *ember.Tensor
	}{
		{"Linear", nn.NewLinear(4, 3, true), randn(5, 4)},
		{"Linear no bias", nn.NewLinear(4, 3, false), randn(5, 4)},
		{"Conv2d", nn.NewConv2d(2, 4, 3, nn.Padding(1)), img},
		{"Conv2d groups, no bias", nn.NewConv2d(2, 4, 3, nn.Groups(2), nn.NoBias(), nn.Stride(2)), img},
		{"BatchNorm2d", nn.NewBatchNorm2d(2), img},
		{"BatchNorm1d eval", eval(withBuffers(nn.NewBatchNorm1d(4))), randn(5, 4)},
		{"LayerNorm", nn.NewLayerNorm(4), randn(5, 4)},
		{"Embedding", nn.NewEmbedding(6, 3), ember.FromSlice([]int64{0, 5, 2, 2}, nil)},
		{"ReLU", nn.NewReLU(), randn(5, 4)},
		{"LeakyReLU", nn.NewLeakyReLU(0.2), randn(5, 4)},
		{"GELU", nn.NewGELU(), randn(5, 4)},
		{"Sigmoid", nn.NewSigmoid(), randn(5, 4)},
		{"Tanh", nn.NewTanh(), randn(5, 4)},
		{"Flatten", nn.NewFlatten(), img},
		{"Dropout eval", eval(nn.NewDropout(0.5)), randn(5, 4)},
		{"MaxPool2d", nn.NewMaxPool2d(2, 0, 0), img},
		{"AvgPool2d", nn.NewAvgPool2d(3, 1, 1), img},
		{"AdaptiveAvgPool2d", nn.NewAdaptiveAvgPool2d(2, 2), img},
		{"Sequential", nn.NewSequential(nn.NewLinear(4, 6, true), nn.NewReLU(), nn.NewSequential(nn.NewLinear(6, 2, true), nn.NewTanh())), randn(5, 4)},
		{"SimpleCNN", models.SimpleCNN(1, 10), randn(2, 1, 28, 28)},
		{"SimpleCNN eval", eval(withBuffers(models.SimpleCNN(1, 10))), randn(2, 1, 28, 28)},
		{"ResNet-18", models.ResNet18(models.Width(4), models.NumClasses(3), models.InChannels(2)), randn(2, 2, 16, 16)},
		{"tied and unexported", newTied(), randn(3, 4)},
		{"Replicator", newOwnCopy(), randn(3, 4)},
	} {
		checkReplica(t, c.name, c.m, c.x)
	}
}

func eval(m nn.Module) nn.Module { m.Eval(); return m }

// The copy keeps aliasing: a child held by a field and by the registry is
// one module in the replica.
func TestReplicaAliasing(t *testing.T) {
	r := models.ResNet18(models.Width(4))
	rep := nn.ReplicaOn(r, ember.CPU).(*models.ResNet)
	_, kids := rep.Registry().Children()
	if nn.Module(rep.Conv1) != kids[0] || nn.Module(rep.Layer4) != kids[6] || nn.Module(rep.FC) != kids[8] {
		t.Fatal("ResNet replica: fields and registry hold different children")
	}
	if rep.Conv1 == r.Conv1 || rep.Conv1.Weight == r.Conv1.Weight {
		t.Fatal("ResNet replica shares conv1 with the original")
	}
	if rep.Conv1.Weight != rep.NamedParameters()[0].Tensor {
		t.Fatal("the replica's conv1.weight field is not its registered parameter")
	}
	blk := rep.Layer2.Layers[0].(*models.BasicBlock)
	_, bk := rep.Layer2.Registry().Children()
	if nn.Module(blk) != bk[0] || blk.Downsample == nil || blk.Downsample == r.Layer2.Layers[0].(*models.BasicBlock).Downsample {
		t.Fatal("ResNet replica: layer2.0 is not copied consistently")
	}
}

// tied holds a child in an unexported field, another in a map, and uses
// one weight twice (registered under two names, as tied embeddings).
type tied struct {
	nn.Base
	inner *nn.Linear
	heads map[string]nn.Module
	W, W2 *ember.Tensor
}

func newTied() *tied {
	m := &tied{inner: nn.NewLinear(4, 4, true), heads: map[string]nn.Module{"a": nn.NewLinear(4, 2, false)}}
	m.Init(m)
	m.W = ember.Randn(ember.Shape{4, 4}).SetRequiresGrad(true)
	m.W2 = m.W
	m.RegisterParameter("w", &m.W)
	m.RegisterParameter("w2", &m.W2)
	m.RegisterModule("inner", m.inner)
	m.RegisterModule("head", m.heads["a"])
	return m
}

func (m *tied) Forward(x *ember.Tensor) *ember.Tensor {
	if m.W != m.W2 {
		panic("tied weights untied")
	}
	return m.heads["a"].Forward(m.inner.Forward(x.MatMul(m.W)).Add(x.MatMul(m.W2.T())))
}

// ownCopy keeps its parameter outside its struct, which the reflection copy
// refuses; it implements Replicator.
type ownCopy struct {
	nn.Base
	store *struct{ w *ember.Tensor }
	Lin   *nn.Linear
}

func newOwnCopy() *ownCopy {
	m := &ownCopy{store: &struct{ w *ember.Tensor }{ember.Randn(ember.Shape{4}).SetRequiresGrad(true)}, Lin: nn.NewLinear(4, 2, true)}
	m.register()
	return m
}

func (m *ownCopy) register() {
	m.Init(m)
	m.RegisterParameter("w", &m.store.w)
	m.RegisterModule("lin", m.Lin)
}

func (m *ownCopy) ReplicateModule(rep func(nn.Module) nn.Module) nn.Module {
	c := &ownCopy{store: &struct{ w *ember.Tensor }{m.store.w}, Lin: rep(m.Lin).(*nn.Linear)}
	c.register()
	c.Train(m.Training())
	return c
}

func (m *ownCopy) Forward(x *ember.Tensor) *ember.Tensor { return m.Lin.Forward(x.Mul(m.store.w)) }

// outside is ownCopy without ReplicateModule.
type outside struct {
	nn.Base
	store *struct{ w *ember.Tensor }
}

func (m *outside) Forward(x *ember.Tensor) *ember.Tensor { return x.Mul(m.store.w) }

type baseByPointer struct{ *nn.Base }

func (m *baseByPointer) Forward(x *ember.Tensor) *ember.Tensor { return x }

func TestReplicateRefuses(t *testing.T) {
	o := &outside{store: &struct{ w *ember.Tensor }{ember.Ones(ember.Shape{2})}}
	o.Init(o)
	o.RegisterParameter("w", &o.store.w)
	bp := &baseByPointer{Base: &nn.Base{}}
	bp.Init(bp)
	for _, m := range []nn.Module{o, bp} {
		err := ember.Try(func() { nn.NewDataParallel(m, ember.CPU, ember.CPU) })
		var re *nn.ReplicateError
		if !errors.As(err, &re) {
			t.Errorf("%T: %v, want a *ReplicateError", m, err)
		} else {
			t.Log(re)
		}
	}
}

// BenchmarkReplicate measures a replica of ResNet-18 (11.7 M parameters):
// the structural copy alone (reflection) and the whole replica, whose
// parameter and buffer copies dominate.
func BenchmarkReplicate(b *testing.B) {
	r := models.ResNet18()
	b.Run("structure", func(b *testing.B) {
		for b.Loop() {
			nn.ReplicateStructure(r)
		}
	})
	b.Run("replica", func(b *testing.B) {
		for b.Loop() {
			nn.ReplicaOn(r, ember.CPU)
		}
	})
}

// To moves parameters as new leaves that require grad (a differentiable
// copy, ToCopyBackward0, could not be a parameter), buffers as they are.
func TestModuleToKeepsLeaves(t *testing.T) {
	m := nn.NewSequential(nn.NewLinear(2, 3, true), nn.NewBatchNorm1d(3))
	m.To(ember.Meta)
	for _, n := range append(m.NamedParameters(), m.NamedBuffers()...) {
		isParam := n.Name[2:] == "weight" || n.Name[2:] == "bias"
		if n.Tensor.Device() != ember.Meta || !n.Tensor.IsLeaf() || n.Tensor.RequiresGrad() != isParam {
			t.Errorf("%s: on %v, leaf %v, requires grad %v", n.Name, n.Tensor.Device(), n.Tensor.IsLeaf(), n.Tensor.RequiresGrad())
		}
	}
}
