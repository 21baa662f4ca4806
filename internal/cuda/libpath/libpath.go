// Package libpath finds and opens NVIDIA's shared libraries at run time, with
// one search order shared by every binding (driver, NVRTC, cuBLAS, NVML, NCCL):
//
//  1. EMBER_CUDA_LIB_DIR (a colon-separated list)
//  2. CUDA_PATH and CUDA_HOME: lib64, lib, targets/*/lib
//  3. LD_LIBRARY_PATH
//  4. the system linker's paths (/etc/ld.so.conf and the usual defaults)
//  5. /usr/local/cuda*/lib64 and /usr/local/cuda*/targets/*/lib
//  6. the site-packages/nvidia/*/lib folders that PyTorch's pip wheels install
//
// and, last, the bare name handed to dlopen. No cgo: libraries are opened with
// purego, and a missing library or symbol is an error, never a panic.
package libpath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Dir is one folder of the search order and the reason it is searched.
type Dir struct {
	Path   string // the folder
	Source string // what put it there: "EMBER_CUDA_LIB_DIR", "CUDA_PATH", "LD_LIBRARY_PATH", "system", "/usr/local/cuda", "pip"
}

// Dirs returns the search order as it stands in this process's environment,
// without duplicates and without folders that do not exist.
func Dirs() []Dir {
	var out []Dir
	seen := map[string]bool{}
	add := func(src string, paths ...string) {
		for _, p := range paths {
			if p == "" {
				continue
			}
			p = filepath.Clean(p)
			if seen[p] {
				continue
			}
			if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
				continue
			}
			seen[p] = true
			out = append(out, Dir{Path: p, Source: src})
		}
	}
	add("EMBER_CUDA_LIB_DIR", filepath.SplitList(os.Getenv("EMBER_CUDA_LIB_DIR"))...)
	for _, env := range []string{"CUDA_PATH", "CUDA_HOME"} {
		if root := os.Getenv(env); root != "" {
			add(env, filepath.Join(root, "lib64"), filepath.Join(root, "lib"))
			add(env, globs(filepath.Join(root, "targets", "*", "lib"))...)
		}
	}
	add("LD_LIBRARY_PATH", filepath.SplitList(os.Getenv("LD_LIBRARY_PATH"))...)
	add("system", systemDirs()...)
	add("/usr/local/cuda", globs("/usr/local/cuda*/lib64", "/usr/local/cuda*/targets/*/lib")...)
	add("pip", pipDirs()...)
	return out
}

func globs(patterns ...string) []string {
	var out []string
	for _, p := range patterns {
		m, _ := filepath.Glob(p)
		sort.Strings(m)
		out = append(out, m...)
	}
	return out
}

// systemDirs reads /etc/ld.so.conf (following include lines) and appends the
// dynamic linker's built-in folders for this architecture.
func systemDirs() []string {
	var dirs []string
	var read func(file string, depth int)
	read = func(file string, depth int) {
		if depth > 8 {
			return
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(data), "\n") {
			if i := strings.IndexByte(line, '#'); i >= 0 {
				line = line[:i]
			}
			line = strings.TrimSpace(line)
			switch {
			case line == "":
			case strings.HasPrefix(line, "include "):
				pat := strings.TrimSpace(strings.TrimPrefix(line, "include "))
				if !filepath.IsAbs(pat) {
					pat = filepath.Join(filepath.Dir(file), pat)
				}
				for _, f := range globs(pat) {
					read(f, depth+1)
				}
			default:
				dirs = append(dirs, line)
			}
		}
	}
	read("/etc/ld.so.conf", 0)
	triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]
	if triplet != "" {
		dirs = append(dirs, "/lib/"+triplet, "/usr/lib/"+triplet)
	}
	return append(dirs, "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/lib/wsl/lib")
}

// pipDirs lists site-packages/nvidia/*/lib under the Python installs a user
// is likely to have: a virtualenv or conda env, the user's, pyenv's, the system's.
func pipDirs() []string {
	var roots []string
	for _, env := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := os.Getenv(env); p != "" {
			roots = append(roots, p)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		roots = append(roots, filepath.Join(home, ".local"))
		roots = append(roots, globs(filepath.Join(home, ".pyenv", "versions", "*"))...)
		roots = append(roots, filepath.Join(home, "miniconda3"), filepath.Join(home, "anaconda3"))
	}
	roots = append(roots, "/usr/local", "/usr", "/opt/conda")
	var out []string
	for _, r := range roots {
		for _, sp := range []string{"site-packages", "dist-packages"} {
			out = append(out, globs(filepath.Join(r, "lib", "python3*", sp, "nvidia", "*", "lib"))...)
		}
	}
	return out
}

// Lib is an opened shared library.
type Lib struct {
	Name   string // the name asked for, e.g. "libcuda.so.1"
	Path   string // the file opened, or the bare name when the dynamic linker found it
	Source string // which part of the search order found it
	handle uintptr

	mu   sync.Mutex
	syms map[string]uintptr
}

