package nn

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/emberml/ember"
)

var tensorPtrType = reflect.TypeFor[*ember.Tensor]()

// Check reports the registry mistakes Go cannot catch at compile time, in m
// and every registered descendant: a module whose constructor did not call
// Init, a field (exported or not) holding a module that is registered
// nowhere in m's tree (its parameters would be missing from Parameters,
// StateDict and To; a field keeping a handle on a grandchild is fine),
// and a tensor field that requires grad but is not registered as a
// parameter. To panics with Check's error, so such a module fails on its
// first move; tests of a custom module can call it.
func Check(m Module) error {
	var errs []error
	seen := map[Module]bool{}
	inTree := map[Module]bool{} // every module registered under m
	var collect func(m Module)
	collect = func(m Module) {
		if isNil(m) || inTree[m] {
			return
		}
		inTree[m] = true
		if b := m.Registry(); b != nil && b.self == m {
			for _, c := range b.childModules() {
				collect(c)
			}
		}
	}
	collect(m)
	var visit func(path string, m Module)
	visit = func(path string, m Module) {
		if isNil(m) || seen[m] {
			return
		}
		seen[m] = true
		b := m.Registry()
		if b == nil {
			return
		}
		if b.self == nil {
			errs = append(errs, &ModuleError{Module: fmt.Sprintf("%T", m), Op: "Check", Msg: "Init was not called" + at(path) + ": call Init(self) in the constructor"})
			return
		}
		if b.self != m {
			return // a wrapper handing out another module's registry
		}
		slots := map[**ember.Tensor]bool{}
		for _, s := range append(append([]slot(nil), b.params...), b.buffers...) {
			slots[s.p] = true
		}
		v := reflect.ValueOf(m)
		if v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
			s := v.Elem()
			for i := range s.NumField() {
				sf := s.Type().Field(i)
				if sf.Anonymous {
					continue
				}
				f := field(s, i)
				if f.Type() == tensorPtrType {
					if t := f.Interface().(*ember.Tensor); t != nil && t.RequiresGrad() && !slots[f.Addr().Interface().(**ember.Tensor)] {
						errs = append(errs, &ModuleError{Module: fmt.Sprintf("%T", m), Op: "Check", Msg: fmt.Sprintf("field %s%s requires grad but is not registered (RegisterParameter)", sf.Name, at(path))})
					}
					continue
				}
				check := func(e reflect.Value, name string) {
					if (e.Kind() != reflect.Interface && e.Kind() != reflect.Pointer) || e.IsNil() {
						return
					}
					if cm, ok := e.Interface().(Module); ok && !inTree[cm] {
						errs = append(errs, &ModuleError{Module: fmt.Sprintf("%T", m), Op: "Check", Msg: fmt.Sprintf("field %s%s holds a %T that is not registered (RegisterModule, or SetModule to replace a child)", name, at(path), cm)})
					}
				}
				switch f.Kind() {
				case reflect.Interface, reflect.Pointer:
					check(f, sf.Name)
				case reflect.Slice, reflect.Array:
					for j := range f.Len() {
						check(f.Index(j), fmt.Sprintf("%s[%d]", sf.Name, j))
					}
				}
			}
		}
		names, mods := b.Children()
		for i, c := range mods {
			p := names[i]
			if path != "" {
				p = path + "." + names[i]
			}
			visit(p, c)
		}
	}
	visit("", m)
	return errors.Join(errs...)
}

func at(path string) string {
	if path == "" {
		return ""
	}
	return " (at " + path + ")"
}
