// Package nilguard writes, for every module type of a package (a named
// struct whose pointer has a Forward(*ember.Tensor) *ember.Tensor method),
// a method for each exported method it gets by embedding (nn.Base's
// Parameters, StateDict, To, ...), which panics with an *nn.ModuleError on
// a nil receiver before calling the embedded one.
//
// Go cannot do without them: calling a promoted method on a nil *T
// evaluates &t.Base, which is a nil dereference (a runtime error) before
// any method of Base runs, even when Base is T's first field. A module
// field that was never constructed (n.FC.Parameters() with FC nil) thus
// gets a typed error naming the module instead.
package nilguard

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// File is the name of the generated file.
const File = "zz_nilguard.go"

const nnPath = "github.com/emberml/ember/nn"

// Generate returns the source of File for the package in dir (its files
// but File itself, tests excluded).
func Generate(dir string) ([]byte, error) {
	pkg, err := load(dir)
	if err != nil {
		return nil, err
	}
	return generate(pkg)
}

// Modules returns the names of the module types of the package in dir.
func Modules(dir string) ([]string, error) {
	pkg, err := load(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range pkg.Scope().Names() {
		if named := moduleType(pkg, n); named != nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// moduleType returns the named struct type n if *n is a module.
func moduleType(pkg *types.Package, n string) *types.Named {
	tn, ok := pkg.Scope().Lookup(n).(*types.TypeName)
	if !ok || tn.IsAlias() {
		return nil
	}
	named, ok := tn.Type().(*types.Named)
	if !ok {
		return nil
	}
	if _, ok := named.Underlying().(*types.Struct); !ok {
		return nil
	}
	if !isModule(types.NewMethodSet(types.NewPointer(named))) {
		return nil
	}
	return named
}

func load(dir string) (*types.Package, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool {
		n := fi.Name()
		return n != File && !strings.HasSuffix(n, "_test.go")
	}, 0)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for n, p := range pkgs {
		if strings.HasSuffix(n, "_test") {
			continue
		}
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	sort.Slice(files, func(i, j int) bool { return fset.File(files[i].Pos()).Name() < fset.File(files[j].Pos()).Name() })
	exports, path, err := exportData(dir)
	if err != nil {
		return nil, err
	}
	imp := importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) {
		f, ok := exports[p]
		if !ok {
			return nil, fmt.Errorf("nilguard: no export data for %s", p)
		}
		return os.Open(f)
	})
	var errs []error
	conf := types.Config{Importer: imp, Error: func(err error) { errs = append(errs, err) }}
	pkg, _ := conf.Check(path, fset, files, nil)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return pkg, nil
}

func generate(pkg *types.Package) ([]byte, error) {
	name, path := pkg.Name(), pkg.Path()
	inNN := path == nnPath
	nnQual := "nn." // what CheckNil is called by
	if inNN {
		nnQual = ""
	}
	qual := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	}
	used := map[string]bool{}
	var body bytes.Buffer
	scope := pkg.Scope()
	for _, n := range scope.Names() {
		named := moduleType(pkg, n)
		if named == nil {
			continue
		}
		ms := types.NewMethodSet(types.NewPointer(named))
		typeName := "*" + name + "." + n
		for i := range ms.Len() {
			sel := ms.At(i)
			f := sel.Obj().(*types.Func)
			if !f.Exported() || len(sel.Index()) == 1 {
				continue // declared on the type itself: it checks for nil
			}
			sig := f.Type().(*types.Signature)
			// the path of embedded fields to the method
			var path []string
			var t types.Type = named
			for _, ix := range sel.Index()[:len(sel.Index())-1] {
				st := deref(t).Underlying().(*types.Struct)
				fld := st.Field(ix)
				path = append(path, fld.Name())
				t = fld.Type()
			}
			recv := "m"
			names := map[string]bool{}
			for j := range sig.Params().Len() {
				names[sig.Params().At(j).Name()] = true
			}
			for _, r := range []string{"m", "mod", "self", "recv"} {
				if !names[r] {
					recv = r
					break
				}
			}
			var params, args []string
			for j := range sig.Params().Len() {
				p := sig.Params().At(j)
				pn := p.Name()
				if pn == "" || pn == "_" {
					pn = fmt.Sprintf("a%d", j)
				}
				ts := types.TypeString(p.Type(), qual)
				arg := pn
				if sig.Variadic() && j == sig.Params().Len()-1 {
					ts = "..." + types.TypeString(p.Type().(*types.Slice).Elem(), qual)
					arg += "..."
				}
				params = append(params, pn+" "+ts)
				args = append(args, arg)
				markImports(p.Type(), pkg, used)
			}
			var results []string
			for j := range sig.Results().Len() {
				r := sig.Results().At(j)
				ts := types.TypeString(r.Type(), qual)
				if r.Name() != "" {
					ts = r.Name() + " " + ts
				}
				results = append(results, ts)
				markImports(r.Type(), pkg, used)
			}
			res := strings.Join(results, ", ")
			if len(results) > 1 || (len(results) == 1 && sig.Results().At(0).Name() != "") {
				res = "(" + res + ")"
			}
			ret := "return "
			if len(results) == 0 {
				ret = ""
			}
			fmt.Fprintf(&body, "\n// %s is %s.%s; on a nil %s it panics with an\n// *nn.ModuleError.\n", f.Name(), path[len(path)-1], f.Name(), typeName)
			fmt.Fprintf(&body, "func (%s *%s) %s(%s) %s {\n", recv, n, f.Name(), strings.Join(params, ", "), res)
			fmt.Fprintf(&body, "\t%sCheckNil(%s, %q)\n", nnQual, recv, f.Name())
			fmt.Fprintf(&body, "\t%s%s.%s.%s(%s)\n}\n", ret, recv, strings.Join(path, "."), f.Name(), strings.Join(args, ", "))
		}
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by internal/nilguard/gen; DO NOT EDIT.\n\npackage %s\n\n", name)
	if !inNN {
		used[nnPath] = true
	}
	var imports []string
	for p := range used {
		imports = append(imports, p)
	}
	sort.Strings(imports)
	if len(imports) > 0 {
		out.WriteString("import (\n")
		for _, p := range imports {
			fmt.Fprintf(&out, "\t%q\n", p)
		}
		out.WriteString(")\n")
	}
	out.Write(body.Bytes())
	return format.Source(out.Bytes())
}

func deref(t types.Type) types.Type {
	if p, ok := t.(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// isModule reports whether the method set has Forward(*ember.Tensor) *ember.Tensor.
func isModule(ms *types.MethodSet) bool {
	for i := range ms.Len() {
		f := ms.At(i).Obj()
		if f.Name() != "Forward" {
			continue
		}
		sig := f.Type().(*types.Signature)
		return sig.Params().Len() == 1 && sig.Results().Len() == 1 &&
			sig.Params().At(0).Type().String() == "*github.com/emberml/ember.Tensor" &&
			sig.Results().At(0).Type().String() == "*github.com/emberml/ember.Tensor"
	}
	return false
}

// markImports records the packages other than pkg that t names.
func markImports(t types.Type, pkg *types.Package, used map[string]bool) {
	switch t := t.(type) {
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil && p != pkg {
			used[p.Path()] = true
		}
		if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				markImports(args.At(i), pkg, used)
			}
		}
	case *types.Pointer:
		markImports(t.Elem(), pkg, used)
	case *types.Slice:
		markImports(t.Elem(), pkg, used)
	case *types.Array:
		markImports(t.Elem(), pkg, used)
	case *types.Map:
		markImports(t.Key(), pkg, used)
		markImports(t.Elem(), pkg, used)
	case *types.Chan:
		markImports(t.Elem(), pkg, used)
	case *types.Signature:
		for i := range t.Params().Len() {
			markImports(t.Params().At(i).Type(), pkg, used)
		}
		for i := range t.Results().Len() {
			markImports(t.Results().At(i).Type(), pkg, used)
		}
	}
}

// exportData returns the export-data files of dir's package's
// dependencies (from go list -export, which builds them) and the
// package's import path.
func exportData(dir string) (map[string]string, string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", ".")
	cmd.Dir = abs
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("nilguard: go list: %v: %s", err, stderr.String())
	}
	m := map[string]string{}
	var last string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, f, _ := strings.Cut(line, " ")
		m[p] = f
		last = p // -deps lists the package itself last
	}
	return m, last, nil
}
