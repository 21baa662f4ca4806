//go:build linux && amd64 && !purego

package gemm

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/cpu"
	"golang.org/x/sys/unix"
)

// Linux's arch_prctl codes for the extended state components a process may
// use (asm/prctl.h) and AMX's tile data component (XFEATURE_XTILEDATA).
const (
	archGetXcompSupp = 0x1021
	archReqXcompPerm = 0x1023
	xfeatureTileData = 18
)

// xcompSupported returns the extended state components the kernel
// supports (a bit mask of XFEATURE numbers).
func xcompSupported() (uint64, error) {
	var mask uint64
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archGetXcompSupp, uintptr(unsafe.Pointer(&mask)), 0); e != 0 {
		return 0, fmt.Errorf("gemm: arch_prctl(ARCH_GET_XCOMP_SUPP): %w", e)
	}
	return mask, nil
}

// requestTileData asks Linux for the AMX tile state, for every thread of
// the process (once granted it stays granted).
func requestTileData() error {
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureTileData, 0); e != 0 {
		return fmt.Errorf("gemm: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): %w", e)
	}
	return nil
}

// requestAMX makes AMX-BF16 usable by this process, or says why not.
func requestAMX() error {
	if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16 {
		return errors.New("gemm: this CPU has no AMX-BF16")
	}
	return requestTileData()
}
