// Package emu runs ember's CUDA kernels on the CPU, for tests: it compiles
// the same sources as backend/cuda/kernels with the system g++ against a
// small CUDA-like header (emu.h), loads the shared library with purego and
// runs kernels.Launch values on "device" memory that is host memory.
//
// Each emulated block runs on one worker thread, its threads as fibers that
// switch at __syncthreads() (a register switch of a few instructions on
// x86-64, ucontext elsewhere), so __shared__ storage is per block and
// barriers are real; blocks run in parallel on worker threads that outlive
// launches (see runtime.cc.in). A Lib is safe for
// concurrent use and serves as a general emulated device: Malloc, Free,
// CopyIn, CopyOut, Memset and Run.
//
// The library is built once per set of sources and compiler into the user
// cache directory (os.UserCacheDir()/ember/cuda-emu/<hash>), or the
// directory EMBER_EMU_CACHE names.
package emu

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/emberml/ember/backend/cuda/kernels"
)

//go:embed emu.h
var emuHeader string

//go:embed runtime.cc.in
var runtimeSrc string

// Flags are the g++ options every source is compiled with.
var Flags = []string{"-O1", "-std=c++17", "-fPIC", "-pthread", "-w"}

// BuildError is a failed g++ run; Output holds the compiler's messages.
type BuildError struct {
	Cmd    string
	Output string
	Err    error
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("emu: %s: %v\n%s", e.Cmd, e.Err, e.Output)
}

func (e *BuildError) Unwrap() error { return e.Err }

// UnknownKernelError is a Launch naming a kernel the library lacks.
type UnknownKernelError struct{ Module, Kernel string }

func (e *UnknownKernelError) Error() string {
	return fmt.Sprintf("emu: unknown kernel %q in module %q", e.Kernel, e.Module)
}

// LaunchError is a launch the emulator refused (bad grid or block shape).
type LaunchError struct {
	Launch kernels.Launch
	Reason string
}

func (e *LaunchError) Error() string {
	return fmt.Sprintf("emu: launch of %s grid %v block %v: %s", e.Launch.Kernel, e.Launch.Grid, e.Launch.Block, e.Reason)
}

// Lib is the loaded emulation library.
type Lib struct {
	Path string // the shared library loaded

	launch, malloc, free, memcpy, memset uintptr
	kernels                              map[string]uintptr // module + "\x00" + name expression → wrapper
}

var (
	loadOnce sync.Once
	loaded   *Lib
	loadErr  error
)

// Load builds (or finds in the cache) and loads the emulation library. It
// returns the same Lib on every call.
func Load() (*Lib, error) {
	loadOnce.Do(func() { loaded, loadErr = load() })
	return loaded, loadErr
}

