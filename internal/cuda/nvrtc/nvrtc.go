// Package nvrtc binds NVIDIA's run-time CUDA C++ compiler (NVRTC) without cgo.
//
// The library is opened on first use with libpath.OpenNewest("libnvrtc.so.*",
// "libnvrtc.so"), so the newest NVRTC on the search order wins (a CUDA 12 pip
// wheel's libnvrtc.so.12 over Debian's libnvrtc.so.11.2). NVRTC loads its
// companion libnvrtc-builtins by soname through the dynamic loader; when the
// builtins of the same version sit next to the opened NVRTC, this package
// dlopens them first by full path so that a non-system NVRTC finds them.
//
// Compile is safe for concurrent use: every call owns its own nvrtcProgram.
package nvrtc

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/emberml/ember/internal/cuda/dl"
	"github.com/emberml/ember/internal/cuda/libpath"
)

// Status is an nvrtcResult, the status every NVRTC call returns.
type Status int

// nvrtcResult values (nvrtc.h).
const (
	codeSuccess     = 0
	codeCompilation = 6
)

// Codes returns NVRTC's table of result names; it makes Status a dl.Code.
func (Status) Codes() *dl.Codes[Status] { return &codes }

// codes names NVRTC's results when nvrtcGetErrorString does not, and says
// how its errors read ("nvrtc: nvrtcCreateProgram failed: NVRTC_ERROR_… (n)").
var codes = dl.Codes[Status]{Lib: "nvrtc", Failed: true, Names: codeNames, Unknown: "NVRTC_ERROR_%d"}

var codeNames = map[Status]string{
	0:  "NVRTC_SUCCESS",
	1:  "NVRTC_ERROR_OUT_OF_MEMORY",
	2:  "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	3:  "NVRTC_ERROR_INVALID_INPUT",
	4:  "NVRTC_ERROR_INVALID_PROGRAM",
	5:  "NVRTC_ERROR_INVALID_OPTION",
	6:  "NVRTC_ERROR_COMPILATION",
	7:  "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	8:  "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
	9:  "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	10: "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
	11: "NVRTC_ERROR_INTERNAL_ERROR",
	12: "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
}

// Error is a failed NVRTC call other than a compilation error: Call (the C
// function, e.g. "nvrtcCreateProgram"), Code (the nvrtcResult) and Name
// (its name, e.g. "NVRTC_ERROR_INVALID_OPTION").
type Error = dl.Error[Status]

// CompileError is a program that NVRTC refused to compile. Its message holds
// NVRTC's log, e.g. `axpy.cu(4): error: expected a ";"`.
type CompileError struct {
	Name string // the program's name, as given to Compile
	Log  string // NVRTC's compilation log
}

func (e *CompileError) Error() string {
	log := strings.TrimSpace(e.Log)
	if log == "" {
		return fmt.Sprintf("nvrtc: compiling %s failed (NVRTC_ERROR_COMPILATION), no log", e.Name)
	}
	return fmt.Sprintf("nvrtc: compiling %s failed (NVRTC_ERROR_COMPILATION):\n%s", e.Name, log)
}

// api holds the resolved entry points.
type api struct {
	fn           *dl.Table
	builtins     string // path of the builtins preloaded, if any
	builtinsErr  error  // why preloading them failed, if it did
	major, minor int

	version            func(major, minor *int32) int32
	getErrorString     func(code int32) uintptr
	createProgram      func(prog *uintptr, src, name string, numHeaders int32, headers, includeNames unsafe.Pointer) int32
	destroyProgram     func(prog *uintptr) int32
	compileProgram     func(prog uintptr, numOptions int32, options unsafe.Pointer) int32
	getProgramLogSize  func(prog uintptr, size *uintptr) int32
	getProgramLog      func(prog uintptr, buf unsafe.Pointer) int32
	getPTXSize         func(prog uintptr, size *uintptr) int32
	getPTX             func(prog uintptr, buf unsafe.Pointer) int32
	getCUBINSize       func(prog uintptr, size *uintptr) int32
	getCUBIN           func(prog uintptr, buf unsafe.Pointer) int32
	addNameExpression  func(prog uintptr, expr string) int32
	getLoweredName     func(prog uintptr, expr string, lowered *uintptr) int32
	getNumSupportedArc func(n *int32) int32 // nil when absent (NVRTC < 11.2)
	getSupportedArchs  func(archs *int32) int32
}

// lib is the newest NVRTC on the search order, opened on first use.
var lib = dl.Library[*api]{Names: []string{"libnvrtc.so.*", "libnvrtc.so"}, Newest: true, Bind: bind}

// load opens NVRTC once per process.
func load() (*api, error) { return lib.Load() }

