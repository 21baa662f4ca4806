// Package nn builds neural networks from layers with PyTorch's names,
// default initialisation and state-dict layout, so weights move between
// ember and PyTorch unchanged.
//
// A layer is a struct that embeds Base and registers its parameters,
// buffers and sub-modules; Base supplies the rest of the Module interface.
package nn

//go:generate go run github.com/emberml/ember/internal/nilguard/gen

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/emberml/ember"
)

// Module is a network layer or a network.
type Module interface {
	// Forward maps an input batch to an output batch.
	Forward(x *ember.Tensor) *ember.Tensor
	// Parameters returns the trainable tensors, in registration order.
	Parameters() []*ember.Tensor
	// NamedParameters returns the parameters with PyTorch's dotted names.
	NamedParameters() []Named
	// Buffers returns the non-trainable state (BatchNorm running stats).
	Buffers() []*ember.Tensor
	// NamedBuffers returns the buffers with dotted names.
	NamedBuffers() []Named
	// StateDict returns parameters and buffers by dotted name.
	StateDict() map[string]*ember.Tensor
	// LoadStateDict copies tensors into the module (see Base.LoadStateDict).
	LoadStateDict(sd map[string]*ember.Tensor, strict bool) error
	// Train sets training mode (on) or evaluation mode, recursively.
	Train(on bool)
	// Eval is Train(false).
	Eval()
	// Training reports the mode.
	Training() bool
	// To moves parameters and buffers to dev and returns the module.
	To(dev ember.Device) Module
	// Registry returns the module's registry.
	Registry() *Base
}

// Named is a tensor with its dotted name.
type Named struct {
	Name   string
	Tensor *ember.Tensor
}

type slot struct {
	name string
	p    **ember.Tensor
}

// child is a registered sub-module. When the module was found in a field
// of the embedding struct at registration (field, and elem for an element
// of a slice or array field), the field is the truth: assigning the field
// (m.FC = nn.NewLinear(...), PyTorch's model.fc = ...) replaces the child.
type child struct {
	name  string
	m     Module
	field []int // index path of the struct field holding the child; nil: none
	elem  int   // index in a slice or array field; -1: the field itself
}

// Base holds a module's registered parameters, buffers and children and
// implements every Module method except Forward. Embed it and call Init
// from the constructor, before registering anything.
type Base struct {
	self     Module
	eval     bool
	params   []slot
	buffers  []slot
	children []child
}

// ModuleError is the panic of a misuse of the module registry (a name
// registered twice, Init not called, a sub-module or parameter field that
// was never registered).
type ModuleError struct {
	Module string // the module's Go type
	Op     string // RegisterModule, To, ...
	Msg    string
}

func (e *ModuleError) Error() string { return "nn: " + e.Op + " on " + e.Module + ": " + e.Msg }

// argErr panics with an *ember.ValueError for a constructor's bad argument:
// "nn.<op>: <message>", as PyTorch's ValueError or assertion.
func argErr(op, format string, args ...any) {
	panic(&ember.ValueError{Op: "nn." + op, Msg: fmt.Sprintf(format, args...)})
}

// useErr panics with a *ModuleError for a call the module does not take.
func useErr(module, op, msg string) {
	panic(&ModuleError{Module: module, Op: op, Msg: msg})
}

// nilModule panics with the *ModuleError of a method called on a nil
// module, the realistic case being a module field of a struct model that
// was never constructed (n.FC.Forward(x) with FC nil).
func nilModule(typ, op string) {
	useErr(typ, op, "called on a nil "+typ+" (a module field that was never set?)")
}

