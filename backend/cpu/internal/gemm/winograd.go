package gemm

import "unsafe"

// Winograd F(2×2, 3×3): a 3×3, stride-1 convolution computes each 2×2 block
// of outputs from a 4×4 block of inputs with 16 multiplications per
// (input, output) channel pair instead of 36. With V = Bᵀ·d·B (the input
// block transformed), U = G·g·Gᵀ (the kernel) and Y = Aᵀ·M·A,
//
//	M[ξ] = Σ_c U[ξ][o][c] · V[ξ][c][tile]   for each of the 16 ξ,
//
// which is 16 GEMMs [O × C] × [C × tiles] on the micro-kernels: the input
// transform writes V straight into the GEMM's packed B panels (NR tiles
// per panel), the weight transform into packed A panels, and the kernels
// write M in a layout the output transform reads lane by lane. Tiles are
// processed a few panels at a time so that V and M stay in cache.
//
//	Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1]
//	G  = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1]
//	Aᵀ = [1 1 1 0; 0 1 −1 −1]

// winoSlack is how many elements the padded input has before and after
// it: the vector input transform reads whole groups of eight tiles.
const winoSlack = 32

// winogradMode lets tests force the choice: 0 chooses, 1 never, 2 always
// (where it applies).
var winogradMode = 0

// useWinograd reports whether convForward takes the Winograd path; vec:
// the transforms run in AVX2 (float32 where the CPU has it).
func useWinograd(cv Conv, vec bool) bool {
	if cv.KH != 3 || cv.KW != 3 || cv.SH != 1 || cv.SW != 1 || cv.DH != 1 || cv.DW != 1 || cv.PH < 0 || cv.PW < 0 {
		return false
	}
	switch winogradMode {
	case 1:
		return false
	case 2:
		return true
	}
	// The transforms cost per channel what the GEMMs save per channel
	// pair: worth it only with enough channels on both sides. And each
	// transformed weight (16·C·O of them) is used once per tile: with few
	// tiles streaming them costs more than it saves. With the weight
	// transform in AVX2 (winoWeightsAVX2Panel), on 2 threads of a Zen 5:
	// 128 tiles of 256 channels (ResNet-18's layer 3 at 64×64, batch 32)
	// ~20% faster than the direct convolution, 256 tiles of 512 (layer 4
	// at 224×224, batch 16) ~28%; 32 tiles of 512 (layer 4 at 64×64)
	// ~60% slower. The Go transforms (float64, other CPUs) keep the
	// earlier bound, tiles ≥ 2·channels.
	cg, og := cv.C/cv.G, cv.O/cv.G
	tiles := cv.N * ((cv.OH + 1) / 2) * ((cv.OW + 1) / 2)
	if !vec {
		tiles /= 4
	}
	return cg >= 16 && og >= 16 && 2*tiles >= max(cg, og)
}

// winoWeights packs U = G·g·Gᵀ of each group into MR-row panels of the 16
// GEMMs' A operands: ξ-major, then group, then K blocks of kcb channels as
// packWeights lays them out (block at pc·mpad, panel ir at ir·kc). Rows past
// rows are zero. Items are whole panels (rows of one panel share cache
// lines).
func winoWeights[T float](dst, w []T, wl wlayout, groups, rows, chans, mr, kcb int) {
	mpad := (rows + mr - 1) / mr * mr
	per := mpad * chans // one ξ and group
	panels := mpad / mr
	total := groups * panels
	runItems(total, workers(total, float64(mr*chans)*64), func(_, it int) {
		g, ir := it/panels, it%panels*mr
		if df, ok := any(dst).([]float32); ok && winoWeightsAVX2Panel(df, any(w).([]float32), wl, g, ir, groups, rows, chans, mr, kcb) {
			return
		}
		for pc := 0; pc < chans; pc += kcb {
			kc := min(kcb, chans-pc)
			for c := pc; c < pc+kc; c++ {
				// the panel's mr rows of channel c are consecutive in each
				// of the 16 planes
				off := pc*mpad + ir*kc + (c-pc)*mr
				var d [16][]T
				for xi := range d {
					d[xi] = dst[(xi*groups+g)*per+off:][:mr]
				}
				for i := 0; i < mr; i++ {
					r := ir + i
					if r >= rows {
						for xi := range d {
							d[xi][i] = 0
						}
						continue
					}
					base := wl.base + g*wl.gs + r*wl.rs + c*wl.cs
					k00, k01, k02 := w[base], w[base+wl.ls], w[base+2*wl.ls]
					base += wl.ks
					k10, k11, k12 := w[base], w[base+wl.ls], w[base+2*wl.ls]
					base += wl.ks
					k20, k21, k22 := w[base], w[base+wl.ls], w[base+2*wl.ls]
					// G·g, rows a = 0..3
					t := [4][3]T{
						{k00, k01, k02},
						{(k00 + k10 + k20) / 2, (k01 + k11 + k21) / 2, (k02 + k12 + k22) / 2},
						{(k00 - k10 + k20) / 2, (k01 - k11 + k21) / 2, (k02 - k12 + k22) / 2},
						{k20, k21, k22},
					}
					for a := 0; a < 4; a++ { // (G·g)·Gᵀ: plane 4a+j
						t0, t1, t2 := t[a][0], t[a][1], t[a][2]
						d[4*a][i] = t0
						d[4*a+1][i] = (t0 + t1 + t2) / 2
						d[4*a+2][i] = (t0 - t1 + t2) / 2
						d[4*a+3][i] = t2
					}
				}
			}
		}
	})
}

