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
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/emberml/ember/internal/cuda/dl"
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

// procTable is the whole binding: every C entry point this package calls,
// by the exported name to try first.
var procTable = [numProcs]dl.Func{
	pGetErrorName:                   {Name: "cuGetErrorName"},
	pGetErrorString:                 {Name: "cuGetErrorString"},
	pInit:                           {Name: "cuInit"},
	pDriverGetVersion:               {Name: "cuDriverGetVersion"},
	pDeviceGetCount:                 {Name: "cuDeviceGetCount"},
	pDeviceGet:                      {Name: "cuDeviceGet"},
	pDeviceGetName:                  {Name: "cuDeviceGetName"},
	pDeviceTotalMem:                 {Name: "cuDeviceTotalMem_v2"},
	pDeviceGetAttribute:             {Name: "cuDeviceGetAttribute"},
	pDeviceGetUUID:                  {Name: "cuDeviceGetUuid_v2", Alts: []string{"cuDeviceGetUuid"}},
	pDeviceGetPCIBusID:              {Name: "cuDeviceGetPCIBusId"},
	pDevicePrimaryCtxRetain:         {Name: "cuDevicePrimaryCtxRetain"},
	pDevicePrimaryCtxRelease:        {Name: "cuDevicePrimaryCtxRelease_v2"},
	pCtxSetCurrent:                  {Name: "cuCtxSetCurrent"},
	pCtxGetCurrent:                  {Name: "cuCtxGetCurrent"},
	pCtxSynchronize:                 {Name: "cuCtxSynchronize"},
	pMemAlloc:                       {Name: "cuMemAlloc_v2"},
	pMemFree:                        {Name: "cuMemFree_v2"},
	pMemGetInfo:                     {Name: "cuMemGetInfo_v2"},
	pMemAllocHost:                   {Name: "cuMemAllocHost_v2"},
	pMemFreeHost:                    {Name: "cuMemFreeHost"},
	pMemcpyHtoD:                     {Name: "cuMemcpyHtoD_v2"},
	pMemcpyDtoH:                     {Name: "cuMemcpyDtoH_v2"},
	pMemcpyDtoD:                     {Name: "cuMemcpyDtoD_v2"},
	pMemcpyHtoDAsync:                {Name: "cuMemcpyHtoDAsync_v2"},
	pMemcpyDtoHAsync:                {Name: "cuMemcpyDtoHAsync_v2"},
	pMemcpyDtoDAsync:                {Name: "cuMemcpyDtoDAsync_v2"},
	pMemsetD8:                       {Name: "cuMemsetD8_v2"},
	pMemsetD32:                      {Name: "cuMemsetD32_v2"},
	pMemsetD8Async:                  {Name: "cuMemsetD8Async"},
	pMemsetD32Async:                 {Name: "cuMemsetD32Async"},
	pStreamCreate:                   {Name: "cuStreamCreate"},
	pStreamDestroy:                  {Name: "cuStreamDestroy_v2"},
	pStreamSynchronize:              {Name: "cuStreamSynchronize"},
	pStreamWaitEvent:                {Name: "cuStreamWaitEvent"},
	pStreamQuery:                    {Name: "cuStreamQuery"},
	pEventCreate:                    {Name: "cuEventCreate"},
	pEventDestroy:                   {Name: "cuEventDestroy_v2"},
	pEventRecord:                    {Name: "cuEventRecord"},
	pEventSynchronize:               {Name: "cuEventSynchronize"},
	pEventQuery:                     {Name: "cuEventQuery"},
	pEventElapsedTime:               {Name: "cuEventElapsedTime"},
	pModuleLoadData:                 {Name: "cuModuleLoadData"},
	pModuleLoadDataEx:               {Name: "cuModuleLoadDataEx"},
	pModuleUnload:                   {Name: "cuModuleUnload"},
	pModuleGetFunction:              {Name: "cuModuleGetFunction"},
	pLaunchKernel:                   {Name: "cuLaunchKernel"},
	pFuncGetAttribute:               {Name: "cuFuncGetAttribute"},
	pFuncSetAttribute:               {Name: "cuFuncSetAttribute"},
	pOccupancyMaxPotentialBlockSize: {Name: "cuOccupancyMaxPotentialBlockSize", Optional: true},
}

// name is the C name used in errors: the preferred exported name.
func (p procID) name() string { return procTable[p].Name }

// SymbolNames lists the preferred C name of every entry point the binding
// uses, in table order.
func SymbolNames() []string {
	out := make([]string, numProcs)
	for i := range procTable {
		out[i] = procTable[i].Name
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

	funcs *dl.Table // procTable in the library opened

	initOnce sync.Once
	initErr  error

	ctxMu    sync.Mutex
	contexts map[int]*Context
}

// lib is libcuda, opened on the first Load.
var lib = dl.Library[*Driver]{Names: libNames, Bind: bind}

// Load opens libcuda once per process and returns the same *Driver on every
// call. When no library is found the error is a *libpath.NotFoundError that
// lists the places searched. Load does not call cuInit; Init does.
func Load() (*Driver, error) { return lib.Load() }

// open opens the first of names, every time; tests call it with a bogus name.
func open(names []string) (*Driver, error) {
	return (&dl.Library[*Driver]{Names: names, Bind: bind}).Open()
}

// bind makes the *Driver of an opened libcuda; nothing is resolved yet.
func bind(lib *libpath.Lib) (*Driver, error) {
	d := &Driver{Path: lib.Path, Source: lib.Source, funcs: dl.NewTable(lib, procTable[:])}
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
func (d *Driver) addr(p procID) (uintptr, error) { return d.funcs.Addr(int(p)) }

// MissingSymbolsError lists the entry points ResolveAll could not find
// (Lib "cuda driver", the library's Path, the missing C names).
type MissingSymbolsError = dl.MissingError

// ResolveAll resolves every entry point of the binding now and returns a
// *MissingSymbolsError naming all required ones that are missing. Optional
// entry points that are missing are left unresolved and fail when called.
func (d *Driver) ResolveAll() error {
	missing, _ := d.funcs.Resolve()
	if e := dl.NewMissingError("cuda driver", d.Path, missing); e != nil {
		return e
	}
	return nil
}

// Resolved reports how many entry points of the table are resolved so far,
// and the size of the table.
func (d *Driver) Resolved() (n, total int) { return d.funcs.Resolved() }

// call invokes entry point p and turns a CUresult other than CUDA_SUCCESS into
// a *Error. Arguments that are Go pointers converted to uintptr in the call
// expression stay alive and unmoved for the duration of the call.
//
//go:uintptrescapes
func (d *Driver) call(p procID, args ...uintptr) error {
	a := d.funcs.Ptr(int(p)) // inlined: the resolved address, or 0 on first use
	if a == 0 {
		var err error
		if a, err = d.addr(p); err != nil {
			return err
		}
	}
	r, _, _ := purego.SyscallN(a, args...)
	if code := Result(int32(uint32(r))); code != Success {
		return d.newError(p.name(), code)
	}
	return nil
}

// newError builds a *Error, asking libcuda for the code's name and text.
func (d *Driver) newError(call string, code Result) *Error {
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
func (d *Driver) ErrorFor(call string, code Result) *Error { return d.newError(call, code) }

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
