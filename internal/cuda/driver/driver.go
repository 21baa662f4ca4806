// Package driver binds the CUDA driver API (libcuda.so.1) at run time, without
// cgo: the library is opened through libpath's search order and every entry
// point is looked up with dlsym before it is called.
//
// Entry points are resolved lazily, on a function's first call, from one
// table of C names (the versioned names libcuda exports, e.g. cuMemAlloc_v2);
// ResolveAll resolves the whole table at once and names every missing symbol.
// A failed call returns a *Error naming the call, the CUresult and its name.
//
// The driver's current context is a per-OS-thread setting. Code that issues
// calls for a device should do so through a Context (see PrimaryContext),
// which runs them on one locked OS thread where that device's primary context
// is current.
package driver

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/emberml/ember/internal/cuda/libpath"
)

// libNames are the files asked of libpath, in order.
var libNames = []string{"libcuda.so.1", "libcuda.so"}

// procID indexes procTable.
type procID int

const (
	pGetErrorName procID = iota
	pGetErrorString
	pInit
	pDriverGetVersion
	pDeviceGetCount
	pDeviceGet
	pDeviceGetName
	pDeviceTotalMem
	pDeviceGetAttribute
	pDeviceGetUUID
	pDeviceGetPCIBusID
	pDevicePrimaryCtxRetain
	pDevicePrimaryCtxRelease
	pCtxSetCurrent
	pCtxGetCurrent
	pCtxSynchronize
	pMemAlloc
	pMemFree
	pMemGetInfo
	pMemAllocHost
	pMemFreeHost
	pMemcpyHtoD
	pMemcpyDtoH
	pMemcpyDtoD
	pMemcpyHtoDAsync
	pMemcpyDtoHAsync
	pMemcpyDtoDAsync
	pMemsetD8
	pMemsetD32
	pMemsetD8Async
	pMemsetD32Async
	pStreamCreate
	pStreamDestroy
	pStreamSynchronize
	pStreamWaitEvent
	pStreamQuery
	pEventCreate
	pEventDestroy
	pEventRecord
	pEventSynchronize
	pEventQuery
	pEventElapsedTime
	pModuleLoadData
	pModuleLoadDataEx
	pModuleUnload
	pModuleGetFunction
	pLaunchKernel
	pFuncGetAttribute
	pFuncSetAttribute
	pOccupancyMaxPotentialBlockSize
	numProcs
)

// proc is one entry point: the exported names to try, best first.
type proc struct {
	names    []string
	optional bool // ResolveAll does not report it missing
}