func ident(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// sources returns the files to compile: name → contents.
func sources() map[string]string {
	files := map[string]string{"emu.h": emuHeader, "runtime.cpp": runtimeSrc}
	mods := kernels.Modules()
	names := make([]string, 0, len(mods))
	for m := range mods {
		names = append(names, m)
	}
	sort.Strings(names)
	var lk strings.Builder
	lk.WriteString("#include \"emu.h\"\n")
	for _, m := range names {
		var b strings.Builder
		fmt.Fprintf(&b, "#include \"emu.h\"\n%s\n\n// registry\n", mods[m])
		exprs := kernels.NameExpressions(m)
		for i, e := range exprs {
			fmt.Fprintf(&b, "static void emu_w%d(void** a) { ::emu::invoke(&%s, a); }\n", i, e)
		}
		id := ident(m)
		fmt.Fprintf(&b, "extern const ::emu::entry emu_table_%s[] = {\n", id)
		for i, e := range exprs {
			fmt.Fprintf(&b, "    {%q \"\\0\" %q, emu_w%d},\n", m, e, i)
		}
		fmt.Fprintf(&b, "    {nullptr, nullptr}};\n")
		files["mod_"+id+".cpp"] = b.String()
		fmt.Fprintf(&lk, "extern const ::emu::entry emu_table_%s[];\n", id)
	}
	lk.WriteString("static const ::emu::entry* emu_tables[] = {")
	for _, m := range names {
		fmt.Fprintf(&lk, "emu_table_%s, ", ident(m))
	}
	lk.WriteString("nullptr};\n")
	lk.WriteString(`extern "C" void* emu_lookup(const char* module, const char* name) {
    for (int t = 0; emu_tables[t]; t++)
        for (const ::emu::entry* e = emu_tables[t]; e->name; e++)
            if (strcmp(e->name, module) == 0 && strcmp(e->name + strlen(e->name) + 1, name) == 0)
                return (void*)e->call;
    return nullptr;
}
`)
	files["lookup.cpp"] = lk.String()
	return files
}

func cacheRoot() (string, error) {
	if d := os.Getenv("EMBER_EMU_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "ember", "cuda-emu"), nil
}

func load() (*Lib, error) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		return nil, &BuildError{Cmd: "g++", Err: err, Output: "the emulator needs a C++ compiler (Debian package g++)"}
	}
	ver, err := exec.Command(cxx, "--version").Output()
	if err != nil {
		return nil, &BuildError{Cmd: cxx + " --version", Err: err}
	}
	files := sources()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", cxx, ver, strings.Join(Flags, " "))
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%d\x00%s", n, len(files[n]), files[n])
	}
	root, err := cacheRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, hex.EncodeToString(h.Sum(nil))[:24])
	so := filepath.Join(dir, "libemberemu.so")
	if _, err := os.Stat(so); err != nil {
		if err := build(cxx, root, dir, files); err != nil {
			return nil, err
		}
	}
	return open(so)
}

// build compiles files into dir/libemberemu.so, through a temporary
// directory renamed into place so concurrent builders never see half a library.
func build(cxx, root, dir string, files map[string]string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(root, "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var objs []string
	for n, src := range files {
		if err := os.WriteFile(filepath.Join(tmp, n), []byte(src), 0o644); err != nil {
			return err
		}
		if strings.HasSuffix(n, ".cpp") {
			objs = append(objs, strings.TrimSuffix(n, ".cpp")+".o")
		}
	}
	sort.Strings(objs)
	var wg sync.WaitGroup
	errs := make([]error, len(objs))
	sem := make(chan struct{}, max(runtime.NumCPU(), 1))
	for i, o := range objs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			args := append(append([]string{}, Flags...), "-c", strings.TrimSuffix(o, ".o")+".cpp", "-o", o)
			errs[i] = run(tmp, cxx, args...)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	args := append([]string{"-shared", "-pthread", "-o", "libemberemu.so"}, objs...)
	if err := run(tmp, cxx, args...); err != nil {
		return err
	}
	for _, o := range objs {
		os.Remove(filepath.Join(tmp, o))
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "libemberemu.so")); serr == nil {
			return nil // another process built it first
		}
		return err
	}
	return nil
}

func run(dir, cmd string, args ...string) error {
	c := exec.Command(cmd, args...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	if err != nil {
		return &BuildError{Cmd: cmd + " " + strings.Join(args, " "), Output: string(out), Err: err}
	}
	return nil
}

func open(so string) (*Lib, error) {
	h, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("emu: dlopen %s: %w", so, err)
	}
	l := &Lib{Path: so, kernels: map[string]uintptr{}}
	syms := map[string]*uintptr{"emu_launch": &l.launch, "emu_malloc": &l.malloc, "emu_free": &l.free, "emu_memcpy": &l.memcpy, "emu_memset": &l.memset}
	var lookup uintptr
	syms["emu_lookup"] = &lookup
	for name, p := range syms {
		a, err := purego.Dlsym(h, name)
		if err != nil || a == 0 {
			return nil, fmt.Errorf("emu: symbol %s in %s: %v", name, so, err)
		}
		*p = a
	}
	for m := range kernels.Modules() {
		mb := cstr(m)
		for _, e := range kernels.NameExpressions(m) {
			eb := cstr(e)
			fn, _, _ := purego.SyscallN(lookup, uintptr(unsafe.Pointer(&mb[0])), uintptr(unsafe.Pointer(&eb[0])))
			runtime.KeepAlive(eb)
			if fn == 0 {
				return nil, &UnknownKernelError{Module: m, Kernel: e}
			}
			l.kernels[m+"\x00"+e] = fn
		}
		runtime.KeepAlive(mb)
	}
	return l, nil
}