func bind(lib *libpath.Lib) (*api, error) {
	a := &api{}
	a.fn = dl.NewTable(lib, []dl.Func{
		{Name: "nvrtcVersion", Fn: &a.version},
		{Name: "nvrtcGetErrorString", Fn: &a.getErrorString},
		{Name: "nvrtcCreateProgram", Fn: &a.createProgram},
		{Name: "nvrtcDestroyProgram", Fn: &a.destroyProgram},
		{Name: "nvrtcCompileProgram", Fn: &a.compileProgram},
		{Name: "nvrtcGetProgramLogSize", Fn: &a.getProgramLogSize},
		{Name: "nvrtcGetProgramLog", Fn: &a.getProgramLog},
		{Name: "nvrtcGetPTXSize", Fn: &a.getPTXSize},
		{Name: "nvrtcGetPTX", Fn: &a.getPTX},
		{Name: "nvrtcGetCUBINSize", Fn: &a.getCUBINSize},
		{Name: "nvrtcGetCUBIN", Fn: &a.getCUBIN},
		{Name: "nvrtcAddNameExpression", Fn: &a.addNameExpression},
		{Name: "nvrtcGetLoweredName", Fn: &a.getLoweredName},
		// Optional (NVRTC 11.2+): both or neither.
		{Name: "nvrtcGetNumSupportedArchs", Fn: &a.getNumSupportedArc, Optional: true},
		{Name: "nvrtcGetSupportedArchs", Fn: &a.getSupportedArchs, Optional: true},
	})
	if _, err := a.fn.Resolve(); err != nil {
		return nil, err
	}
	if a.getNumSupportedArc == nil || a.getSupportedArchs == nil {
		a.getNumSupportedArc, a.getSupportedArchs = nil, nil
	}
	var maj, mnr int32
	if r := a.version(&maj, &mnr); r != codeSuccess {
		return nil, a.err("nvrtcVersion", r)
	}
	a.major, a.minor = int(maj), int(mnr)
	a.preloadBuiltins()
	return a, nil
}

// preloadBuiltins dlopens libnvrtc-builtins.so.MAJOR.MINOR* from the folder
// NVRTC came from, so that NVRTC's own dlopen by soname finds it even when
// that folder is not on the dynamic loader's path. A failure is remembered
// and reported with the first compile error, not returned: a system install
// does not need it.
func (a *api) preloadBuiltins() {
	path := a.fn.Lib().Path
	if !filepath.IsAbs(path) {
		return
	}
	dir := filepath.Dir(path)
	m, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("libnvrtc-builtins.so.%d.%d*", a.major, a.minor)))
	if len(m) == 0 {
		return
	}
	sort.Strings(m) // the shortest name (the soname) first
	sort.SliceStable(m, func(i, j int) bool { return len(m[i]) < len(m[j]) })
	if _, err := purego.Dlopen(m[0], purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
		a.builtinsErr = fmt.Errorf("nvrtc: preloading %s: %w", m[0], err)
		return
	}
	a.builtins = m[0]
}

func (a *api) err(call string, code int32) error {
	name := codes.Name(Status(code))
	if p := a.getErrorString(code); p != 0 {
		if s := libpath.GoString(p); strings.HasPrefix(s, "NVRTC_") {
			name = s
		}
	}
	return &Error{Call: call, Code: Status(code), Name: name}
}

// Library reports the NVRTC file opened and, when one was preloaded, the
// builtins library next to it.
func Library() (path, builtins string, err error) {
	a, err := load()
	if err != nil {
		return "", "", err
	}
	return a.fn.Lib().Path, a.builtins, nil
}

// Version returns NVRTC's version, e.g. 11, 8 for CUDA 11.8's NVRTC.
func Version() (major, minor int, err error) {
	a, err := load()
	if err != nil {
		return 0, 0, err
	}
	return a.major, a.minor, nil
}

// SupportedArchs returns the SM versions NVRTC can compile for (e.g. 35, 37,
// 50, …, 90), or nil when this NVRTC predates nvrtcGetSupportedArchs.
func SupportedArchs() ([]int, error) {
	a, err := load()
	if err != nil {
		return nil, err
	}
	if a.getNumSupportedArc == nil {
		return nil, nil
	}
	var n int32
	if r := a.getNumSupportedArc(&n); r != codeSuccess {
		return nil, a.err("nvrtcGetNumSupportedArchs", r)
	}
	if n <= 0 {
		return nil, nil
	}
	buf := make([]int32, n)
	if r := a.getSupportedArchs(&buf[0]); r != codeSuccess {
		return nil, a.err("nvrtcGetSupportedArchs", r)
	}
	out := make([]int, n)
	for i, v := range buf {
		out[i] = int(v)
	}
	return out, nil
}

// Options controls one compilation.
type Options struct {
	// Arch is the target: "sm_80", "sm_90", … for a CUBIN (and PTX), or
	// "compute_80", "compute_90", … for PTX only. Empty leaves NVRTC's default
	// (a virtual architecture: PTX only).
	Arch string
	// Flags are further NVRTC options, e.g. "-default-device", "-std=c++17",
	// "--use_fast_math", "-lineinfo".
	Flags []string
	// NameExpressions are C++ names whose mangled (lowered) names the caller
	// wants back, typically template instances: "axpy<float>".
	NameExpressions []string
}

