//go:build race

package gemm

// raceEnabled: sync.Pool drops items at random under the race detector.
const raceEnabled = true
