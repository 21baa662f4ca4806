//go:build !amd64 || purego

package gemm

func packPanelSIMD[T float](dst, s []T, off, is, ps, rows, w, kc int, alpha T) bool { return false }
