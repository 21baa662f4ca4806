//go:build unix

package launch

import "syscall"

// killGroup sends sig to the process group of the worker with pid pid (the
// worker leads its own group); an already empty group is not an error.
func killGroup(pid int, sig syscall.Signal) { syscall.Kill(-pid, sig) }
