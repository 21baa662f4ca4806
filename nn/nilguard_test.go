package nn

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
)

// nilModules is a nil pointer of every module type of the package
// (TestNilModuleTypesListed keeps it complete).
var nilModules = []Module{
	(*Activation)(nil), (*AdaptiveAvgPool2d)(nil), (*BatchNorm)(nil), (*Conv2d)(nil),
	(*DataParallel)(nil), (*DistributedDataParallel)(nil), (*Dropout)(nil), (*Embedding)(nil),
	(*LayerNorm)(nil), (*Linear)(nil), (*ModuleList)(nil), (*MultiheadAttention)(nil),
	(*NonDynamicallyQuantizableLinear)(nil), (*Pool)(nil), (*RMSNorm)(nil), (*Sequential)(nil),
	(*TransformerDecoder)(nil), (*TransformerDecoderLayer)(nil), (*TransformerEncoder)(nil),
	(*TransformerEncoderLayer)(nil),
}

func TestNilModuleTypesListed(t *testing.T) {
	want, err := nilguard.Modules(".")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range nilModules {
		got = append(got, reflect.TypeOf(m).Elem().Name())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("nilModules lists %v, the package's module types are %v", got, want)
	}
}

// zz_nilguard.go is what go generate writes now.
func TestNilGuardsUpToDate(t *testing.T) {
	want, err := nilguard.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(nilguard.File)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go generate ./nn", nilguard.File)
	}
}

// Every exported method of every module type, called on a nil receiver
// (a module field that was never constructed), panics with a
// *ModuleError naming the type and the method, not a nil dereference.
func TestNilModuleMethods(t *testing.T) {
	tensorType := reflect.TypeFor[*ember.Tensor]()
	for _, m := range nilModules {
		v := reflect.ValueOf(m)
		typ := v.Type()
		for i := range typ.NumMethod() {
			meth := typ.Method(i)
			args := []reflect.Value{v}
			n := meth.Type.NumIn()
			if meth.Type.IsVariadic() {
				n--
			}
			for j := 1; j < n; j++ {
				if at := meth.Type.In(j); at == tensorType {
					args = append(args, reflect.ValueOf(ember.Ones(ember.Shape{2, 2})))
				} else {
					args = append(args, reflect.Zero(at))
				}
			}
			var r any
			func() {
				defer func() { r = recover() }()
				meth.Func.Call(args)
			}()
			name := typ.String() + "." + meth.Name
			var me *ModuleError
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

// The realistic case: a struct model whose field was never constructed.
type netWithNilFC struct {
	Base
	FC *Linear
}

func (n *netWithNilFC) Forward(x *ember.Tensor) *ember.Tensor { return n.FC.Forward(x) }

func TestNilModuleField(t *testing.T) {
	n := &netWithNilFC{}
	n.Init(n)
	e := raises[*ModuleError](t, "n.FC.Forward", func() { n.Forward(ember.Ones(ember.Shape{1, 2})) })
	if e.Error() != "nn: Forward on *nn.Linear: called on a nil *nn.Linear (a module field that was never set?)" {
		t.Error(e)
	}
	raises[*ModuleError](t, "n.FC.Parameters", func() { n.FC.Parameters() })

	// registering the nil field is refused: it could not be bound
	e = raises[*ModuleError](t, "RegisterModule(nil *Linear)", func() { n.RegisterModule("fc", n.FC) })
	if !strings.Contains(e.Msg, `"fc": nil module (a nil *nn.Linear)`) {
		t.Error(e)
	}
	raises[*ModuleError](t, "RegisterModule(nil)", func() { n.RegisterModule("fc", nil) })
	raises[*ModuleError](t, "SetModule(nil *Linear)", func() { n.SetModule("fc", (*Linear)(nil)) })

	// a registered field set to nil later is skipped (PyTorch's None)
	n.FC = NewLinear(2, 3, true)
	n.RegisterModule("fc", n.FC)
	if got := len(n.Parameters()); got != 2 {
		t.Fatalf("%d parameters, want 2", got)
	}
	n.FC = nil
	if got := len(n.Parameters()); got != 0 {
		t.Fatalf("%d parameters with FC nil, want 0", got)
	}
	// likewise an interface field holding a nil pointer
	s := NewSequential(NewLinear(2, 2, false), NewReLU())
	s.Layers[0] = (*Linear)(nil)
	if got := len(s.Parameters()); got != 0 || len(s.StateDict()) != 0 {
		t.Fatalf("%d parameters with layer 0 a nil *Linear, want 0", got)
	}
	e = raises[*ModuleError](t, "Sequential.Forward with a nil layer", func() { s.Forward(ember.Ones(ember.Shape{1, 2})) })
	if e.Msg != "layer 0 is a nil module (a nil *nn.Linear)" {
		t.Error(e)
	}

	e = raises[*ModuleError](t, "NumParameters(nil)", func() { NumParameters(nil) })
	raises[*ModuleError](t, "NumParameters(nil *Linear)", func() { NumParameters((*Linear)(nil)) })
	if err := Check((*Linear)(nil)); err != nil {
		t.Errorf("Check(nil *Linear) = %v, want nil as Check(nil)", err)
	}
}

func TestNilModuleConstructors(t *testing.T) {
	var fc *Linear
	e := raises[*ModuleError](t, "NewSequential", func() { NewSequential(NewReLU(), fc) })
	if e.Op != "NewSequential" || e.Msg != "layer 1 is a nil module (a nil *nn.Linear)" {
		t.Error(e)
	}
	raises[*ModuleError](t, "NewSequential(nil)", func() { NewSequential(nil) })
	raises[*ModuleError](t, "NewModuleList", func() { NewModuleList(fc) })
	raises[*ember.ValueError](t, "NewDataParallel", func() { NewDataParallel(fc) })
	if _, err := NewDistributedDataParallel(fc); err == nil || !strings.Contains(err.Error(), "nil module") {
		t.Errorf("NewDistributedDataParallel(nil *Linear): %v", err)
	}
	var el *TransformerEncoderLayer
	raises[*ember.ValueError](t, "NewTransformerEncoder(nil layer)", func() { NewTransformerEncoder(el, 2, nil) })
	// a nil *LayerNorm norm is no norm, as nil
	var ln *LayerNorm
	enc := NewTransformerEncoder(NewTransformerEncoderLayer(4, 2, FeedForward(8)), 1, ln)
	if enc.Norm != nil {
		t.Errorf("Norm = %v, want nil", enc.Norm)
	}
	for _, n := range enc.NamedParameters() {
		if strings.HasPrefix(n.Name, "norm.") {
			t.Errorf("parameter %s from a nil norm", n.Name)
		}
	}
}

// As PyTorch's nn.Sequential(...)[5]: IndexError, not a Go index panic.
func TestSequentialAtRange(t *testing.T) {
	a, b := NewReLU(), NewTanh()
	s := NewSequential(a, b)
	if s.At(-1) != b || s.At(0) != a || s.At(-2) != a {
		t.Fatal("At")
	}
	for _, i := range []int{2, -3, 100} {
		e := raises[*ember.IndexError](t, "At", func() { s.At(i) })
		if e.Index != int64(i) || e.Size != 2 {
			t.Error(e)
		}
	}
	raises[*ember.IndexError](t, "ModuleList.At", func() { NewModuleList().At(0) })
}