// isNil reports whether m is nil or a nil pointer in a Module (a
// (*Linear)(nil) is not == nil).
func isNil(m Module) bool {
	if m == nil {
		return true
	}
	v := reflect.ValueOf(m)
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// CheckNil panics with a *ModuleError when m is nil: a method op called
// on a module that was never constructed (a struct model's field left
// nil). ember's module types call it first in their methods, through
// zz_nilguard.go for the ones they take from Base (which Go would reach
// through the nil pointer before Base's code runs); a module of your own
// can do the same.
func CheckNil[T any](m *T, op string) {
	if m == nil {
		nilModule(fmt.Sprintf("%T", m), op)
	}
}

func (c *Base) fail(op, format string, args ...any) {
	name := "a module"
	if c.self != nil {
		name = fmt.Sprintf("%T", c.self)
	}
	useErr(name, op, fmt.Sprintf(format, args...))
}

// Init records the embedding module (self), so that To can return it and
// children can be found in its fields. Call it first in the constructor.
func (c *Base) Init(self Module) { c.self = self }

// Registry returns c.
func (c *Base) Registry() *Base { return c }

func (c *Base) checkName(op, name string) {
	if c.self == nil {
		c.fail(op, "Init was not called: call Init(self) in the constructor before registering %q", name)
	}
	if name == "" || strings.Contains(name, ".") {
		c.fail(op, "invalid name %q (names are non-empty and contain no \".\")", name)
	}
	for _, s := range c.params {
		if s.name == name {
			c.fail(op, "%q is already registered as a parameter", name)
		}
	}
	for _, s := range c.buffers {
		if s.name == name {
			c.fail(op, "%q is already registered as a buffer", name)
		}
	}
	for _, ch := range c.children {
		if ch.name == name {
			c.fail(op, "%q is already registered as a sub-module (to replace it, assign its field or call SetModule)", name)
		}
	}
}

// RegisterParameter adds the tensor field *p as a parameter called name
// and, as nn.Parameter, marks a floating-point *p as requiring grad. A nil
// *p (an absent bias) is skipped by every listing, as PyTorch's None. A
// name registered twice panics with a *ModuleError.
func (c *Base) RegisterParameter(name string, p **ember.Tensor) {
	c.checkName("RegisterParameter", name)
	if t := *p; t != nil && t.DType().IsFloat() && t.IsLeaf() && !t.RequiresGrad() {
		t.SetRequiresGrad(true)
	}
	c.params = append(c.params, slot{name, p})
}

// RegisterBuffer adds the tensor field *p as a buffer called name.
func (c *Base) RegisterBuffer(name string, p **ember.Tensor) {
	c.checkName("RegisterBuffer", name)
	c.buffers = append(c.buffers, slot{name, p})
}

// RegisterModule adds m as a child called name. When m is held by an
// exported field of the module (or an element of an exported slice or
// array field, as Sequential's Layers), the field is bound to the name:
// assigning the field later replaces the child, as model.fc = ... does in
// PyTorch. A name registered twice panics with a *ModuleError (SetModule
// replaces a child).
//
// Unlike PyTorch's register_module(name, None), a nil m (nil, or a nil
// *Linear: a field not constructed yet) panics with a *ModuleError: the
// child could not be bound to its field, so constructing the field later
// would not register it. Register an optional child only when it is there.
func (c *Base) RegisterModule(name string, m Module) {
	c.checkName("RegisterModule", name)
	if isNil(m) {
		c.fail("RegisterModule", "%q: nil module%s (construct the module before registering it)", name, typed(m))
	}
	ch := child{name: name, m: m, elem: -1}
	ch.field, ch.elem = c.findField(m)
	c.children = append(c.children, ch)
}

// SetModule replaces the child called name with m (and the field bound to
// it, if any), or adds it when there is none: PyTorch's setattr of a
// module. It returns c's module.
func (c *Base) SetModule(name string, m Module) Module {
	if isNil(m) {
		c.fail("SetModule", "%q: nil module%s", name, typed(m))
	}
	c.registerTail() // a slot appended to a Sequential's Layers is bound by name
	for i := range c.children {
		ch := &c.children[i]
		if ch.name != name {
			continue
		}
		f, ok, gone := c.fieldOf(*ch)
		if gone { // its slice slot was cut off: the new child has no field
			ch.field, ch.elem = nil, -1
		} else if ok {
			v := reflect.ValueOf(m)
			if !v.Type().AssignableTo(f.Type()) {
				c.fail("SetModule", "%q is held by a field of type %v, which cannot hold a %T", name, f.Type(), m)
			}
			f.Set(v)
		}
		ch.m = m
		return c.self
	}
	c.RegisterModule(name, m)
	return c.self
}

// findField returns where in the embedding struct m is held, if it is.
func (c *Base) findField(m Module) ([]int, int) {
	v := reflect.ValueOf(c.self)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, -1
	}
	s := v.Elem()
	for i := range s.NumField() {
		if s.Type().Field(i).Anonymous {
			continue
		}
		f := field(s, i)
		switch f.Kind() {
		case reflect.Interface, reflect.Pointer:
			if sameModule(f, m) {
				return []int{i}, -1
			}
		case reflect.Slice, reflect.Array:
			for j := range f.Len() {
				if e := f.Index(j); (e.Kind() == reflect.Interface || e.Kind() == reflect.Pointer) && sameModule(e, m) {
					return []int{i}, j
				}
			}
		}
	}
	return nil, -1
}