// procTable is the whole binding: every C entry point this package calls.
var procTable = [numProcs]proc{
	pGetErrorName:                   {names: []string{"cuGetErrorName"}},
	pGetErrorString:                 {names: []string{"cuGetErrorString"}},
	pInit:                           {names: []string{"cuInit"}},
	pDriverGetVersion:               {names: []string{"cuDriverGetVersion"}},
	pDeviceGetCount:                 {names: []string{"cuDeviceGetCount"}},
	pDeviceGet:                      {names: []string{"cuDeviceGet"}},
	pDeviceGetName:                  {names: []string{"cuDeviceGetName"}},
	pDeviceTotalMem:                 {names: []string{"cuDeviceTotalMem_v2"}},
	pDeviceGetAttribute:             {names: []string{"cuDeviceGetAttribute"}},
	pDeviceGetUUID:                  {names: []string{"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}},
	pDeviceGetPCIBusID:              {names: []string{"cuDeviceGetPCIBusId"}},
	pDevicePrimaryCtxRetain:         {names: []string{"cuDevicePrimaryCtxRetain"}},
	pDevicePrimaryCtxRelease:        {names: []string{"cuDevicePrimaryCtxRelease_v2"}},
	pCtxSetCurrent:                  {names: []string{"cuCtxSetCurrent"}},
	pCtxGetCurrent:                  {names: []string{"cuCtxGetCurrent"}},
	pCtxSynchronize:                 {names: []string{"cuCtxSynchronize"}},
	pMemAlloc:                       {names: []string{"cuMemAlloc_v2"}},
	pMemFree:                        {names: []string{"cuMemFree_v2"}},
	pMemGetInfo:                     {names: []string{"cuMemGetInfo_v2"}},
	pMemAllocHost:                   {names: []string{"cuMemAllocHost_v2"}},
	pMemFreeHost:                    {names: []string{"cuMemFreeHost"}},
	pMemcpyHtoD:                     {names: []string{"cuMemcpyHtoD_v2"}},
	pMemcpyDtoH:                     {names: []string{"cuMemcpyDtoH_v2"}},
	pMemcpyDtoD:                     {names: []string{"cuMemcpyDtoD_v2"}},
	pMemcpyHtoDAsync:                {names: []string{"cuMemcpyHtoDAsync_v2"}},
	pMemcpyDtoHAsync:                {names: []string{"cuMemcpyDtoHAsync_v2"}},
	pMemcpyDtoDAsync:                {names: []string{"cuMemcpyDtoDAsync_v2"}},
	pMemsetD8:                       {names: []string{"cuMemsetD8_v2"}},
	pMemsetD32:                      {names: []string{"cuMemsetD32_v2"}},
	pMemsetD8Async:                  {names: []string{"cuMemsetD8Async"}},
	pMemsetD32Async:                 {names: []string{"cuMemsetD32Async"}},
	pStreamCreate:                   {names: []string{"cuStreamCreate"}},
	pStreamDestroy:                  {names: []string{"cuStreamDestroy_v2"}},
	pStreamSynchronize:              {names: []string{"cuStreamSynchronize"}},
	pStreamWaitEvent:                {names: []string{"cuStreamWaitEvent"}},
	pStreamQuery:                    {names: []string{"cuStreamQuery"}},
	pEventCreate:                    {names: []string{"cuEventCreate"}},
	pEventDestroy:                   {names: []string{"cuEventDestroy_v2"}},
	pEventRecord:                    {names: []string{"cuEventRecord"}},
	pEventSynchronize:               {names: []string{"cuEventSynchronize"}},
	pEventQuery:                     {names: []string{"cuEventQuery"}},
	pEventElapsedTime:               {names: []string{"cuEventElapsedTime"}},
	pModuleLoadData:                 {names: []string{"cuModuleLoadData"}},
	pModuleLoadDataEx:               {names: []string{"cuModuleLoadDataEx"}},
	pModuleUnload:                   {names: []string{"cuModuleUnload"}},
	pModuleGetFunction:              {names: []string{"cuModuleGetFunction"}},
	pLaunchKernel:                   {names: []string{"cuLaunchKernel"}},
	pFuncGetAttribute:               {names: []string{"cuFuncGetAttribute"}},
	pFuncSetAttribute:               {names: []string{"cuFuncSetAttribute"}},
	pOccupancyMaxPotentialBlockSize: {names: []string{"cuOccupancyMaxPotentialBlockSize"}, optional: true},
}

// name is the C name used in errors: the preferred exported name.
func (p procID) name() string { return procTable[p].names[0] }

// SymbolNames lists the preferred C name of every entry point the binding
// uses, in table order.
func SymbolNames() []string {
	out := make([]string, numProcs)
	for i := range procTable {
		out[i] = procTable[i].names[0]
	}
	return out
}

// Driver is an opened libcuda. Its methods are safe for concurrent use, but
// calls that depend on the current context must run where that context is
// current (see Context).
type Driver struct {
	Path     string // the file opened, its folder's symlinks resolved, e.g. /usr/lib/x86_64-linux-gnu/libcuda.so.1
	RealPath string // the file behind Path's symlinks, e.g. .../libcuda.so.535.309.01; empty if unknown
	Source   string // the part of libpath's search order that found it, e.g. "system"

	lib   *libpath.Lib
	addrs [numProcs]atomic.Uintptr

	initOnce sync.Once
	initErr  error

	ctxMu    sync.Mutex
	contexts map[int]*Context
}

var (
	loadOnce sync.Once
	loaded   *Driver
	loadErr  error
)

// Load opens libcuda once per process and returns the same *Driver on every
// call. When no library is found the error is a *libpath.NotFoundError that
// lists the places searched. Load does not call cuInit; Init does.
func Load() (*Driver, error) {
	loadOnce.Do(func() { loaded, loadErr = open(libNames) })
	return loaded, loadErr
}

// open opens the first of names; tests call it with a bogus name.
func open(names []string) (*Driver, error) {
	lib, err := libpath.Open(names...)
	if err != nil {
		return nil, err
	}
	d := &Driver{Path: lib.Path, Source: lib.Source, lib: lib}
	if filepath.IsAbs(lib.Path) {
		// libpath walks /etc/ld.so.conf, where Debian lists /lib/<triplet>
		// (a symlink to /usr/lib/<triplet>) first: name the real folder.
		if dir, err := filepath.EvalSymlinks(filepath.Dir(lib.Path)); err == nil {
			d.Path = filepath.Join(dir, filepath.Base(lib.Path))
		}
		if real, err := filepath.EvalSymlinks(lib.Path); err == nil {
			d.RealPath = real
		}
	}
	return d, nil
}

// addr resolves an entry point, caching it.
func (d *Driver) addr(p procID) (uintptr, error) {
	if a := d.addrs[p].Load(); a != 0 {
		return a, nil
	}
	var first error
	for _, n := range procTable[p].names {
		a, err := d.lib.Sym(n)
		if err == nil {
			d.addrs[p].Store(a)
			return a, nil
		}
		if first == nil {
			first = err
		}
	}
	return 0, first
}

// MissingSymbolsError lists the entry points ResolveAll could not find.
type MissingSymbolsError struct {
	Path    string   // the library searched
	Symbols []string // the missing C names
}

func (e *MissingSymbolsError) Error() string {
	return fmt.Sprintf("cuda driver: %s lacks %d entry point(s): %s", e.Path, len(e.Symbols), strings.Join(e.Symbols, ", "))
}

// ResolveAll resolves every entry point of the binding now and returns a
// *MissingSymbolsError naming all required ones that are missing. Optional
// entry points that are missing are left unresolved and fail when called.
func (d *Driver) ResolveAll() error {
	var missing []string
	for p := procID(0); p < numProcs; p++ {
		if _, err := d.addr(p); err != nil && !procTable[p].optional {
			missing = append(missing, procTable[p].names[0])
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return &MissingSymbolsError{Path: d.Path, Symbols: missing}
	}
	return nil
}

// Resolved reports how many entry points of the table are resolved so far,
// and the size of the table.
func (d *Driver) Resolved() (n, total int) {
	for p := range d.addrs {
		if d.addrs[p].Load() != 0 {
			n++
		}
	}
	return n, int(numProcs)
}

// call invokes entry point p and turns a CUresult other than CUDA_SUCCESS into
// a *Error. Arguments that are Go pointers converted to uintptr in the call
// expression stay alive and unmoved for the duration of the call.
//
//go:uintptrescapes
func (d *Driver) call(p procID, args ...uintptr) error {
	a, err := d.addr(p)
	if err != nil {
		return err
	}
	r, _, _ := purego.SyscallN(a, args...)
	if code := int(int32(uint32(r))); code != Success {
		return d.newError(p.name(), code)
	}
	return nil
}

// newError builds a *Error, asking libcuda for the code's name and text.
func (d *Driver) newError(call string, code int) *Error {
	e := &Error{Call: call, Code: code}
	if a, err := d.addr(pGetErrorName); err == nil {
		var s uintptr
		if r, _, _ := purego.SyscallN(a, uintptr(int32(code)), uintptr(unsafe.Pointer(&s))); r == 0 && s != 0 {
			e.Name = libpath.GoString(s)
		}
	}
	if e.Name == "" {
		e.Name = fallbackName(code)
	}
	if a, err := d.addr(pGetErrorString); err == nil {
		var s uintptr
		if r, _, _ := purego.SyscallN(a, uintptr(int32(code)), uintptr(unsafe.Pointer(&s))); r == 0 && s != 0 {
			e.Desc = libpath.GoString(s)
		}
	}
	return e
}

// ErrorFor builds the *Error libcuda would describe for code after call; it
// is what a failed call returns, exposed for callers that obtain a CUresult
// some other way.
func (d *Driver) ErrorFor(call string, code int) *Error { return d.newError(call, code) }

// Init calls cuInit(0) once; later calls return the first result. Every other
// call except DriverGetVersion and the error helpers needs it to have
// succeeded.
func (d *Driver) Init() error {
	d.initOnce.Do(func() { d.initErr = d.call(pInit, 0) })
	return d.initErr
}

// DriverGetVersion returns the CUDA version the driver supports, e.g. 12020
// for 12.2. It works before cuInit and without a GPU.
func (d *Driver) DriverGetVersion() (int, error) {
	var v int32
	if err := d.call(pDriverGetVersion, uintptr(unsafe.Pointer(&v))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// VersionString formats a driver version number: 12020 → "12.2".
func VersionString(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// errClosed is returned by a Context used after Close.
var errClosed = errors.New("cuda driver: context is closed")
