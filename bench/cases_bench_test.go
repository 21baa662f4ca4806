package bench

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkCases runs each case under go test, for profiles:
//
//	go test ./bench -run - -bench Cases/resnet18_fwd -cpuprofile cpu.prof
//
// Besides time per run it reports CPU time per run (cpu-ms/op), which
// says more than wall time on a loaded machine.
func BenchmarkCases(b *testing.B) {
	for _, c := range Cases() {
		b.Run(c.Name, func(b *testing.B) {
			run, err := c.Setup()
			if err != nil {
				b.Skip(err)
			}
			run()
			c0 := cpuTime()
			for b.Loop() {
				run()
			}
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
