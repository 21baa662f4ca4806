package dl

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/ebitengine/purego"

	"github.com/emberml/ember/internal/cuda/libpath"
)

// Func is one C function of a binding.
type Func struct {
	Name     string   // the exported name, e.g. "cuMemAlloc_v2"; it names the function in errors
	Alts     []string // other exported names to try, in order, when Name is missing
	Optional bool     // the binding works without it: Resolve does not report it missing
	// Fn, when set, is a pointer to a Go function variable that Resolve
	// binds to the C function with purego.RegisterFunc, for calls that
	// SyscallN's word arguments cannot make (a struct passed by value,
	// strings). Leave it nil for functions called with SyscallN. A table
	// with such functions is resolved once, at load, before any is used.
	Fn any
}

// Funcs makes a table of functions called by their single names, the first
// required of them needed and the rest optional.
func Funcs(names []string, required int) []Func {
	out := make([]Func, len(names))
	for i, n := range names {
		out[i] = Func{Name: n, Optional: i >= required}
	}
	return out
}

// Table is a binding's functions looked up in one opened library. A
// function's address is resolved with dlsym on first use (or by Resolve)
// and kept; a missing function is an error, never a panic. Its methods are
// safe for concurrent use.
type Table struct {
	lib    *libpath.Lib
	funcs  []Func
	addrs  []atomic.Uintptr
	byName map[string]int
}

// NewTable makes the table of funcs in lib; nothing is resolved yet.
func NewTable(lib *libpath.Lib, funcs []Func) *Table {
	t := &Table{lib: lib, funcs: funcs, addrs: make([]atomic.Uintptr, len(funcs)), byName: make(map[string]int, len(funcs))}
	for i, f := range funcs {
		t.byName[f.Name] = i
	}
	return t
}

// Lib is the library the table resolves in.
func (t *Table) Lib() *libpath.Lib { return t.lib }

// Len is the number of functions in the table.
func (t *Table) Len() int { return len(t.funcs) }

// Name is function i's name, the one errors use.
func (t *Table) Name(i int) string { return t.funcs[i].Name }

// Addr returns function i's address, resolving it on first use. A function
// the library lacks is a *libpath.SymbolError naming its first name.
func (t *Table) Addr(i int) (uintptr, error) {
	if a := t.addrs[i].Load(); a != 0 {
		return a, nil
	}
	return t.resolve(i)
}

// Ptr returns function i's address if it is resolved already, else 0. It
// resolves nothing: it is for tables resolved at load (see Resolve).
func (t *Table) Ptr(i int) uintptr { return t.addrs[i].Load() }

// Named is Ptr for the function whose Name is name; 0 for a name not in the
// table.
func (t *Table) Named(name string) uintptr {
	if i, ok := t.byName[name]; ok {
		return t.addrs[i].Load()
	}
	return 0
}

func (t *Table) resolve(i int) (uintptr, error) {
	f := &t.funcs[i]
	a, err := t.lib.Sym(f.Name)
	for _, alt := range f.Alts {
		if err == nil {
			break
		}
		if p, altErr := t.lib.Sym(alt); altErr == nil {
			a, err = p, nil
		}
	}
	if err != nil {
		return 0, err
	}
	if f.Fn != nil {
		purego.RegisterFunc(f.Fn, a)
	}
	t.addrs[i].Store(a)
	return a, nil
}

// Resolve resolves every function not resolved yet. It returns the names
// of the required functions that are missing, in table order, and the
// *libpath.SymbolError of the first of them; nil and nil when every required
// function resolved. Missing optional functions stay unresolved: Addr
// reports them when called, Ptr gives 0.
func (t *Table) Resolve() (missing []string, first error) {
	for i := range t.funcs {
		if _, err := t.Addr(i); err != nil && !t.funcs[i].Optional {
			missing = append(missing, t.funcs[i].Name)
			if first == nil {
				first = err
			}
		}
	}
	return missing, first
}

// Resolved reports how many functions of the table are resolved so far, and
// the size of the table.
func (t *Table) Resolved() (n, total int) {
	for i := range t.addrs {
		if t.addrs[i].Load() != 0 {
			n++
		}
	}
	return n, len(t.addrs)
}

// MissingError lists the required functions a library lacks.
type MissingError struct {
	Lib     string   // who says so, e.g. "cuda driver"
	Path    string   // the library searched
	Symbols []string // the missing C names, sorted
}

// NewMissingError makes the error for missing (as Resolve returns them);
// nil when none is missing.
func NewMissingError(lib, path string, missing []string) *MissingError {
	if len(missing) == 0 {
		return nil
	}
	s := append([]string(nil), missing...)
	sort.Strings(s)
	return &MissingError{Lib: lib, Path: path, Symbols: s}
}

// Error says "cuda driver: /usr/lib/…/libcuda.so.1 lacks 2 entry point(s): cuA, cuB".
func (e *MissingError) Error() string {
	return fmt.Sprintf("%s: %s lacks %d entry point(s): %s", e.Lib, e.Path, len(e.Symbols), strings.Join(e.Symbols, ", "))
}
