package dist

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/emberml/ember"
)

func init() { workers["bench"] = workerBench }

// workerBench is the other rank of BenchmarkAllReduce: warm-up plus
// EMBER_BENCH_N all-reduces of EMBER_BENCH_ELEMS float32s.
func workerBench() error {
	n, _ := strconv.Atoi(os.Getenv("EMBER_BENCH_N"))
	elems, _ := strconv.Atoi(os.Getenv("EMBER_BENCH_ELEMS"))
	g, err := InitProcessGroup("cpu", Options{})
	if err != nil {
		return err
	}
	defer g.Close()
	x := ember.Ones(ember.Shape{elems})
	for i := 0; i < n+1; i++ {
		if err := g.AllReduce(x, Sum); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkAllReduce measures a float32 sum all-reduce between this process
// (rank 0) and a child (rank 1) on loopback. MB/s is the algorithm
// bandwidth (size / time); busGB/s the bus bandwidth as nccl-tests define
// it, algbw·2(n-1)/n, which equals algbw for two ranks.
func BenchmarkAllReduce(b *testing.B) {
	const world = 2
	for _, size := range []int{1 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			elems := size / 4
			port := freePort(b)
			cs := spawnPort(b, "bench", world, []int{1}, time.Minute, port, fmt.Sprint("EMBER_BENCH_N=", b.N), fmt.Sprint("EMBER_BENCH_ELEMS=", elems))
			g, err := InitProcessGroup("cpu", Options{Rank: 0, WorldSize: world, MasterAddr: "127.0.0.1", MasterPort: port, Timeout: 5 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			x := ember.Ones(ember.Shape{elems})
			if err := g.AllReduce(x, Sum); err != nil { // warm-up: connections, buffers
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := g.AllReduce(x, Sum); err != nil {
					b.Fatal(err)
				}
			}
			el := time.Since(start)
			b.StopTimer()
			algbw := float64(size) * float64(b.N) / el.Seconds() / 1e9
			b.ReportMetric(algbw, "algGB/s")
			b.ReportMetric(algbw*2*(world-1)/world, "busGB/s")
			g.Close()
			waitOK(b, cs)
		})
	}
}
