package gemm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time: on a loaded machine, CPU
// time per op says more than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchConvs are the bench's conv3x3 case, ResNet-18's layers at batch 16
// and SimpleCNN's second conv at batch 64.
var benchConvs = []struct {
	name                string
	n, c, h, o, k, s, p int
}{
	{"conv3x3", 8, 64, 56, 64, 3, 1, 1},
	{"r18_conv1", 16, 3, 224, 64, 7, 2, 3},
	{"r18_l1", 16, 64, 56, 64, 3, 1, 1},
	{"r18_l2a", 16, 64, 56, 128, 3, 2, 1},
	{"r18_l2", 16, 128, 28, 128, 3, 1, 1},
	{"r18_l2ds", 16, 64, 56, 128, 1, 2, 0},
	{"r18_l3", 16, 256, 14, 256, 3, 1, 1},
	{"r18_l4", 16, 512, 7, 512, 3, 1, 1},
	{"cnn_conv1", 64, 1, 28, 32, 3, 1, 1},
	// resnet18_finetune_step's layers at batch 32, 64×64
	{"ft_conv1", 32, 3, 64, 64, 7, 2, 3},
	{"ft_l1", 32, 64, 16, 64, 3, 1, 1},
	{"ft_l2a", 32, 64, 16, 128, 3, 2, 1},
	{"ft_l2", 32, 128, 8, 128, 3, 1, 1},
	{"ft_l3a", 32, 128, 8, 256, 3, 2, 1},
	{"ft_l3", 32, 256, 4, 256, 3, 1, 1},
	{"ft_l4a", 32, 256, 4, 512, 3, 2, 1},
	{"ft_l4", 32, 512, 2, 512, 3, 1, 1},
	{"cnn_conv2", 64, 32, 14, 64, 3, 1, 1},
}

func BenchmarkConv(b *testing.B) {
	if v := os.Getenv("CONV_EXACT"); v != "" {
		exactBelow, _ = strconv.ParseFloat(v, 64)
	}
	if v := os.Getenv("CONV_WGRAD"); v != "" {
		weightGradMode, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("CONV_WINO"); v != "" {
		winogradMode, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("CONV_KC"); v != "" {
		convKCOverride, _ = strconv.Atoi(v)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, bc := range benchConvs {
		cv := Conv{N: bc.n, C: bc.c, H: bc.h, W: bc.h, O: bc.o, KH: bc.k, KW: bc.k, G: 1,
			SH: bc.s, SW: bc.s, PH: bc.p, PW: bc.p, DH: 1, DW: 1}
		cv.OH = OutSize(bc.h, bc.k, bc.s, bc.p, 1)
		cv.OW = cv.OH
		x := randSlice[float32](r, cv.N*cv.C*cv.H*cv.W)
		xs := [4]int{cv.C * cv.H * cv.W, cv.H * cv.W, cv.W, 1}
		w := randSlice[float32](r, cv.O*cv.C*cv.KH*cv.KW)
		bias := randSlice[float32](r, cv.O)
		out := make([]float32, cv.N*cv.O*cv.OH*cv.OW)
		gx := make([]float32, len(x))
		gw := make([]float32, len(w))
		flops := 2 * float64(cv.N*cv.O*cv.OH*cv.OW) * float64(cv.C*cv.KH*cv.KW)
		for _, pass := range []string{"fwd", "dgrad", "wgrad"} {
			b.Run(fmt.Sprintf("%s/%s", bc.name, pass), func(b *testing.B) {
				c0 := cpuTime()
				for b.Loop() {
					switch pass {
					case "fwd":
						ConvForward(cv, x, xs, w, bias, out)
					case "dgrad":
						ConvGradInput(cv, out, w, gx)
					case "wgrad":
						ConvGradWeight(cv, x, xs, out, gw)
					}
				}
				cpu := cpuTime() - c0
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
				b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
			})
		}
	}
}

// BenchmarkSgemmCPU is sgemm 1024 with the CPU-time metrics of
// BenchmarkConv, to calibrate them.
func BenchmarkSgemmCPU(b *testing.B) {
	const n = 1024
	x, y, z := benchData(n)
	c0 := cpuTime()
	for b.Loop() {
		Sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
	}
	cpu := cpuTime() - c0
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	b.ReportMetric(2*n*n*n*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
}
