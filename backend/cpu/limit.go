package cpu

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
)

// checkedBytes is the smallest request checked against the memory that is
// left; smaller ones cannot exhaust a machine by themselves and stay cheap.
const checkedBytes = 64 << 20

// checkAlloc reports whether a request of n bytes can be served: it must fit
// in the memory the kernel reports available (MemAvailable, plus the
// buffers cached here) and, when debug.SetMemoryLimit set one, under Go's
// memory limit. A request that does not fit frees the buffer cache, runs
// the garbage collector and is checked again; then it is an error, which
// ember turns into an *OutOfMemoryError, as on CUDA.
func checkAlloc(n int64) error {
	if n < checkedBytes || n <= memoryLeft() {
		return nil
	}
	cache.drop()
	runtime.GC()
	if left := memoryLeft(); n > left {
		return fmt.Errorf("cpu: cannot allocate %d bytes: %d bytes are available (MemAvailable, Go's memory limit)", n, max(left, 0))
	}
	return nil
}

var memSamples = []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}

// memoryLeft is how many more bytes the process may allocate.
func memoryLeft() int64 {
	left := int64(math.MaxInt64)
	cb, _, _, _, _, _ := cache.stats()
	if a, ok := memAvailable(); ok {
		left = a + cb
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		s := make([]metrics.Sample, len(memSamples))
		copy(s, memSamples)
		metrics.Read(s)
		used := int64(s[0].Value.Uint64() - s[1].Value.Uint64())
		left = min(left, lim-used+cb)
	}
	return left
}

// memAvailable reads MemAvailable from /proc/meminfo (Linux).
func memAvailable() (int64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemAvailable:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}
