//go:build amd64 || arm64

package ember

// getg returns the address of the calling goroutine's runtime descriptor.
// It identifies the goroutine while it runs; the runtime may reuse it for
// a later goroutine, which is harmless here because every per-goroutine
// entry is removed (by a deferred call) before its goroutine can end.
func getg() uintptr

// gid identifies the calling goroutine.
func gid() uint64 { return uint64(getg()) }
