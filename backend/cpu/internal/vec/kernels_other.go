//go:build !amd64 || purego

package vec

// No assembly here: every entry point takes its pure-Go loop.
const hasAsm, hasFMA = false, false

// hasF16C: the float16 conversions need F16C besides.
const hasF16C = false

const hasAVX512BW = false

var (
	vvS [4]func(d, a, b *float32, n int)
	vsS [4]func(d, a *float32, s float32, n int)
	vvD [4]func(d, a, b *float64, n int)
	vsD [4]func(d, a *float64, s float64, n int)
)

func svS(op Op, d *float32, s float32, b *float32, n int)           {}
func svD(op Op, d *float64, s float64, b *float64, n int)           {}
func reluS(d, a *float32, n int)                                    {}
func reluD(d, a *float64, n int)                                    {}
func reluGradS(d, gr, y *float32, n int)                            {}
func reluGradD(d, gr, y *float64, n int)                            {}
func affineS(d, a *float32, s, b float32, n int)                    {}
func affineD(d, a *float64, s, b float64, n int)                    {}
func fmavS(d, a, s, b *float32, n int)                              {}
func fmavD(d, a, s, b *float64, n int)                              {}
func max2S(d, a, b *float32, n int) int                             { return 0 }
func maxPool3S2S(o, v *float32, n int)                              {}
func fillS(d *float32, v float32, n int)                            {}
func fillD(d *float64, v float64, n int)                            {}
func wherevvS(d *float32, c *bool, a, b *float32, n int)            {}
func wherevsS(d *float32, c *bool, a *float32, s float32, n int)    {}
func wheresvS(d *float32, c *bool, s float32, b *float32, n int)    {}
func wherevvD(d *float64, c *bool, a, b *float64, n int)            {}
func wherevsD(d *float64, c *bool, a *float64, s float64, n int)    {}
func wheresvD(d *float64, c *bool, s float64, b *float64, n int)    {}
func transS(d *float32, ldd int, s *float32, lds int, nblk int)     {}
func transD(d *float64, ldd int, s *float64, lds int, nblk int)     {}
func sumS(x *float32, n int, acc *[32]float64)                      {}
func sumD(x *float64, n int, acc *[16]float64)                      {}
func bf16FromS(d *uint16, s *float32, n int)                        {}
func sFromBF16(d *float32, s *uint16, n int)                        {}
func sumBF16(x *uint16, n int, acc *[32]float64)                    {}
func f16FromS(d *uint16, s *float32, n int)                         {}
func sFromF16(d *float32, s *uint16, n int)                         {}
func reluBF16(d, a *uint16, n int)                                  {}
func maxS(x *float32, n int, out *[32]float32) int                  { return 0 }
func minS(x *float32, n int, out *[32]float32) int                  { return 0 }
func maxD(x *float64, n int, out *[16]float64) int                  { return 0 }
func minD(x *float64, n int, out *[16]float64) int                  { return 0 }
func keysBF16(k *int16, s *uint16, n int)                           {}
func maxKeysBF16(k *int16, s *uint16, n int)                        {}
func windowMaxS1BF16(o *uint16, k *int16, n, kw int)                {}
func windowMaxS2BF16(o *uint16, k *int16, n, kw int)                {}
func sqDevBF16(x *uint16, n int, m float32, acc *[32]float64)       {}
func gradSumsBF16(g, x *uint16, n int, m float32, acc *[32]float64) {}
func affine2BF16(d, g, x *uint16, n int, a, b, c float32)           {}
func sqDevS(x *float32, n int, m float32, acc *[32]float64)         {}
func gradSumsS(g, x *float32, n int, m float32, acc *[32]float64)   {}
func affine2S(d, g, x *float32, n int, a, b, c float32)             {}
func affineBF16(d, x *uint16, n int, a, b float32)                  {}
func maxPool2x2BF16(o *uint16, ix *int64, x *uint16, oh, ow, w int) {}

func maxPool2x2S(o *float32, ix *int64, x *float32, oh, ow, w int) {}
