// Package nilguardtest checks a package's nil-receiver guards (see
// package nilguard).
package nilguardtest

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/nilguard"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/nn"
)

// Check is the test of a package with module types: nilguard.File is current, mods
// (a nil pointer of each) are all of the package's module types, and
// every exported method of each, called on the nil pointer, panics with
// an *nn.ModuleError naming the type and the method.
func Check(t *testing.T, mods ...nn.Module) {
	t.Helper()
	want, err := nilguard.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(nilguard.File); err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate (%v)", nilguard.File, err)
	}
	names, err := nilguard.Modules(".")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range mods {
		got = append(got, reflect.TypeOf(m).Elem().Name())
	}
	slices.Sort(got)
	if !slices.Equal(got, names) {
		t.Errorf("the test lists %v, the package's module types are %v", got, names)
	}
	for _, m := range mods {
		typ := reflect.TypeOf(m)
		for _, meth := range testenv.CallMethods(m, func(at reflect.Type) reflect.Value {
			if at == reflect.TypeFor[*ember.Tensor]() {
				return reflect.ValueOf(ember.Ones(ember.Shape{2, 2}))
			}
			return reflect.Zero(at) // (a variadic parameter gets none)
		}) {
			r := meth.Panic
			name := typ.String() + "." + meth.Name
			var me *nn.ModuleError
			err, _ := r.(error)
			var re runtime.Error
			switch {
			case r == nil:
				t.Errorf("%s on nil: no panic", name)
			case errors.As(err, &re):
				t.Errorf("%s on nil: runtime error %v", name, r)
			case !errors.As(err, &me):
				t.Errorf("%s on nil: panicked with %T %v, want *nn.ModuleError", name, r, r)
			case me.Module != typ.String() || me.Op != meth.Name || !strings.Contains(me.Msg, "called on a nil "+typ.String()):
				t.Errorf("%s on nil: %v", name, me)
			}
		}
	}
}
