package cpu

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
)

// A new buffer of 16 MiB is advised for huge pages: the mapping holding it
// carries the kernel's "hg" flag (MADV_HUGEPAGE) in /proc/self/smaps.
func TestHugePageAdvice(t *testing.T) {
	if !hugePages {
		t.Skip("EMBER_CPU_HUGEPAGES=0")
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages here")
	}
	prev := SetCacheLimit(0) // a fresh buffer, not one from the cache
	defer SetCacheLimit(prev)
	s := newStorage(backend.Float32, 4<<20)
	defer s.Release()
	mid := uintptr(s.Pointer()) + 8<<20
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		l := sc.Text()
		if f := strings.Fields(l); len(f) > 1 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			a, _ := strconv.ParseUint(lo, 16, 64)
			b, _ := strconv.ParseUint(hi, 16, 64)
			in = uint64(mid) >= a && uint64(mid) < b
			continue
		}
		if in && strings.HasPrefix(l, "VmFlags:") {
			if !strings.Contains(l, " hg") {
				t.Fatalf("mapping of the buffer: %s, want the hg flag", l)
			}
			return
		}
	}
	t.Fatal("buffer's mapping not found in /proc/self/smaps")
}