func cstr(s string) []byte { return append([]byte(s), 0) }

// Malloc returns n bytes of zeroed emulated device memory, 256-byte aligned
// (0 when the host is out of memory).
func (l *Lib) Malloc(n int) uint64 {
	p, _, _ := purego.SyscallN(l.malloc, uintptr(n))
	return uint64(p)
}

// Free releases memory from Malloc.
func (l *Lib) Free(p uint64) {
	purego.SyscallN(l.free, uintptr(p))
}

// CopyIn copies src to device address dst.
func (l *Lib) CopyIn(dst uint64, src []byte) {
	if len(src) == 0 {
		return
	}
	purego.SyscallN(l.memcpy, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)))
	runtime.KeepAlive(src)
}

// CopyOut copies len(dst) bytes from device address src into dst.
func (l *Lib) CopyOut(dst []byte, src uint64) {
	if len(dst) == 0 {
		return
	}
	purego.SyscallN(l.memcpy, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)))
	runtime.KeepAlive(dst)
}

// Memset sets n bytes at device address p to v.
func (l *Lib) Memset(p uint64, v byte, n int) {
	purego.SyscallN(l.memset, uintptr(p), uintptr(v), uintptr(n))
}

// Copy copies n bytes between device addresses.
func (l *Lib) Copy(dst, src uint64, n int) {
	purego.SyscallN(l.memcpy, uintptr(dst), uintptr(src), uintptr(n))
}

// Has reports whether the library has a kernel.
func (l *Lib) Has(module, kernel string) bool {
	_, ok := l.kernels[module+"\x00"+kernel]
	return ok
}

// Run runs one launch to completion. The Args' bytes are handed to the
// kernel as its parameters, each at an 8-byte aligned address.
func (l *Lib) Run(k kernels.Launch) error {
	fn, ok := l.kernels[k.Module+"\x00"+k.Kernel]
	if !ok {
		return &UnknownKernelError{Module: k.Module, Kernel: k.Kernel}
	}
	if k.Shared != 0 {
		return &LaunchError{Launch: k, Reason: "dynamic shared memory is not emulated"}
	}
	words := 1
	for _, a := range k.Args {
		words += (len(a) + 7) / 8
	}
	buf := make([]uint64, words)
	bb := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	offs := make([]int64, len(k.Args)+1)
	o := 0
	for i, a := range k.Args {
		offs[i] = int64(o)
		copy(bb[o:], a)
		o += (len(a) + 7) / 8 * 8
	}
	var pin runtime.Pinner
	pin.Pin(&buf[0])
	pin.Pin(&offs[0])
	defer pin.Unpin()
	g, b := k.Grid, k.Block
	rc, _, _ := purego.SyscallN(l.launch, fn,
		uintptr(g[0]), uintptr(g[1]), uintptr(g[2]), uintptr(b[0]), uintptr(b[1]), uintptr(b[2]),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&offs[0])), uintptr(len(k.Args)), 0)
	runtime.KeepAlive(buf)
	runtime.KeepAlive(offs)
	if int32(rc) != 0 {
		return &LaunchError{Launch: k, Reason: "invalid grid/block shape (block at most 1024 threads, no zero dims) or no memory for fiber stacks"}
	}
	return nil
}

// RunAll runs launches in order, stopping at the first error.
func (l *Lib) RunAll(ls []kernels.Launch) error {
	for _, k := range ls {
		if err := l.Run(k); err != nil {
			return err
		}
	}
	return nil
}
