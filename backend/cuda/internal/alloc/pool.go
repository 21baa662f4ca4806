package alloc

import (
	"cmp"
	"slices"
)

// blockPool holds the free blocks of one pool in a slice sorted by
// (stream, size, ptr), PyTorch's BlockComparator order, so that the best
// fit for a stream is found by binary search.
type blockPool struct {
	owner  *Allocator
	small  bool
	blocks []*Block
}

func compareKey(b *Block, stream uintptr, size, ptr uint64) int {
	if c := cmp.Compare(b.stream, stream); c != 0 {
		return c
	}
	if c := cmp.Compare(b.size, size); c != 0 {
		return c
	}
	return cmp.Compare(b.ptr, ptr)
}

func (p *blockPool) find(stream uintptr, size, ptr uint64) (int, bool) {
	return slices.BinarySearchFunc(p.blocks, ptr, func(b *Block, ptr uint64) int {
		return compareKey(b, stream, size, ptr)
	})
}

// take removes and returns the smallest free block of at least size bytes
// on stream, or nil.
func (p *blockPool) take(stream uintptr, size uint64) *Block {
	i, _ := p.find(stream, size, 0)
	if i == len(p.blocks) || p.blocks[i].stream != stream {
		return nil
	}
	b := p.blocks[i]
	p.blocks = slices.Delete(p.blocks, i, i+1)
	return b
}

func (p *blockPool) insert(b *Block) {
	i, found := p.find(b.stream, b.size, b.ptr)
	if found {
		panic("alloc: block inserted twice into its pool")
	}
	p.blocks = slices.Insert(p.blocks, i, b)
}

func (p *blockPool) remove(b *Block) {
	i, found := p.find(b.stream, b.size, b.ptr)
	if !found || p.blocks[i] != b {
		panic("alloc: free block missing from its pool")
	}
	p.blocks = slices.Delete(p.blocks, i, i+1)
}

// restream moves the free blocks of stream from to stream to (ReleaseStream).
func (p *blockPool) restream(from, to uintptr) {
	i, _ := p.find(from, 0, 0)
	j := i
	for j < len(p.blocks) && p.blocks[j].stream == from {
		j++
	}
	if i == j {
		return
	}
	moved := slices.Clone(p.blocks[i:j])
	p.blocks = slices.Delete(p.blocks, i, j)
	for _, b := range moved {
		b.stream, b.life = to, nil
		p.insert(b)
	}
}