func sameModule(f reflect.Value, m Module) bool {
	if f.IsNil() || !f.CanInterface() {
		return false
	}
	fm, ok := f.Interface().(Module)
	return ok && fm == m
}

// field is field i of the struct s (addressable: reached through the
// module's pointer), readable and settable also when it is unexported, so
// that `fc *nn.Linear` binds as `FC *nn.Linear` does.
func field(s reflect.Value, i int) reflect.Value {
	f := s.Field(i)
	if !f.CanInterface() && f.CanAddr() {
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	}
	return f
}

// fieldOf returns the settable field (or element) bound to ch; ok is false
// when ch is bound to none. gone is true when it was bound to an element
// of a slice that has since been cut short (the child was removed).
func (c *Base) fieldOf(ch child) (f reflect.Value, ok, gone bool) {
	if ch.field == nil || c.self == nil {
		return reflect.Value{}, false, false
	}
	f = field(reflect.ValueOf(c.self).Elem(), ch.field[0])
	if ch.elem >= 0 {
		if ch.elem >= f.Len() {
			return reflect.Value{}, true, true
		}
		f = f.Index(ch.elem)
	}
	return f, true, false
}

// child returns child i as its field holds it now (nil when the field is
// nil, or an interface field holds a nil pointer).
func (c *Base) child(i int) Module {
	ch := c.children[i]
	f, ok, gone := c.fieldOf(ch)
	if !ok {
		return ch.m
	}
	if gone {
		return nil
	}
	m, _ := f.Interface().(Module)
	if isNil(m) {
		return nil
	}
	return m
}

// grower is a container whose children are the elements of one slice
// field (Sequential, ModuleList).
type grower interface{ elems() []Module }

// tail returns the modules appended to a container's slice directly,
// after its registered slots (up to the first nil: Forward reports it),
// and the index of the first. They are children as the registered ones
// are, listed without registering them: listing only reads, so modules
// may be listed from several goroutines.
func (c *Base) tail() (int, []Module) {
	g, ok := c.self.(grower)
	if !ok {
		return 0, nil
	}
	all, n := g.elems(), 0
	for _, ch := range c.children {
		if ch.elem >= 0 {
			n = max(n, ch.elem+1)
		}
	}
	k := n
	for k < len(all) && !isNil(all[k]) {
		k++
	}
	if k <= n {
		return n, nil
	}
	return n, all[n:k]
}

// registerTail registers a container's tail, each module as child "i"
// bound to its own slot (the same module twice: each slot its own), as
// PyTorch's append registers; constructors, Append and SetModule call it.
func (c *Base) registerTail() {
	n, t := c.tail()
	for i, m := range t {
		c.RegisterModule(strconv.Itoa(n+i), m)
		c.children[len(c.children)-1].elem = n + i
	}
}

// eachChild calls f with each present child and its name: the registered
// ones in registration order, then a container's tail.
func (c *Base) eachChild(f func(name string, m Module)) {
	for i, ch := range c.children {
		if m := c.child(i); m != nil {
			f(ch.name, m)
		}
	}
	n, t := c.tail()
	for i, m := range t {
		f(strconv.Itoa(n+i), m)
	}
}

// childModules returns the present children in registration order.
func (c *Base) childModules() []Module {
	out := make([]Module, 0, len(c.children))
	c.eachChild(func(_ string, m Module) { out = append(out, m) })
	return out
}

