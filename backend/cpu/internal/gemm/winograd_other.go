//go:build !amd64 || purego

package gemm

func winoInputAVX2[T float](v, xpAll []T, cv Conv, gi, cg, hp, wp, th, tw, tiles, p0, np, nr int) bool {
	return false
}

func winoOutputAVX2[T float](out, m, bias []T, cv Conv, gi, og, mpad, th, tw, tiles, p0, np, nr int) bool {
	return false
}

var hasWinoWeights = false

func winoWeightsAVX2Panel(dst, w []float32, wl wlayout, g, ir, groups, rows, chans, mr, kcb int) bool {
	return false
}