// convWinograd is convForward for a 3×3, stride-1, undilated convolution.
func convWinograd[T float](cv Conv, x []T, xs [4]int, w []T, wl wlayout, bias, out []T) {
	kr := kernelOf[T]()
	mr, nr := kr.mr, kr.nr
	cg, og := cv.C/cv.G, cv.O/cv.G
	th, tw := (cv.OH+1)/2, (cv.OW+1)/2 // tiles per image
	tiles := cv.N * th * tw
	panels := (tiles + nr - 1) / nr

	// The input, zero-padded to the tiles' 2·th+2 rows and 2·tw+2 columns.
	hp, wp := 2*th+2, 2*tw+2
	// (with slack on both sides for the vector transform's reads)
	xpAll := getScratch[T](cv.N*cv.C*hp*wp + 2*winoSlack)
	defer putScratch(xpAll)
	xp := xpAll[winoSlack : winoSlack+cv.N*cv.C*hp*wp]
	padPlanes(cv, x, xs, xp, hp, wp)

	kcb := balance(cg, convKC(kr.kc, nr, int(sizeOf[T]())), 1)
	mpad := (og + mr - 1) / mr * mr
	per := mpad * cg
	u := getScratch[T](16 * cv.G * per)
	defer putScratch(u)
	winoWeights(u, w, wl, cv.G, og, cg, mr, kcb)

	// Items: a group and a few panels of tiles; V (16 × cg × panels × nr)
	// and M (panels × 16 × mpad × nr) stay within ~256 KiB each.
	pp := max(1, min(panels, (64<<10)/(16*max(cg, mpad)*nr)))
	t := numThreads()
	for pp > 1 && cv.G*((panels+pp-1)/pp) < 4*t {
		pp /= 2
	}
	blocks := (panels + pp - 1) / pp
	total := cv.G * blocks
	cost := float64(og) * float64(cg) * float64(pp*nr) * 16 / 36
	t = workers(total, cost)
	type state struct{ v, m []T }
	st := make([]state, t)
	runItems(total, t, func(wk, it int) {
		s := &st[wk]
		if s.v == nil {
			s.v = getScratch[T](16 * winoVStride(cg, pp, nr))
			s.m = getScratch[T](pp * 16 * mpad * nr)
		}
		gi, b := it/blocks, it%blocks
		p0 := b * pp
		np := min(pp, panels-p0)
		// V[ξ][panel][c][lane]: each (ξ, panel) a packed B panel of cg rows
		if !winoInputAVX2(s.v, xpAll, cv, gi, cg, hp, wp, th, tw, tiles, p0, np, nr) {
			winoInput(s.v, xp, cv, gi, cg, hp, wp, th, tw, tiles, p0, np, nr)
		}
		for xi := 0; xi < 16; xi++ {
			ua := u[(xi*cv.G+gi)*per:]
			for p := 0; p < np; p++ {
				vb := s.v[xi*winoVStride(cg, np, nr)+p*cg*nr:]
				mc := s.m[((p*16+xi)*mpad)*nr:]
				for pc := 0; pc < cg; pc += kcb {
					kc := min(kcb, cg-pc)
					accum := 0
					if pc > 0 {
						accum = 1
					}
					for ir := 0; ir < mpad; ir += mr {
						// rows og..mpad of M are never read: a partial
						// panel computes only its og-ir rows where the
						// kernel set can
						fn, _ := kr.rowsFn(og - ir)
						fn(kc, &ua[pc*mpad+ir*kc], &vb[pc*nr], &mc[ir*nr], nr, accum)
					}
				}
			}
		}
		if !winoOutputAVX2(out, s.m, bias, cv, gi, og, mpad, th, tw, tiles, p0, np, nr) {
			winoOutput(out, s.m, bias, cv, gi, og, mpad, th, tw, tiles, p0, np, nr)
		}
	})
	for i := range st {
		if st[i].v != nil {
			putScratch(st[i].v)
			putScratch(st[i].m)
		}
	}
}

