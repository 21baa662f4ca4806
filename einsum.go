package ember

import (
	"fmt"
	"sort"
	"strings"
)

// Einsum evaluates an Einstein-summation equation over the operands, as
// torch.einsum: "ij,jk->ik" (matmul), "bij,bjk->bik" (batched),
// "i,j->ij" (outer), "ii->" (trace), "ii->i" (diagonal), "ij->ji"
// (transpose), "ij->j" (sums), "bhqd,bhkd->bhqk", "...ij,...jk->...ik"
// (an ellipsis stands for the dims no letter names, broadcast across the
// operands and right-aligned), and any other combination of these, with
// or without "->" (implicit output: the ellipsis dims, then the letters
// used once, in alphabetical order). A dim of size 1 broadcasts against
// the same letter's size in the other operands. Operands are contracted
// pairwise, left to right, each pair as one batched MatMul over permuted
// views (indices summed in one operand only are summed first, a repeated
// index takes the diagonal view), so no intermediate larger than the
// pair's result is made. Gradients flow through the ops it is made of (as
// in PyTorch, whose einsum is composite too).
func Einsum(eq string, ts ...*Tensor) *Tensor {
	const name = "einsum"
	eq = strings.ReplaceAll(eq, " ", "")
	lhs, out, explicit := strings.Cut(eq, "->")
	subs := strings.Split(lhs, ",")
	if len(subs) != len(ts) {
		panic(&ShapeError{Op: name, Msg: fmt.Sprintf("einsum(): %d operands in the equation, %d given", len(subs), len(ts))})
	}
	for k, t := range ts {
		t.live(name)
		if k > 0 {
			sameDevice(name, ts[0], t)
		}
	}
	subs, out = einsumEllipsis(subs, out, explicit, ts)
	count := map[byte]int{}
	size := map[byte]int{}
	for k, s := range subs {
		t := ts[k]
		if len(s) != t.Dim() {
			shapeErr(name, fmt.Sprintf("einsum(): the number of subscripts in the equation (%d) does not match the number of dimensions (%d) for operand %d", len(s), t.Dim(), k), t.shape)
		}
		own := map[byte]int{}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				panic(&ShapeError{Op: name, Msg: fmt.Sprintf("einsum(): invalid subscript %q", c)})
			}
			if n, ok := own[c]; ok && n != t.shape[i] {
				shapeErr(name, fmt.Sprintf("einsum(): subscript %c is repeated for operand %d but the sizes don't match, %d != %d", c, k, t.shape[i], n), t.shape)
			}
			own[c] = t.shape[i]
			count[c]++
			switch n, ok := size[c]; {
			case !ok || n == 1:
				size[c] = t.shape[i]
			case t.shape[i] != n && t.shape[i] != 1:
				shapeErr(name, fmt.Sprintf("einsum(): operands do not broadcast with remapped shapes (original->remapped): subscript %c has size %d for operand %d which does not broadcast with previously seen size %d", c, t.shape[i], k, n), t.shape)
			}
		}
	}
	// size-1 dims broadcast (views)
	ts = append([]*Tensor(nil), ts...)
	for k, s := range subs {
		shape := make([]int, len(s))
		grow := false
		for i := 0; i < len(s); i++ {
			shape[i] = size[s[i]]
			grow = grow || shape[i] != ts[k].shape[i]
		}
		if grow {
			ts[k] = ts[k].Expand(shape...)
		}
	}
	if !explicit {
		var ls []byte
		for c, n := range count {
			if n == 1 && !strings.Contains(out, string(c)) {
				ls = append(ls, c)
			}
		}
		sort.Slice(ls, func(i, j int) bool { return ls[i] < ls[j] })
		out += string(ls)
	}
	for i := 0; i < len(out); i++ {
		if _, ok := size[out[i]]; !ok || strings.IndexByte(out[i+1:], out[i]) >= 0 {
			panic(&ShapeError{Op: name, Msg: fmt.Sprintf("einsum(): output subscript %c appears more than once or not in the inputs", out[i])})
		}
	}
	// needed reports whether letter c is used by the output or an operand after k.
	needed := func(c byte, k int) bool {
		if strings.IndexByte(out, c) >= 0 {
			return true
		}
		for _, s := range subs[k+1:] {
			if strings.IndexByte(s, c) >= 0 {
				return true
			}
		}
		return false
	}
	cur, cl := einsumPrep(ts[0], subs[0], func(c byte) bool {
		return needed(c, 0) || (len(subs) > 1 && strings.IndexByte(subs[1], c) >= 0)
	})
	for k := 1; k < len(ts); k++ {
		x, xl := einsumPrep(ts[k], subs[k], func(c byte) bool { return needed(c, k) || strings.IndexByte(cl, c) >= 0 })
		// cur may hold letters that only the k-th operand no longer needs
		cur, cl = einsumSumOut(cur, cl, func(c byte) bool { return needed(c, k) || strings.IndexByte(xl, c) >= 0 })
		cur, cl = einsumPair(cur, cl, x, xl, func(c byte) bool { return needed(c, k) })
	}
	cur, cl = einsumSumOut(cur, cl, func(c byte) bool { return strings.IndexByte(out, c) >= 0 })
	perm := make([]int, len(out))
	for i := 0; i < len(out); i++ {
		perm[i] = strings.IndexByte(cl, out[i])
	}
	if len(perm) == 0 {
		return cur
	}
	return cur.Permute(perm...)
}

