//go:build race

package gemm

// raceEnabled: allocation counts mean nothing under the race detector.
const raceEnabled = true