func sizeOf[T float]() uintptr {
	var z T
	return unsafe.Sizeof(z)
}

// winoVStride is the distance between V's ξ planes for np panels: a few
// cache lines more than their size, so that the 16 planes written together
// do not all map to the same cache sets.
func winoVStride(cg, np, nr int) int { return np*cg*nr + 16 }

// winoInput writes V = Bᵀ·d·B for the np panels of tiles from p0 on, group
// gi's channels: V[ξ][panel][c][lane], planes winoVStride apart. Lanes past the last tile are zero.
func winoInput[T float](v, xp []T, cv Conv, gi, cg, hp, wp, th, tw, tiles, p0, np, nr int) {
	plane := hp * wp
	for p := 0; p < np; p++ {
		for lane := 0; lane < nr; lane++ {
			tile := (p0+p)*nr + lane
			if tile >= tiles {
				for xi := 0; xi < 16; xi++ {
					for c := 0; c < cg; c++ {
						v[xi*winoVStride(cg, np, nr)+(p*cg+c)*nr+lane] = 0
					}
				}
				continue
			}
			n, r := tile/(th*tw), tile%(th*tw)
			ty, tx := r/tw, r%tw
			src := (n*cv.C+gi*cg)*plane + 2*ty*wp + 2*tx
			for c := 0; c < cg; c++ {
				d := xp[src+c*plane:]
				r0, r1, r2, r3 := d[:4:4], d[wp:wp+4:wp+4], d[2*wp:2*wp+4:2*wp+4], d[3*wp:3*wp+4:3*wp+4]
				var t [4][4]T // Bᵀ·d
				for j := 0; j < 4; j++ {
					t[0][j] = r0[j] - r2[j]
					t[1][j] = r1[j] + r2[j]
					t[2][j] = r2[j] - r1[j]
					t[3][j] = r1[j] - r3[j]
				}
				o := (p*cg+c)*nr + lane
				step := winoVStride(cg, np, nr) // next ξ
				for a := 0; a < 4; a++ {        // (Bᵀ·d)·B
					vv := v[o+4*a*step:]
					vv[0] = t[a][0] - t[a][2]
					vv[step] = t[a][1] + t[a][2]
					vv[2*step] = t[a][2] - t[a][1]
					vv[3*step] = t[a][1] - t[a][3]
				}
			}
		}
	}
}

// winoOutput writes Y = Aᵀ·M·A (+ bias) for the np panels of tiles from p0
// on into out, group gi's og channels; M[panel][ξ][o][lane].
func winoOutput[T float](out, m, bias []T, cv Conv, gi, og, mpad, th, tw, tiles, p0, np, nr int) {
	l := cv.OH * cv.OW
	step := mpad * nr // next ξ
	for p := 0; p < np; p++ {
		for lane := 0; lane < nr; lane++ {
			tile := (p0+p)*nr + lane
			if tile >= tiles {
				break
			}
			n, r := tile/(th*tw), tile%(th*tw)
			oy, ox := 2*(r/tw), 2*(r%tw)
			for o := 0; o < og; o++ {
				mm := m[(p*16*mpad+o)*nr+lane:]
				var t [2][4]T // Aᵀ·M
				for j := 0; j < 4; j++ {
					m0, m1, m2, m3 := mm[j*step], mm[(4+j)*step], mm[(8+j)*step], mm[(12+j)*step]
					t[0][j] = m0 + m1 + m2
					t[1][j] = m1 - m2 - m3
				}
				var b T
				if bias != nil {
					b = bias[gi*og+o]
				}
				dst := out[(n*cv.O+gi*og+o)*l:][:l]
				for a := 0; a < 2 && oy+a < cv.OH; a++ { // (Aᵀ·M)·A
					row := dst[(oy+a)*cv.OW:]
					row[ox] = t[a][0] + t[a][1] + t[a][2] + b
					if ox+1 < cv.OW {
						row[ox+1] = t[a][1] - t[a][2] - t[a][3] + b
					}
				}
			}
		}
	}
}
