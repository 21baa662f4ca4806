//go:build linux && amd64 && !purego

package gemm

import (
	"errors"
	"syscall"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestXcompPerm asks this machine's Linux which extended state components
// it supports and, for AMX's tile data, for permission: granted where the
// kernel supports tile data, EOPNOTSUPP where it does not (the real syscalls;
// ARCH_GET_XCOMP_SUPP exists since Linux 5.16).
func TestXcompPerm(t *testing.T) {
	mask, err := xcompSupported()
	if errors.Is(err, syscall.EINVAL) {
		t.Skipf("this kernel predates ARCH_GET_XCOMP_SUPP: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if mask&3 != 3 {
		t.Fatalf("supported components %#x lack x87 and SSE", mask)
	}
	tiles := mask&(1<<xfeatureTileData) != 0
	t.Logf("components %#x, tile data %v, CPU AMX-TILE %v AMX-BF16 %v", mask, tiles, cpu.X86.HasAMXTile, cpu.X86.HasAMXBF16)
	if tiles && !cpu.X86.HasAMXTile {
		t.Fatal("the kernel supports tile data on a CPU without AMX-TILE")
	}
	err = requestTileData()
	switch {
	case tiles && err != nil:
		t.Fatalf("tile data supported, permission refused: %v", err)
	case !tiles && !errors.Is(err, syscall.EOPNOTSUPP):
		t.Fatalf("tile data unsupported, request gave %v, want EOPNOTSUPP", err)
	}
	if err := requestAMX(); (err == nil) != (tiles && cpu.X86.HasAMXBF16) {
		t.Fatalf("requestAMX: %v", err)
	}
}
