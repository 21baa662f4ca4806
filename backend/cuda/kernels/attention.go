package kernels

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
)

//go:embed attention.cu
var attentionSrc string

// ModAttention is the fused attention module (attention.cu).
const ModAttention = "attention"

// attnRows is ATTN_ROWS: the threads of an attention block, one row each.
const attnRows = 64

// attnHeadDims are the head-dim bounds D the kernels are instantiated for.
var attnHeadDims = []int{64, 128, 256}

// AttentionHeadDim returns the smallest instantiated bound D ≥ e and ev,
// and false when the head dims are too large (or not positive) for the
// kernels.
func AttentionHeadDim(e, ev int) (int, bool) {
	for _, d := range attnHeadDims {
		if e > 0 && ev > 0 && e <= d && ev <= d {
			return d, true
		}
	}
	return 0, false
}

// AttentionDTypes are the storage dtypes the kernels are instantiated for.
var AttentionDTypes = []backend.DType{backend.Float32, backend.Float64, backend.BFloat16, backend.Float16}

// attnAcc is the accumulation type of storage dtype dt: float64 for
// float64, float32 for the others (the two-byte floats compute in float).
func attnAcc(dt backend.DType) backend.DType {
	if dt == backend.Float64 {
		return backend.Float64
	}
	return backend.Float32
}

func attentionNames() []string {
	var out []string
	for _, dt := range AttentionDTypes {
		c, a := ctype(dt), ctype(attnAcc(dt))
		for _, d := range attnHeadDims {
			for _, k := range []string{"ember_attn_fwd", "ember_attn_bwd_dq", "ember_attn_bwd_dkv"} {
				out = append(out, fmt.Sprintf("%s<%s, %s, %d>", k, c, a, d))
			}
		}
	}
	return out
}

// attnShape packs the C struct AttnShape.
func attnShape(q, k, v, out, gout, mask Operand, p backend.AttentionParams) []byte {
	var b []byte
	put := func(xs ...int) {
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, uint64(int64(x)))
		}
	}
	put(q.Shape[0], q.Shape[1], k.Shape[1], q.Shape[2], v.Shape[2])
	for _, o := range []Operand{q, k, v, out, gout} {
		if o.Strides == nil {
			put(0, 0, 0)
		} else {
			put(o.Strides...)
		}
	}
	if p.Mask != backend.NoMask {
		put(mask.Strides...)
		put(mask.Shape[1])
	} else {
		put(0, 0, 0, 0, 1)
	}
	causal := 0
	if p.Causal {
		causal = 1
	}
	put(int(p.Mask), causal)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(p.Scale))
}

func maskArg(mask Operand, p backend.AttentionParams) []byte {
	if p.Mask == backend.NoMask {
		return u64Arg(0)
	}
	return ptrArg(mask)
}

func attnLaunch(p DeviceProps, kernel string, blocks int, args ...[]byte) Launch {
	g := blocks
	if lim := max(p.SMCount, 1) * 64; g > lim {
		g = lim
	}
	return Launch{Module: ModAttention, Kernel: kernel, Grid: [3]uint32{uint32(max(g, 1)), 1, 1}, Block: [3]uint32{attnRows, 1, 1}, Args: args}
}

func attnName(kernel string, dt backend.DType, e, ev int) string {
	d, ok := AttentionHeadDim(e, ev)
	if !ok || (dt != backend.Float32 && dt != backend.Float64 && !dt.IsHalf()) {
		panic(&backend.NotImplementedError{Op: fmt.Sprintf("scaled_dot_product_attention (head dims %d, %d)", e, ev), Device: backend.CUDAType, DType: dt})
	}
	return fmt.Sprintf("%s<%s, %s, %d>", kernel, ctype(dt), ctype(attnAcc(dt)), d)
}

// AttentionForward writes out = softmax(q·kᵀ·scale + mask)·v ([B, L, Ev],
// contiguous) and each row's logsumexp lse ([B, L]): q [B, L, E], k
// [B, S, E], v [B, S, Ev] and mask [B1, B2, L, S] with any strides. One
// block of 64 threads per 64 query rows.
func AttentionForward(p DeviceProps, out, lse, q, k, v, mask Operand, ap backend.AttentionParams) []Launch {
	b, l, e, ev := q.Shape[0], q.Shape[1], q.Shape[2], v.Shape[2]
	if b*l == 0 {
		return nil
	}
	name := attnName("ember_attn_fwd", q.DType, e, ev)
	return []Launch{attnLaunch(p, name, b*((l+attnRows-1)/attnRows),
		ptrArg(out), ptrArg(lse), ptrArg(q), ptrArg(k), ptrArg(v), maskArg(mask, ap), attnShape(q, k, v, out, Operand{}, mask, ap))}
}

// AttentionBackward writes gq, gk, gv (contiguous) from gout, the
// forward's inputs, out and lse; dd is a [B, L] scratch of lse's dtype
// (each row's dO·O). Two launches: dQ (and dd) per query row, then dK and
// dV per key row.
func AttentionBackward(p DeviceProps, gq, gk, gv, gout, q, k, v, mask, out, lse, dd Operand, ap backend.AttentionParams) []Launch {
	b, l, s, e, ev := q.Shape[0], q.Shape[1], k.Shape[1], q.Shape[2], v.Shape[2]
	if b*l == 0 && b*s == 0 {
		return nil
	}
	sh := attnShape(q, k, v, out, gout, mask, ap)
	m := maskArg(mask, ap)
	return []Launch{
		attnLaunch(p, attnName("ember_attn_bwd_dq", q.DType, e, ev), b*((l+attnRows-1)/attnRows),
			ptrArg(gq), ptrArg(dd), ptrArg(gout), ptrArg(q), ptrArg(k), ptrArg(v), m, ptrArg(out), ptrArg(lse), sh),
		attnLaunch(p, attnName("ember_attn_bwd_dkv", q.DType, e, ev), b*((s+attnRows-1)/attnRows),
			ptrArg(gk), ptrArg(gv), ptrArg(gout), ptrArg(q), ptrArg(k), ptrArg(v), m, ptrArg(lse), ptrArg(dd), sh),
	}
}
