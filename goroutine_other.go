//go:build !amd64 && !arm64

package ember

// gid identifies the calling goroutine (its id, from its stack trace).
func gid() uint64 { return goid() }
