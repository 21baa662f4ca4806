package distributions

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// nilDists holds a nil pointer of every distribution type.
var nilDists = []Distribution{
	(*Normal)(nil), (*LogNormal)(nil), (*Uniform)(nil), (*Exponential)(nil), (*Laplace)(nil),
	(*Gamma)(nil), (*Dirichlet)(nil), (*Beta)(nil), (*Poisson)(nil), (*Bernoulli)(nil),
	(*Binomial)(nil), (*Geometric)(nil), (*Categorical)(nil), (*OneHotCategorical)(nil),
	(*Independent)(nil), (*MultivariateNormal)(nil), (*StudentT)(nil), (*Cauchy)(nil),
	(*HalfNormal)(nil), (*HalfCauchy)(nil), (*Gumbel)(nil), (*Chi2)(nil), (*VonMises)(nil),
	(*Weibull)(nil), (*Pareto)(nil), (*RelaxedBernoulli)(nil), (*RelaxedOneHotCategorical)(nil),
	(*ContinuousBernoulli)(nil), (*LowRankMultivariateNormal)(nil),
}

// TestNilReceivers calls every exported method of every type on a nil
// pointer: each must panic with an *ember.ValueError naming the type and
// the method, not dereference nil.
func TestNilReceivers(t *testing.T) {
	arg := map[reflect.Type]reflect.Value{
		reflect.TypeOf((*ember.Tensor)(nil)): reflect.ValueOf(ember.Scalar(0)),
	}
	for _, d := range nilDists {
		v := reflect.ValueOf(d)
		name := v.Type().Elem().Name()
		for i := 0; i < v.NumMethod(); i++ {
			m := v.Type().Method(i)
			mt := m.Type
			var in []reflect.Value
			for j := 1; j < mt.NumIn(); j++ {
				a, ok := arg[mt.In(j)]
				if !ok {
					a = reflect.Zero(mt.In(j))
				}
				in = append(in, a)
			}
			if mt.IsVariadic() {
				in[len(in)-1] = reflect.ValueOf([]int{2})
			}
			err := ember.Try(func() {
				if mt.IsVariadic() {
					v.Method(i).CallSlice(in)
				} else {
					v.Method(i).Call(in)
				}
			})
			var ve *ember.ValueError
			if !errors.As(err, &ve) {
				t.Errorf("(*%s)(nil).%s: %v, want an *ember.ValueError", name, m.Name, err)
				continue
			}
			if want := "distributions." + name + "." + m.Name; ve.Op != want || !strings.Contains(ve.Error(), "nil *distributions."+name) {
				t.Errorf("(*%s)(nil).%s: %q (op %q), want op %q", name, m.Name, ve.Error(), ve.Op, want)
			}
		}
	}
}

// TestNilDistsComplete checks nilDists lists every distribution type of
// the package (a struct embedding base, or another distribution).
func TestNilDistsComplete(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, pkg := range pkgs {
		ast.Inspect(pkg, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() {
				return true
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, f := range st.Fields.List {
					if len(f.Names) == 0 {
						found = append(found, ts.Name.Name)
						break
					}
				}
			}
			return true
		})
	}
	have := map[string]bool{}
	for _, d := range nilDists {
		have[reflect.TypeOf(d).Elem().Name()] = true
	}
	sort.Strings(found)
	for _, n := range found {
		if !have[n] {
			t.Errorf("distribution type %s is missing from nilDists", n)
		}
	}
	if len(found) != len(nilDists) {
		t.Errorf("%d distribution types, %d in nilDists", len(found), len(nilDists))
	}
}
