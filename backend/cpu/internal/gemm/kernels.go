package gemm

// The AVX-512 set's shapes live here, not in the amd64 files, so that the
// tests run the layout logic with them on every machine (on Go code; see
// shapes_test.go). Its dot-product tile (4×6 of 16 or 8 lanes) is that of
// the AVX-512 dot kernels, which run only where avx512Dot is set (see
// archKernels); by default the set uses the AVX2 ones and their tile.
var (
	avx512S = shape{mr: 14, nr: 32, mc: 14 * 24, kc: 384, nc: 768, dmr: 4, dnr: 6, dvw: 16, streamB: true, convNC: 768}
	// The bfloat16 kernel's: kc counts pairs (words of two k values). A
	// 256-pair A panel (14 KiB) and a 1024-column B block (1 MiB) rather
	// than float32's 384 and 768 (21 KiB, 1.2 MiB): on Zen 5 a 1024
	// product went from ~683 to ~720 GFLOP/s (one column block instead of
	// two, so A is packed once), 512 and 2048 were unchanged, and
	// ResNet-18's 14×14 and 7×7 convolutions took ~3% less.
	avx512B = func() shape { s := avx512S; s.kc, s.nc = 256, 1024; return s }()
	avx512D = shape{mr: 14, nr: 16, mc: 14 * 24, kc: 256, nc: 512, dmr: 4, dnr: 6, dvw: 8, streamB: true, convNC: 512}
	// BLIS's blocking for Zen 3 (config/zen3): the B micro-panel, 16 KiB,
	// in a 32 KiB L1; the A block, 144 KiB, in a 512 KiB L2; the B block,
	// 4 MiB, in L3.
	avx2S = shape{mr: 6, nr: 16, mc: 144, kc: 256, nc: 4080, dmr: 2, dnr: 6, dvw: 8, convNC: 512}
	avx2D = shape{mr: 6, nr: 8, mc: 72, kc: 256, nc: 4080, dmr: 2, dnr: 6, dvw: 4, convNC: 256}
)

// withDot returns s with the dot-product tile of d.
func (s shape) withDot(d shape) shape {
	s.dmr, s.dnr, s.dvw = d.dmr, d.dnr, d.dvw
	return s
}