// Children returns the direct sub-modules with their names.
func (c *Base) Children() (names []string, mods []Module) {
	c.eachChild(func(n string, m Module) {
		names = append(names, n)
		mods = append(mods, m)
	})
	return
}

func (c *Base) walk(prefix string, params bool, visit func(name string, p **ember.Tensor)) {
	slots := c.buffers
	if params {
		slots = c.params
	}
	for _, s := range slots {
		if *s.p != nil {
			visit(prefix+s.name, s.p)
		}
	}
	c.eachChild(func(n string, m Module) { m.Registry().walk(prefix+n+".", params, visit) })
}

// ParameterRefs returns the dotted names of the parameters and the fields
// holding them (for code that replaces parameters, such as initialisers).
func (c *Base) ParameterRefs() (names []string, refs []**ember.Tensor) {
	c.walk("", true, func(n string, p **ember.Tensor) {
		names = append(names, n)
		refs = append(refs, p)
	})
	return
}

// mapSlots replaces each tensor in the parameter (params) or buffer slots
// with f(name, tensor), calling f once per distinct tensor: slots sharing
// a tensor (tied weights) still share the result.
func (c *Base) mapSlots(params bool, f func(name string, t *ember.Tensor) *ember.Tensor) {
	done := map[*ember.Tensor]*ember.Tensor{}
	c.walk("", params, func(n string, p **ember.Tensor) {
		nt, ok := done[*p]
		if !ok {
			nt = f(n, *p)
			done[*p] = nt
		}
		*p = nt
	})
}

// MapParameters replaces every parameter with f(name, parameter); a tensor
// shared by several slots (tied weights) is mapped once, under its first
// name, and stays shared.
func (c *Base) MapParameters(f func(name string, p *ember.Tensor) *ember.Tensor) {
	if f == nil {
		c.fail("MapParameters", "nil function")
	}
	c.mapSlots(true, f)
}

// MapBuffers replaces every buffer with f(name, buffer), as MapParameters.
func (c *Base) MapBuffers(f func(name string, b *ember.Tensor) *ember.Tensor) {
	if f == nil {
		c.fail("MapBuffers", "nil function")
	}
	c.mapSlots(false, f)
}

// unique lists the parameters (params) or buffers depth-first with dotted
// names, each tensor once under its first name, as PyTorch's
// named_parameters(remove_duplicate=True): a module used twice, or a
// weight tied between two layers, is optimized once.
func (c *Base) unique(params bool) []Named {
	var out []Named
	seen := map[*ember.Tensor]bool{}
	c.walk("", params, func(n string, p **ember.Tensor) {
		if !seen[*p] {
			seen[*p] = true
			out = append(out, Named{n, *p})
		}
	})
	return out
}

func tensors(named []Named) []*ember.Tensor {
	out := make([]*ember.Tensor, len(named))
	for i, n := range named {
		out[i] = n.Tensor
	}
	return out
}

// NamedParameters returns the parameters depth-first with dotted names; a
// tensor held by several slots (a shared module, tied weights) is listed
// once, under its first name, as in PyTorch.
func (c *Base) NamedParameters() []Named { return c.unique(true) }

// Parameters returns the parameters depth-first, each tensor once.
func (c *Base) Parameters() []*ember.Tensor { return tensors(c.unique(true)) }

// NamedBuffers returns the buffers depth-first with dotted names, each
// tensor once.
func (c *Base) NamedBuffers() []Named { return c.unique(false) }

// Buffers returns the buffers depth-first, each tensor once.
func (c *Base) Buffers() []*ember.Tensor { return tensors(c.unique(false)) }

func (c *Base) slots() map[string]**ember.Tensor {
	m := map[string]**ember.Tensor{}
	c.walk("", true, func(n string, p **ember.Tensor) { m[n] = p })
	c.walk("", false, func(n string, p **ember.Tensor) { m[n] = p })
	return m
}

// StateDict returns parameters and buffers by dotted name (the tensors
// themselves, not copies).
func (c *Base) StateDict() map[string]*ember.Tensor {
	out := map[string]*ember.Tensor{}
	for n, p := range c.slots() {
		out[n] = *p
	}
	return out
}

