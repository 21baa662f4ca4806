//go:build unix && !linux

package launch

import "syscall"

// sysProcAttr puts a worker in its own process group (so that a terminal's
// Ctrl-C reaches launch alone, which forwards it, and so that stopping a
// worker stops what it started).
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