// einsumPrep takes the diagonal of repeated letters of one operand and sums
// out the letters keep rejects.
func einsumPrep(t *Tensor, s string, keep func(byte) bool) (*Tensor, string) {
	for {
		i, j := -1, -1
		for a := 0; a < len(s) && i < 0; a++ {
			if b := strings.IndexByte(s[a+1:], s[a]); b >= 0 {
				i, j = a, a+1+b
			}
		}
		if i < 0 {
			break
		}
		// the diagonal of dims i and j: both moved last, flattened, every
		// (n+1)-th element (a view where the permutation allows one), so
		// that Inf or NaN off the diagonal stay out of it
		n := t.shape[i]
		var perm []int
		var rest []byte
		for d := 0; d < t.Dim(); d++ {
			if d != i && d != j {
				perm = append(perm, d)
				rest = append(rest, s[d])
			}
		}
		perm = append(perm, i, j)
		p := t.Permute(perm...)
		flat := append(p.shape[:len(rest)].clone(), n*n)
		t = p.Reshape(flat...).Slice(len(rest), 0, n*n, n+1)
		s = string(rest) + s[i:i+1]
	}
	return einsumSumOut(t, s, keep)
}

// einsumSumOut sums the dims whose letters keep rejects.
func einsumSumOut(t *Tensor, s string, keep func(byte) bool) (*Tensor, string) {
	var dims []int
	var rest []byte
	for i := 0; i < len(s); i++ {
		if keep(s[i]) {
			rest = append(rest, s[i])
		} else {
			dims = append(dims, i)
		}
	}
	if len(dims) == 0 {
		return t, s
	}
	return t.Sum(Dims(dims...)), string(rest)
}

// einsumPair contracts a (letters al) with b (bl): letters in both that
// keep accepts are batch dims, those it rejects are summed; the others
// stay. The result's letters are batch, then a's own, then b's own.
func einsumPair(a *Tensor, al string, b *Tensor, bl string, keep func(byte) bool) (*Tensor, string) {
	var batch, contr, left, right []byte
	for i := 0; i < len(al); i++ {
		c := al[i]
		switch {
		case strings.IndexByte(bl, c) < 0:
			left = append(left, c)
		case keep(c):
			batch = append(batch, c)
		default:
			contr = append(contr, c)
		}
	}
	for i := 0; i < len(bl); i++ {
		if strings.IndexByte(al, bl[i]) < 0 {
			right = append(right, bl[i])
		}
	}
	sizes := func(t *Tensor, l string, cs []byte) (int, []int) {
		n, sh := 1, []int{}
		for _, c := range cs {
			d := t.shape[strings.IndexByte(l, c)]
			n *= d
			sh = append(sh, d)
		}
		return n, sh
	}
	permOf := func(l string, groups ...[]byte) []int {
		var p []int
		for _, g := range groups {
			for _, c := range g {
				p = append(p, strings.IndexByte(l, c))
			}
		}
		return p
	}
	nb, bsh := sizes(a, al, batch)
	nl, lsh := sizes(a, al, left)
	nc, _ := sizes(a, al, contr)
	nr, rsh := sizes(b, bl, right)
	a3 := a.permuteAll(permOf(al, batch, left, contr)).Reshape(nb, nl, nc)
	b3 := b.permuteAll(permOf(bl, batch, contr, right)).Reshape(nb, nc, nr)
	shape := append(append(append([]int{}, bsh...), lsh...), rsh...)
	return a3.MatMul(b3).Reshape(shape...), string(batch) + string(left) + string(right)
}

// permuteAll is Permute that accepts the empty permutation of a 0-d tensor.
func (t *Tensor) permuteAll(p []int) *Tensor {
	if len(p) == 0 {
		return t
	}
	return t.Permute(p...)
}

// einsumEllipsis replaces the ellipses of an equation by letters it does
// not use, one per dim: the most dims any operand's ellipsis covers, the
// operands right-aligned (as broadcasting), so that "...ij,jk->...ik" on
// [2, 5, 3, 4] and [4, 6] reads "ABij,jk->ABik". An implicit output
// starts with them; an explicit output without an ellipsis sums them.
func einsumEllipsis(subs []string, out string, explicit bool, ts []*Tensor) ([]string, string) {
	const name = "einsum"
	has := strings.Contains(out, ".")
	for _, s := range subs {
		has = has || strings.Contains(s, ".")
	}
	if !has {
		return subs, out
	}
	check := func(s, what string) {
		if i := strings.Index(s, "..."); strings.Count(s, ".") != 3 || i < 0 {
			panic(&ShapeError{Op: name, Msg: fmt.Sprintf("einsum(): found '.' for %s that is not part of any ellipsis", what)})
		}
	}
	used := map[byte]bool{}
	for _, s := range append(append([]string{}, subs...), out) {
		for i := 0; i < len(s); i++ {
			used[s[i]] = true
		}
	}
	var free []byte
	for _, r := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" {
		if !used[byte(r)] {
			free = append(free, byte(r))
		}
	}
	nd := make([]int, len(subs))
	most := 0
	for k, s := range subs {
		if !strings.Contains(s, ".") {
			continue
		}
		check(s, fmt.Sprintf("operand %d", k))
		nd[k] = ts[k].Dim() - (len(s) - 3)
		if nd[k] < 0 {
			shapeErr(name, fmt.Sprintf("einsum(): the number of subscripts in the equation (%d) is more than the number of dimensions (%d) for operand %d", len(s)-3, ts[k].Dim(), k), ts[k].shape)
		}
		most = max(most, nd[k])
	}
	if most > len(free) {
		panic(&ShapeError{Op: name, Msg: "einsum(): too many dims for the ellipsis (52 subscripts at most)"})
	}
	ell := string(free[:most])
	res := make([]string, len(subs))
	for k, s := range subs {
		res[k] = strings.Replace(s, "...", ell[most-nd[k]:], 1)
	}
	switch {
	case !explicit:
		out = ell
	case strings.Contains(out, "."):
		check(out, "the output")
		out = strings.Replace(out, "...", ell, 1)
	}
	return res, out
}
