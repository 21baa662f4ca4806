package cpu

// SetGrain sets the parallel split threshold (see grain) and returns the
// previous one, so that tests reach the parallel paths with small tensors.
func SetGrain(n int) int {
	prev := grain
	grain = n
	return prev
}
