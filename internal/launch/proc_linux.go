package launch

import "syscall"

// sysProcAttr puts a worker in its own process group (so that a terminal's
// Ctrl-C reaches launch alone, which forwards it, and so that stopping a
// worker stops what it started) and has the kernel kill it if launch dies
// without stopping it (Pdeathsig fires when the thread that started the
// worker ends; Go ends threads only under runtime.LockOSThread, which Run
// does not use).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