// StateDictError lists what LoadStateDict could not match.
type StateDictError struct {
	Missing    []string // keys the module has and sd lacks (strict only)
	Unexpected []string // keys sd has and the module lacks (strict only)
	Mismatched []string // "name: checkpoint shape [..] vs model shape [..]"
	Invalid    []string // "name: nil tensor", "name: a meta tensor has no data to load"
}

func (e *StateDictError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "missing keys: "+strings.Join(e.Missing, ", "))
	}
	if len(e.Unexpected) > 0 {
		parts = append(parts, "unexpected keys: "+strings.Join(e.Unexpected, ", "))
	}
	if len(e.Mismatched) > 0 {
		parts = append(parts, "size mismatch: "+strings.Join(e.Mismatched, "; "))
	}
	if len(e.Invalid) > 0 {
		parts = append(parts, "invalid tensors: "+strings.Join(e.Invalid, "; "))
	}
	return "nn: load state dict: " + strings.Join(parts, "; ")
}

// LoadStateDict copies sd's tensors into the module's parameters and
// buffers in place (the tensors keep their identity, so an optimizer built
// on them stays attached), converting dtype and device to the module's. With strict, keys
// missing from sd or unknown to the module are an error; shape mismatches,
// nil and meta tensors and released ones always are. Nothing is changed
// when an error is returned.
func (c *Base) LoadStateDict(sd map[string]*ember.Tensor, strict bool) error {
	slots := c.slots()
	e := &StateDictError{}
	for n, p := range slots {
		t, ok := sd[n]
		if !ok {
			if strict {
				e.Missing = append(e.Missing, n)
			}
			continue
		}
		if t == nil {
			e.Invalid = append(e.Invalid, n+": nil tensor")
			continue
		}
		if t.Device() == ember.Meta && (*p).Device() != ember.Meta {
			e.Invalid = append(e.Invalid, n+": a meta tensor has no data to load")
			continue
		}
		if !t.Shape().Equal((*p).Shape()) {
			e.Mismatched = append(e.Mismatched, fmt.Sprintf("%s: checkpoint shape %v vs model shape %v", n, t.Shape(), (*p).Shape()))
		}
	}
	if strict {
		for n := range sd {
			if _, ok := slots[n]; !ok {
				e.Unexpected = append(e.Unexpected, n)
			}
		}
	}
	if len(e.Missing)+len(e.Unexpected)+len(e.Mismatched)+len(e.Invalid) > 0 {
		sort.Strings(e.Missing)
		sort.Strings(e.Unexpected)
		sort.Strings(e.Mismatched)
		sort.Strings(e.Invalid)
		return e
	}
	// every source read (cast to its slot's dtype) before any slot is
	// written, so that a bad one (a released tensor) loses nothing
	src := map[string]*ember.Tensor{}
	if err := ember.Try(func() {
		for n, p := range slots {
			if t, ok := sd[n]; ok {
				src[n] = t.Detach().Cast((*p).DType())
			}
		}
	}); err != nil {
		return fmt.Errorf("nn: load state dict: %w", err)
	}
	// through detached views (which share the storage): no graph
	for n, p := range slots {
		if t, ok := src[n]; ok {
			(*p).Detach().CopyFrom(t)
		}
	}
	return nil
}

// Train sets training mode on c and every descendant.
func (c *Base) Train(on bool) {
	c.eval = !on
	for _, m := range c.childModules() {
		m.Train(on)
	}
}

// Eval sets evaluation mode.
func (c *Base) Eval() { c.Train(false) }

// Training reports whether c is in training mode (the default).
func (c *Base) Training() bool { return !c.eval }

// To moves every parameter and buffer to dev (keeping requires-grad) and
// returns the module. Tensors already on dev are kept; moved ones are new
// tensors, so call To before building an optimizer on the parameters. A
// tensor held by several slots (tied weights) is moved once and stays
// shared.
func (c *Base) To(dev ember.Device) Module {
	if c.self == nil {
		c.fail("To", "Init was not called: call Init(self) in the module's constructor")
	}
	if err := Check(c.self); err != nil {
		panic(err)
	}
	move := func(_ string, t *ember.Tensor) *ember.Tensor {
		if t.Device() == dev {
			return t
		}
		nt := t.Detach().To(dev) // a new leaf, not a ToCopyBackward0 of the old one
		if t.RequiresGrad() {
			nt.SetRequiresGrad(true)
		}
		return nt
	}
	c.mapSlots(true, move) // tied weights stay tied
	c.mapSlots(false, move)
	return c.self
}

