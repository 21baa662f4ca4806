package nn

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/emberml/ember"
)

// Replicating a module for DataParallel.
//
// A module is a Go struct that embeds Base; Base's slots are pointers to
// the struct's *ember.Tensor fields, and the struct's fields may also point
// to its children. A replica must be a structural copy in which both the
// fields and the registry refer to the copy: copying the struct alone would
// leave the slots pointing into the original, so that setting a replica's
// parameters would overwrite the original's.
//
// The default (reflection) copy does, for each module reached:
//   - a shallow copy of the struct (every field, unexported ones too);
//   - fields, slice/array elements and map values that hold a Module
//     (interfaces, or pointers to module types) are replaced by that
//     module's replica, memoised, so a child held both by a field and by
//     the registry (ResNet.Conv1, Sequential.Layers) has one replica;
//   - the Base is re-pointed: each slot at the same offset in the copy as
//     in the original, children replaced by their replicas, self by the
//     copy.
//
// What stays shared: tensors in unregistered fields (read-only constants),
// pointers to non-module values, functions and closures. A module whose
// slots point outside its own struct, or whose Base is not a field of it,
// cannot be copied this way: it implements Replicator.

// Replicator is implemented by a module that makes its own structural copy
// for DataParallel, when the reflection-based copy cannot (a module whose
// registered tensors live outside its struct, or that holds state other
// than tensors that replicas must not share).
type Replicator interface {
	// ReplicateModule returns a new module of the same type whose
	// registry (Registry) lists the same parameters, buffers and children,
	// in the same order, with slots pointing into the new module; each
	// child is rep(child). The tensors in the copy's slots are replaced
	// afterwards (with copies on the replica's device), so they need not be
	// copied.
	ReplicateModule(rep func(Module) Module) Module
}

// ReplicateError is the panic of a module that cannot be replicated.
type ReplicateError struct {
	Module string // the module's Go type
	Msg    string
}

func (e *ReplicateError) Error() string {
	return "nn: cannot replicate " + e.Module + ": " + e.Msg + " (implement nn.Replicator)"
}

var (
	moduleType = reflect.TypeFor[Module]()
	baseType   = reflect.TypeFor[Base]()
)

type replicator struct {
	memo map[Module]Module
}

// replicateStructure returns a structural copy of m (see above) whose slots
// still hold m's tensors.
func replicateStructure(m Module) Module {
	r := &replicator{memo: map[Module]Module{}}
	return r.module(m)
}

func (r *replicator) fail(m any, format string, args ...any) {
	panic(&ReplicateError{Module: fmt.Sprintf("%T", m), Msg: fmt.Sprintf(format, args...)})
}

func (r *replicator) module(m Module) Module {
	if m == nil {
		return nil
	}
	if c, ok := r.memo[m]; ok {
		return c
	}
	if rp, ok := m.(Replicator); ok {
		c := rp.ReplicateModule(r.module)
		if reflect.TypeOf(c) != reflect.TypeOf(m) {
			r.fail(m, "ReplicateModule returned a %T", c)
		}
		r.memo[m] = c
		ob, nb := m.Registry(), c.Registry()
		if ob == nb || len(ob.params) != len(nb.params) || len(ob.buffers) != len(nb.buffers) || len(ob.children) != len(nb.children) {
			r.fail(m, "ReplicateModule's copy does not have a registry of its own like the original's")
		}
		return c
	}
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		r.fail(m, "not a pointer to a struct")
	}
	st := v.Elem().Type()
	cp := reflect.New(st)
	cp.Elem().Set(v.Elem())
	c := cp.Interface().(Module)
	r.memo[m] = c

	lo, size := v.Pointer(), st.Size()
	offset := func(p unsafe.Pointer) (uintptr, bool) {
		a := uintptr(p)
		return a - lo, a >= lo && a < lo+size
	}
	ob := m.Registry()
	off, ok := offset(unsafe.Pointer(ob))
	if !ok {
		r.fail(m, "its Base is not a field of the struct (embed nn.Base, not *nn.Base)")
	}
	nb := (*Base)(unsafe.Add(cp.UnsafePointer(), off))
	if c.Registry() != nb {
		r.fail(m, "its copy's Registry is not the copy's Base")
	}
	for i, ch := range ob.children {
		if chv := reflect.ValueOf(ob.child(i)); chv.Kind() == reflect.Pointer {
			if _, inside := offset(chv.UnsafePointer()); inside {
				r.fail(m, "child %q is stored inside the parent's struct", ch.name)
			}
		}
	}
	r.fix(cp.Elem())

	reslot := func(kind string, slots []slot) []slot {
		out := make([]slot, len(slots))
		for i, s := range slots {
			off, ok := offset(unsafe.Pointer(s.p))
			if !ok {
				r.fail(m, "%s %q is not a field of the module's struct", kind, s.name)
			}
			out[i] = slot{s.name, (**ember.Tensor)(unsafe.Add(cp.UnsafePointer(), off))}
		}
		return out
	}
	nb.params = reslot("parameter", ob.params)
	nb.buffers = reslot("buffer", ob.buffers)
	nb.children = make([]child, len(ob.children))
	for i, ch := range ob.children {
		nb.children[i] = child{name: ch.name, m: r.module(ob.child(i)), field: ch.field, elem: ch.elem}
	}
	if ob.self != nil {
		nb.self = r.module(ob.self)
	}
	return c
}

