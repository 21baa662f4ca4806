package gemm

import "syscall"

// osYield gives the CPU to another runnable thread, if any (sched_yield).
func osYield() { syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
