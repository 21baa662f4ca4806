//go:build !linux

package cpu

import "unsafe"

// adviseHuge is a no-op off Linux.
func adviseHuge(unsafe.Pointer, int) {}