// RequiresGrad sets whether autograd records gradients for every parameter
// of the module (PyTorch's requires_grad_) and returns the module. Frozen
// parameters take no part in autograd: a backward through a frozen
// backbone computes nothing for it, only for what follows the last
// parameter that requires grad.
func (c *Base) RequiresGrad(on bool) Module {
	c.walk("", true, func(_ string, p **ember.Tensor) {
		if (*p).IsLeaf() && (*p).DType().IsFloat() {
			(*p).SetRequiresGrad(on)
		}
	})
	return c.self
}

// ZeroGrad clears the gradient of every parameter (PyTorch's
// module.zero_grad(), which sets them to None).
func (c *Base) ZeroGrad() {
	c.walk("", true, func(_ string, p **ember.Tensor) { (*p).ZeroGrad() })
}

// MoveTo is m.To(dev) keeping m's type.
func MoveTo[M Module](m M, dev ember.Device) M {
	m.To(dev)
	return m
}

// NumParameters counts the parameters' elements; a nil m panics with a
// *ModuleError.
func NumParameters(m Module) int {
	if isNil(m) {
		useErr(fmt.Sprintf("%T", m), "NumParameters", "nil module")
	}
	n := 0
	for _, p := range m.Parameters() {
		n += p.NumElements()
	}
	return n
}

// Sequential runs modules in order; children are named "0", "1", ...
type Sequential struct {
	Base
	Layers []Module
}

// NewSequential returns a Sequential of layers; a nil layer (nil, or a nil
// *Linear) panics with a *ModuleError.
func NewSequential(layers ...Module) *Sequential {
	noNil("*nn.Sequential", "NewSequential", "layer", layers)
	s := &Sequential{Layers: layers}
	s.Init(s)
	s.registerTail()
	return s
}

func (s *Sequential) elems() []Module { return s.Layers }

// Append adds m as the last layer and returns s (PyTorch's append). A
// layer appended to Layers directly is a child too (listed by Parameters,
// StateDict, To, ...), and is registered by the next Append or SetModule.
func (s *Sequential) Append(m Module) *Sequential {
	CheckNil(s, "Append")
	if isNil(m) {
		useErr("*nn.Sequential", "Append", "nil module"+typed(m))
	}
	s.Layers = append(s.Layers, m)
	s.registerTail()
	return s
}

// At returns layer i (negative counts from the end); an i out of range
// panics with an *ember.IndexError, as PyTorch's IndexError.
func (s *Sequential) At(i int) Module {
	CheckNil(s, "At")
	return s.Layers[index("nn.Sequential.At", i, len(s.Layers))]
}

// index returns i (negative counts from the end) or panics with an
// *ember.IndexError when it is not in [-n, n).
func index(op string, i, n int) int {
	if i < -n || i >= n {
		panic(&ember.IndexError{Op: op, Index: int64(i), Size: n})
	}
	if i < 0 {
		i += n
	}
	return i
}

// noNil panics with a *ModuleError naming typ and op when one of ms (its
// what: layer, module) is nil.
func noNil(typ, op, what string, ms []Module) {
	for i, m := range ms {
		if isNil(m) {
			useErr(typ, op, fmt.Sprintf("%s %d is a nil module%s", what, i, typed(m)))
		}
	}
}

// typed is " (a nil *nn.Linear)" for a nil pointer in m, "" for nil.
func typed(m Module) string {
	if m == nil {
		return ""
	}
	return fmt.Sprintf(" (a nil %T)", m)
}

// Len is the number of layers.
func (s *Sequential) Len() int {
	CheckNil(s, "Len")
	return len(s.Layers)
}

// Forward runs the layers in order.
func (s *Sequential) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(s, "Forward")
	for i, l := range s.Layers {
		if isNil(l) {
			useErr("*nn.Sequential", "Forward", fmt.Sprintf("layer %d is a nil module%s", i, typed(l)))
		}
		x = l.Forward(x)
	}
	return x
}