// fix replaces, in the addressable copy v, every module reachable through
// fields, elements and map values by its replica.
func (r *replicator) fix(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == baseType {
			return // re-pointed from the registry
		}
		for i := range v.NumField() {
			if f := v.Field(i); mayHoldModule(f.Type()) {
				if !f.CanSet() { // unexported: reach it through its address
					f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
				}
				r.fix(f)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			r.fix(v.Index(i))
		}
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(n, v)
		for i := range n.Len() {
			r.fix(n.Index(i))
		}
		v.Set(n)
	case reflect.Map:
		if v.IsNil() {
			return
		}
		n := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			r.fix(e)
			n.SetMapIndex(it.Key(), e)
		}
		v.Set(n)
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		if m, ok := v.Interface().(Module); ok {
			v.Set(reflect.ValueOf(r.module(m)))
		}
	}
}

var holdsModule sync.Map // reflect.Type → bool

// mayHoldModule reports whether a value of type t can refer to a Module
// that the copy must replace (interfaces are checked at run time).
func mayHoldModule(t reflect.Type) bool {
	if b, ok := holdsModule.Load(t); ok {
		return b.(bool)
	}
	b := holds(t, map[reflect.Type]bool{})
	holdsModule.Store(t, b)
	return b
}

func holds(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer:
		return t.Implements(moduleType)
	case reflect.Struct:
		if t == baseType {
			return false
		}
		for i := range t.NumField() {
			if holds(t.Field(i).Type, seen) {
				return true
			}
		}
	case reflect.Array, reflect.Slice, reflect.Map:
		return holds(t.Elem(), seen)
	}
	return false
}

// replicaOn returns a replica of m on dev: a structural copy whose
// parameters are differentiable copies of m's (gradients flow back to m's
// parameters: ToCopyBackward0 or CloneBackward0) and whose buffers are
// copies. With grad disabled, parameters already on dev are shared (read
// only) instead of copied.
func replicaOn(m Module, dev ember.Device) Module {
	c := replicateStructure(m)
	grad := ember.IsGradEnabled()
	copies := map[*ember.Tensor]*ember.Tensor{} // tied tensors stay tied
	dup := func(t *ember.Tensor, param bool) *ember.Tensor {
		if d, ok := copies[t]; ok {
			return d
		}
		var d *ember.Tensor
		switch {
		case t.Device() != dev:
			if !param {
				t = t.Detach()
			}
			d = t.To(dev)
		case param && !grad:
			d = t
		case param:
			d = t.Clone()
		default:
			d = t.Detach().Clone()
		}
		copies[t] = d
		return d
	}
	for _, params := range []bool{true, false} {
		src, dst := allSlots(m.Registry(), params, nil), allSlots(c.Registry(), params, nil)
		if len(src) != len(dst) {
			panic(&ReplicateError{Module: fmt.Sprintf("%T", m), Msg: "the copy's registry differs from the original's"})
		}
		for i, p := range src {
			if *p == nil {
				*dst[i] = nil
			} else {
				*dst[i] = dup(*p, params)
			}
		}
	}
	return c
}

// allSlots lists the parameter (or buffer) slots of b and its descendants
// depth-first, nil ones included, so that two registries of the same
// structure line up.
func allSlots(b *Base, params bool, out []**ember.Tensor) []**ember.Tensor {
	ss := b.buffers
	if params {
		ss = b.params
	}
	for _, s := range ss {
		out = append(out, s.p)
	}
	for _, m := range b.childModules() {
		out = allSlots(m.Registry(), params, out)
	}
	return out
}
