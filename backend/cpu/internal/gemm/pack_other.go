//go:build !amd64 || purego

package gemm

import "unsafe"

func packPanelSIMD[T float](dst, s []T, off, is, ps, rows, w, kc int, alpha T) bool { return false }

func copyRows(dst, src unsafe.Pointer, offs []int, shift, width int) bool { return false }

func canCopyRows(width int) bool { return false }

func copyRuns(dst, src unsafe.Pointer, offs, bases []int, shift, width int) bool { return false }

func bfPanelSIMD(dst []uint32, s []uint16, off, is, rows, w, kc int, along bool) bool { return false }

func roundBF16SIMD(dst []uint16, src []float32) int { return 0 }

var hasPhaseRows = false

func (pr *phaseRows) fill(dst, src unsafe.Pointer) {
	panic("gemm: phaseRowsAVX512 on a CPU without it")
}

func amxRowsSIMD(dst []uint32, src []uint16, rows, ld, words, nq, qs int) bool { return false }