// NotFoundError says that no file by any of the names could be opened, and
// lists every place looked in.
type NotFoundError struct {
	Names    []string // names (or globs) looked for
	Searched []string // folders searched, in order
	Tried    []string // files found but refused by dlopen, with the reason
}

func (e *NotFoundError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s not found", strings.Join(e.Names, " or "))
	if len(e.Tried) > 0 {
		fmt.Fprintf(&b, "; could not load: %s", strings.Join(e.Tried, "; "))
	}
	fmt.Fprintf(&b, " (searched: %s, and the dynamic linker's default paths)", strings.Join(e.Searched, ", "))
	return b.String()
}

// SymbolError says that a library lacks a symbol.
type SymbolError struct {
	Lib, Path, Symbol string
	Err               error
}

func (e *SymbolError) Error() string {
	return fmt.Sprintf("symbol %s not found in %s (%s): %v", e.Symbol, e.Lib, e.Path, e.Err)
}

// Open opens the first library found under any of names, walking the search
// order. A name may be a glob ("libnvrtc.so.*"); where several files match in
// one folder, the highest version is preferred. When preferNewest is wanted
// across folders, use OpenNewest.
func Open(names ...string) (*Lib, error) {
	return open(false, names)
}

// OpenNewest is Open, but it gathers the candidates of every folder and tries
// the highest version first (so CUDA 12's NVRTC wins over CUDA 11's).
func OpenNewest(names ...string) (*Lib, error) {
	return open(true, names)
}

type candidate struct {
	path, source string
	version      []int
}

func open(newest bool, names []string) (*Lib, error) {
	dirs := Dirs()
	var cands []candidate
	for _, d := range dirs {
		var inDir []candidate
		for _, n := range names {
			for _, m := range globs(filepath.Join(d.Path, n)) {
				if fi, err := os.Stat(m); err == nil && !fi.IsDir() {
					inDir = append(inDir, candidate{path: m, source: d.Source, version: soVersion(m)})
				}
			}
		}
		sortByVersion(inDir)
		cands = append(cands, inDir...)
	}
	if newest {
		sortByVersion(cands)
	}
	nf := &NotFoundError{Names: names}
	for _, d := range dirs {
		nf.Searched = append(nf.Searched, d.Path)
	}
	seen := map[string]bool{}
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c.path)
		if err == nil && seen[real] {
			continue
		}
		seen[real] = true
		h, err := purego.Dlopen(c.path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			nf.Tried = append(nf.Tried, fmt.Sprintf("%s: %v", c.path, err))
			continue
		}
		return &Lib{Name: filepath.Base(names[0]), Path: c.path, Source: c.source, handle: h}, nil
	}
	// Last resort: the bare names, for the dynamic linker's cache.
	for _, n := range names {
		if strings.ContainsAny(n, "*?[") {
			continue
		}
		if h, err := purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			return &Lib{Name: n, Path: n, Source: "dynamic linker", handle: h}, nil
		}
	}
	return nil, nf
}

// soVersion extracts the numbers after ".so." ("libnvrtc.so.11.8.89" → 11 8 89).
func soVersion(path string) []int {
	base := filepath.Base(path)
	i := strings.Index(base, ".so.")
	if i < 0 {
		return nil
	}
	var v []int
	for _, p := range strings.Split(base[i+4:], ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			break
		}
		v = append(v, n)
	}
	return v
}

func sortByVersion(c []candidate) {
	sort.SliceStable(c, func(i, j int) bool {
		a, b := c[i].version, c[j].version
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] > b[k]
			}
		}
		return len(a) > len(b)
	})
}

// Sym resolves a symbol, caching the result. A missing symbol is a *SymbolError.
func (l *Lib) Sym(name string) (uintptr, error) {
	if l == nil || l.handle == 0 {
		return 0, &SymbolError{Symbol: name, Err: errors.New("library not loaded")}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.syms[name]; ok {
		return p, nil
	}
	p, err := purego.Dlsym(l.handle, name)
	if err != nil || p == 0 {
		if err == nil {
			err = errors.New("nil address")
		}
		return 0, &SymbolError{Lib: l.Name, Path: l.Path, Symbol: name, Err: err}
	}
	if l.syms == nil {
		l.syms = map[string]uintptr{}
	}
	l.syms[name] = p
	return p, nil
}

// Handle returns the dlopen handle, for purego.RegisterLibFunc-style helpers
// that first checked the symbol with Sym.
func (l *Lib) Handle() uintptr { return l.handle }

// GoString copies a NUL-terminated C string owned by a library (an error
// name, a version string), reading at most 64 KiB; 0 gives "".
func GoString(p uintptr) string {
	if p == 0 {
		return ""
	}
	var b []byte
	for i := uintptr(0); i < 1<<16; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(nil), p+i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}