// Args returns the option list handed to nvrtcCompileProgram: "-arch=…"
// (when Arch is set) followed by Flags. It is also what a kernel cache
// should hash.
func (o Options) Args() []string {
	var args []string
	if o.Arch != "" {
		args = append(args, "-arch="+o.Arch)
	}
	return append(args, o.Flags...)
}

// Result is a compiled program.
type Result struct {
	PTX          []byte            // the PTX text, without its trailing NUL; nil if NVRTC produced none
	CUBIN        []byte            // the ELF image; nil when Arch is virtual (compute_XX) or unset
	Log          string            // NVRTC's log (warnings), possibly empty
	LoweredNames map[string]string // name expression → mangled name
}

// Compile compiles the CUDA C++ source src, named name (the name NVRTC uses
// in its log, e.g. "axpy.cu"). A program that does not compile returns a
// *CompileError holding NVRTC's log; any other NVRTC failure an *Error.
func Compile(src, name string, opts Options) (*Result, error) {
	a, err := load()
	if err != nil {
		return nil, err
	}
	var prog uintptr
	if r := a.createProgram(&prog, src, name, 0, nil, nil); r != codeSuccess {
		return nil, a.err("nvrtcCreateProgram", r)
	}
	defer a.destroyProgram(&prog)

	for _, e := range opts.NameExpressions {
		if r := a.addNameExpression(prog, e); r != codeSuccess {
			return nil, a.err("nvrtcAddNameExpression", r)
		}
	}

	args := opts.Args()
	// The options array is Go memory holding Go pointers handed to C: pin
	// every string and the array itself for the duration of the call.
	var pin runtime.Pinner
	defer pin.Unpin()
	cstrs := make([]*byte, len(args))
	for i, s := range args {
		b := make([]byte, len(s)+1)
		copy(b, s)
		pin.Pin(&b[0])
		cstrs[i] = &b[0]
	}
	var argv unsafe.Pointer
	if len(cstrs) > 0 {
		pin.Pin(&cstrs[0])
		argv = unsafe.Pointer(&cstrs[0])
	}
	rc := a.compileProgram(prog, int32(len(cstrs)), argv)
	runtime.KeepAlive(cstrs)

	log, lerr := a.programLog(prog)
	if rc == codeCompilation {
		if lerr != nil {
			return nil, lerr
		}
		if log == "" && a.builtinsErr != nil {
			log = a.builtinsErr.Error()
		}
		return nil, &CompileError{Name: name, Log: log}
	}
	if rc != codeSuccess {
		return nil, a.err("nvrtcCompileProgram", rc)
	}
	if lerr != nil {
		return nil, lerr
	}
	res := &Result{Log: log}

	if ptx, err := a.blob(prog, a.getPTXSize, a.getPTX, "nvrtcGetPTXSize", "nvrtcGetPTX"); err != nil {
		return nil, err
	} else if ptx != nil {
		res.PTX = bytes.TrimRight(ptx, "\x00")
	}
	// With a virtual arch nvrtcGetCUBINSize succeeds with size 0.
	cubin, err := a.blob(prog, a.getCUBINSize, a.getCUBIN, "nvrtcGetCUBINSize", "nvrtcGetCUBIN")
	if err != nil && strings.HasPrefix(opts.Arch, "sm_") {
		return nil, err
	}
	res.CUBIN = cubin

	if len(opts.NameExpressions) > 0 {
		res.LoweredNames = make(map[string]string, len(opts.NameExpressions))
		for _, e := range opts.NameExpressions {
			var p uintptr
			if r := a.getLoweredName(prog, e, &p); r != codeSuccess {
				return nil, a.err("nvrtcGetLoweredName", r)
			}
			// The lowered name is owned by prog: copy it before destroying it.
			res.LoweredNames[e] = libpath.GoString(p)
		}
	}
	return res, nil
}

func (a *api) programLog(prog uintptr) (string, error) {
	var n uintptr
	if r := a.getProgramLogSize(prog, &n); r != codeSuccess {
		return "", a.err("nvrtcGetProgramLogSize", r)
	}
	if n <= 1 {
		return "", nil
	}
	buf := make([]byte, n)
	if r := a.getProgramLog(prog, unsafe.Pointer(&buf[0])); r != codeSuccess {
		return "", a.err("nvrtcGetProgramLog", r)
	}
	return string(bytes.TrimRight(buf, "\x00")), nil
}

// blob fetches PTX or CUBIN; nil (no error) when the size is 0.
func (a *api) blob(prog uintptr, size func(uintptr, *uintptr) int32, get func(uintptr, unsafe.Pointer) int32, sizeCall, getCall string) ([]byte, error) {
	var n uintptr
	if r := size(prog, &n); r != codeSuccess {
		return nil, a.err(sizeCall, r)
	}
	if n == 0 {
		return nil, nil
	}
	buf := make([]byte, n)
	if r := get(prog, unsafe.Pointer(&buf[0])); r != codeSuccess {
		return nil, a.err(getCall, r)
	}
	return buf, nil
}
