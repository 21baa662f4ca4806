package alloc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

const (
	KiB = 1 << 10
	MiB = 1 << 20
	GiB = 1 << 30
)

func newTest(capacity uint64) (*Allocator, *FakeDevice) {
	d := NewFakeDevice(capacity)
	return New(d, Options{}), d
}

func mustMalloc(t testing.TB, a *Allocator, size uint64, stream uintptr) *Block {
	t.Helper()
	b, err := a.Malloc(size, stream)
	if err != nil {
		t.Fatalf("Malloc(%d, %d): %v", size, stream, err)
	}
	return b
}

func mustFree(t testing.TB, a *Allocator, b *Block) {
	t.Helper()
	if err := a.Free(b); err != nil {
		t.Fatalf("Free: %v", err)
	}
}

// checkInvariants walks every segment reachable from the pools, the blocks
// waiting on events and the live blocks, and recomputes the byte and count
// statistics from the blocks themselves.
func checkInvariants(t *testing.T, a *Allocator, live ...*Block) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	seen := map[*Block]bool{}
	var all []*Block
	addAll := func(b *Block) {
		if !seen[b] {
			seen[b] = true
			all = append(all, b)
		}
	}
	for _, p := range []*blockPool{&a.small, &a.large} {
		for i, b := range p.blocks {
			if i > 0 && compareKey(p.blocks[i-1], b.stream, b.size, b.ptr) >= 0 {
				t.Errorf("pool out of order at %d", i)
			}
			if b.allocated || b.pool != p {
				t.Errorf("pool holds allocated or foreign block %#x", b.ptr)
			}
			addAll(b)
		}
	}
	for _, q := range a.events {
		for _, e := range q.buf[q.head:] {
			addAll(e.block)
		}
	}
	for _, b := range live {
		addAll(b)
	}
	var want Stats
	heads := map[*Block]bool{}
	for _, b := range all {
		h := b
		for h.prev != nil {
			h = h.prev
		}
		heads[h] = true
	}
	for h := range heads {
		pi := StatLargePool
		if h.pool.small {
			pi = StatSmallPool
		}
		want.Segment[pi].Current++
		inPool := map[*Block]bool{}
		for _, b := range h.pool.blocks {
			inPool[b] = true
		}
		for b := h; b != nil; b = b.next {
			want.ReservedBytes[pi].Current += int64(b.size)
			if b.next != nil && b.ptr+b.size != b.next.ptr {
				t.Errorf("segment not contiguous at %#x", b.ptr)
			}
			if b.next != nil && inPool[b] && inPool[b.next] {
				t.Errorf("adjacent free blocks %#x and %#x not merged", b.ptr, b.next.ptr)
			}
			if b.allocated {
				want.Allocation[pi].Current++
				want.AllocatedBytes[pi].Current += int64(b.size)
			}
			if b.allocated || b.eventCount > 0 {
				want.Active[pi].Current++
				want.ActiveBytes[pi].Current += int64(b.size)
			}
			if inPool[b] && b.isSplit() {
				want.InactiveSplit[pi].Current++
				want.InactiveSplitBytes[pi].Current += int64(b.size)
			}
		}
	}
	got := a.stats
	type pair struct {
		name      string
		got, want *StatArray
	}
	for _, p := range []pair{
		{"segment", &got.Segment, &want.Segment},
		{"reserved_bytes", &got.ReservedBytes, &want.ReservedBytes},
		{"allocation", &got.Allocation, &want.Allocation},
		{"allocated_bytes", &got.AllocatedBytes, &want.AllocatedBytes},
		{"active", &got.Active, &want.Active},
		{"active_bytes", &got.ActiveBytes, &want.ActiveBytes},
		{"inactive_split", &got.InactiveSplit, &want.InactiveSplit},
		{"inactive_split_bytes", &got.InactiveSplitBytes, &want.InactiveSplitBytes},
	} {
		for _, pt := range []StatType{StatSmallPool, StatLargePool} {
			if p.got[pt].Current != p.want[pt].Current {
				t.Errorf("%s.%s.current = %d, blocks say %d", p.name, pt, p.got[pt].Current, p.want[pt].Current)
			}
		}
		if sum := p.got[StatSmallPool].Current + p.got[StatLargePool].Current; p.got[StatAll].Current != sum {
			t.Errorf("%s.all.current = %d, pools sum to %d", p.name, p.got[StatAll].Current, sum)
		}
	}
}

func TestRoundSize(t *testing.T) {
	for _, c := range []struct{ in, want uint64 }{
		{0, 512},    // minimum block
		{1, 512},    // below 512 rounds to 512
		{512, 512},  // exact multiple kept
		{513, 1024}, // 1 byte over: next multiple
		{1000, 1024},
		{MiB, MiB},           // 2048*512
		{MiB + 1, MiB + 512}, // 1048577 -> 2049*512
		{5*MiB - 7, 5 * MiB}, // 5242873 -> 10240*512
		{30*MiB + 1, 30*MiB + 512},
	} {
		if got := RoundSize(c.in); got != c.want {
			t.Errorf("RoundSize(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestSegmentSizes(t *testing.T) {
	for _, c := range []struct {
		req, block, reserved uint64
		small                bool
	}{
		{1000, 1024, 2 * MiB, true},                   // small pool: 2 MiB segment (kSmallBuffer)
		{MiB, MiB, 2 * MiB, true},                     // 1 MiB is still small (<= kSmallSize)
		{MiB + 1, MiB + 512, 20 * MiB, false},         // just large: 20 MiB (kLargeBuffer)
		{5 * MiB, 5 * MiB, 20 * MiB, false},           // < 10 MiB: 20 MiB
		{10*MiB - 512, 10*MiB - 512, 20 * MiB, false}, // last size below kMinLargeAlloc
		{10 * MiB, 10 * MiB, 10 * MiB, false},         // kMinLargeAlloc: rounded to 2 MiB = itself
		{30 * MiB, 30 * MiB, 30 * MiB, false},         // 15 * 2 MiB
		{31 * MiB, 32 * MiB, 32 * MiB, false},         // segment 16 * 2 MiB; the 1 MiB rest is not > 1 MiB: no split
		{30*MiB + 1, 30*MiB + 512, 32 * MiB, false},   // block 30 MiB+512, segment 32 MiB
	} {
		a, d := newTest(64 * GiB)
		b := mustMalloc(t, a, c.req, 0)
		s := a.Stats()
		pool := StatLargePool
		if c.small {
			pool = StatSmallPool
		}
		if b.Size() != c.block || b.Requested() != c.req {
			t.Errorf("Malloc(%d): block size %d requested %d, want %d %d", c.req, b.Size(), b.Requested(), c.block, c.req)
		}
		if got := d.Counters().Used; got != c.reserved {
			t.Errorf("Malloc(%d): device usage %d, want %d", c.req, got, c.reserved)
		}
		if s.ReservedBytes[pool].Current != int64(c.reserved) || s.ReservedBytes[StatAll].Current != int64(c.reserved) {
			t.Errorf("Malloc(%d): reserved %+v, want %d in %s", c.req, s.ReservedBytes, c.reserved, pool)
		}
		if s.AllocatedBytes[pool].Current != int64(c.block) || s.RequestedBytes[pool].Current != int64(c.req) {
			t.Errorf("Malloc(%d): allocated %d requested %d", c.req, s.AllocatedBytes[pool].Current, s.RequestedBytes[pool].Current)
		}
		checkInvariants(t, a, b)
	}
}

func TestReuseWithoutDeviceMalloc(t *testing.T) {
	a, d := newTest(GiB)
	b := mustMalloc(t, a, 1000, 1)
	ptr := b.Ptr()
	mustFree(t, a, b)
	// 800 rounds to 1024. The freed block merged back into the whole 2 MiB
	// segment, whose front is handed out again.
	b2 := mustMalloc(t, a, 800, 1)
	if b2.Ptr() != ptr || b2.Size() != 1024 {
		t.Errorf("reuse: ptr %#x size %d, want %#x 1024", b2.Ptr(), b2.Size(), ptr)
	}
	if n := d.Counters().MallocCalls; n != 1 {
		t.Errorf("device Malloc calls = %d, want 1", n)
	}
	checkInvariants(t, a, b2)
}

func TestBestFitAndLargeSplitThreshold(t *testing.T) {
	a, d := newTest(GiB)
	x := mustMalloc(t, a, 12*MiB, 0) // segment of 12 MiB
	y := mustMalloc(t, a, 16*MiB, 0) // segment of 16 MiB
	xp, yp := x.Ptr(), y.Ptr()       // freed Block structs are recycled
	mustFree(t, a, y)
	mustFree(t, a, x)
	// 11 MiB: best fit is the 12 MiB block; the 1 MiB remainder is not
	// > kSmallSize, so the block is not split and stays 12 MiB.
	b := mustMalloc(t, a, 11*MiB, 0)
	if b.Ptr() != xp || b.Size() != 12*MiB {
		t.Errorf("11 MiB: got %#x size %d, want the 12 MiB block %#x", b.Ptr(), b.Size(), xp)
	}
	// 13 MiB: only the 16 MiB block fits; 3 MiB > 1 MiB remains, so it
	// is split: block of 13 MiB, 3 MiB inactive split.
	c := mustMalloc(t, a, 13*MiB, 0)
	if c.Ptr() != yp || c.Size() != 13*MiB {
		t.Errorf("13 MiB: got %#x size %d, want %#x size %d", c.Ptr(), c.Size(), yp, 13*MiB)
	}
	s := a.Stats()
	if got := s.InactiveSplitBytes[StatLargePool].Current; got != 3*MiB {
		t.Errorf("inactive_split_bytes = %d, want 3 MiB", got)
	}
	if n := d.Counters().MallocCalls; n != 2 {
		t.Errorf("device Malloc calls = %d, want 2", n)
	}
	checkInvariants(t, a, b, c)
}

func TestStreamsDoNotShareCache(t *testing.T) {
	a, d := newTest(GiB)
	mustFree(t, a, mustMalloc(t, a, 4096, 1))
	b := mustMalloc(t, a, 4096, 2) // stream 1's cached segment is not for stream 2
	if n := d.Counters().MallocCalls; n != 2 {
		t.Errorf("device Malloc calls = %d, want 2", n)
	}
	checkInvariants(t, a, b)
}

// TestReleaseStream: the memory of a stream about to be destroyed goes to
// the default stream: its cached blocks at once, its blocks allocated or
// waiting on events when they are freed, merged there with their
// neighbours; a new stream that gets the old handle starts empty; the
// statistics do not move. Before ReleaseStream existed, stream 7's blocks
// stayed in a pool that no stream could reach.
func TestReleaseStream(t *testing.T) {
	a, d := newTest(GiB)
	const k = 100 * KiB
	// One 2 MiB small segment on stream 7: A B C and the rest.
	A := mustMalloc(t, a, k, 7)
	B := mustMalloc(t, a, k, 7)
	C := mustMalloc(t, a, k, 7)
	base := A.Ptr()
	big := mustMalloc(t, a, 12*MiB, 7) // a large segment of its own
	bigPtr := big.Ptr()
	mustFree(t, a, B) // cached: B and the rest
	mustFree(t, a, big)
	a.RecordStream(C, 3) // C waits on an event of stream 3 once freed
	mustFree(t, a, C)
	before := a.Stats()
	if err := a.ReleaseStream(7); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); fmt.Sprint(s) != fmt.Sprint(before) {
		t.Errorf("ReleaseStream changed the statistics:\n%+v\nwant\n%+v", s, before)
	}
	checkInvariants(t, a, A)
	// The cached large block serves the default stream without a new segment.
	if b := mustMalloc(t, a, 12*MiB, 0); b.Ptr() != bigPtr {
		t.Errorf("default stream got %#x, want stream 7's cached %#x", b.Ptr(), bigPtr)
	} else {
		mustFree(t, a, b)
	}
	// A new stream with the old handle has no cache of its own yet.
	n := d.Counters().MallocCalls
	fresh := mustMalloc(t, a, k, 7)
	if d.Counters().MallocCalls != n+1 || fresh.Ptr()-base < 2*MiB && fresh.Ptr() >= base {
		t.Errorf("new stream 7 got %#x from the old stream's segment at %#x", fresh.Ptr(), base)
	}
	// A, still allocated, and C, waiting on stream 3, join the default pool
	// when freed, and the segment merges back into one 2 MiB block.
	mustFree(t, a, A)
	d.CompleteStream(3)
	mustFree(t, a, fresh)
	checkInvariants(t, a)
	n = d.Counters().MallocCalls
	whole := mustMalloc(t, a, SmallSize, 0)
	if whole.Ptr() != base || d.Counters().MallocCalls != n {
		t.Errorf("default stream got %#x (%d device mallocs), want the merged segment %#x", whole.Ptr(), d.Counters().MallocCalls-n, base)
	}
	checkInvariants(t, a, whole)
	if err := a.ReleaseStream(0); err != nil { // the default stream: nothing
		t.Fatal(err)
	}
	mustFree(t, a, whole)
	if err := a.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	if c := d.Counters(); c.Used != 0 || c.EventsLive != 0 {
		t.Errorf("after EmptyCache: %+v", c)
	}
	if s := a.Stats(); s.ReservedBytes[StatAll].Current != 0 || s.ActiveBytes[StatAll].Current != 0 {
		t.Errorf("after EmptyCache: reserved %d active %d", s.ReservedBytes[StatAll].Current, s.ActiveBytes[StatAll].Current)
	}
	if len(a.streams) != 2 { // the new stream 7, and stream 3 (C's use)
		t.Errorf("%d stream lifetimes kept, want 2", len(a.streams))
	}
}

// TestReleaseStreamHandleReused: a block allocated on stream 7, still
// alive when 7 is released, and then used on the new stream that got the
// handle 7 (RecordStream) is held back by an event on that stream when
// freed. Before, RecordStream took the use for one on the block's own
// stream and dropped it, so the freed block went to the default stream's
// pool at once, under the new stream's queued work.
func TestReleaseStreamHandleReused(t *testing.T) {
	a, d := newTest(GiB)
	const k = 100 * KiB
	A := mustMalloc(t, a, k, 7)
	ptr := A.Ptr()
	if err := a.ReleaseStream(7); err != nil {
		t.Fatal(err)
	}
	// A new stream with the handle 7 uses A.
	a.RecordStream(A, 7)
	n := d.Counters().EventsRecorded
	mustFree(t, a, A)
	if got := d.Counters().EventsRecorded - n; got != 1 {
		t.Fatalf("Free recorded %d events, want 1 on the new stream 7", got)
	}
	B := mustMalloc(t, a, k, 0)
	if B.Ptr() == ptr {
		t.Fatalf("the default stream got %#x while the new stream 7 may still use it", B.Ptr())
	}
	d.CompleteStream(7)
	C := mustMalloc(t, a, k, 0)
	if C.Ptr() != ptr {
		t.Errorf("after the new stream's event: got %#x, want the freed %#x", C.Ptr(), ptr)
	}
	checkInvariants(t, a, B, C)
}

// TestReleaseStreamDropsUses: a use recorded on a stream that is then
// released (waited for, and destroyed) needs no event when the block is
// freed: ReleaseStream's caller waited for the stream's work, and an event
// recorded on the destroyed handle would be an invalid driver call (or
// land on an unrelated stream that reused the handle). The block is free
// at once.
func TestReleaseStreamDropsUses(t *testing.T) {
	a, d := newTest(GiB)
	const k = 100 * KiB
	A := mustMalloc(t, a, k, 0)
	ptr := A.Ptr()
	a.RecordStream(A, 3)
	if err := a.ReleaseStream(3); err != nil {
		t.Fatal(err)
	}
	n := d.Counters().EventsRecorded
	mustFree(t, a, A)
	if got := d.Counters().EventsRecorded - n; got != 0 {
		t.Fatalf("Free recorded %d events on released stream 3, want none", got)
	}
	B := mustMalloc(t, a, k, 0)
	if B.Ptr() != ptr {
		t.Errorf("got %#x, want the freed %#x at once", B.Ptr(), ptr)
	}
	checkInvariants(t, a, B)
}

func TestSplitAndMerge(t *testing.T) {
	a, _ := newTest(GiB)
	const k = 100 * KiB // 102400 = 200*512, no rounding
	// Three blocks carved from one 2 MiB small segment:
	// A [0,100K) B [100K,200K) C [200K,300K) rest [300K, 2 MiB) = 1789952 bytes.
	A := mustMalloc(t, a, k, 0)
	B := mustMalloc(t, a, k, 0)
	C := mustMalloc(t, a, k, 0)
	base := A.Ptr() // freed Block structs are recycled: keep the address
	if B.Ptr() != A.Ptr()+k || C.Ptr() != B.Ptr()+k {
		t.Fatalf("not carved contiguously: %#x %#x %#x", A.Ptr(), B.Ptr(), C.Ptr())
	}
	steps := []struct {
		free        *Block
		splits      int64 // inactive_split.current
		splitBytes  int64 // inactive_split_bytes.current
		poolBlocks  int
		largestFree uint64
	}{
		// B alone is free between A and C: free blocks B and rest.
		// 102400 + 1789952 = 1892352.
		{B, 2, 1892352, 2, 1789952},
		// A merges with B: [A+B]=204800 and rest: 204800 + 1789952 = 1994752.
		{A, 2, 1994752, 2, 1789952},
		// C merges with [A+B] and rest: one whole 2 MiB block, not split.
		{C, 0, 0, 1, 2 * MiB},
	}
	live := []*Block{A, B, C}
	for i, s := range steps {
		mustFree(t, a, s.free)
		for j := range live {
			if live[j] == s.free {
				live = append(live[:j], live[j+1:]...)
				break
			}
		}
		st := a.Stats()
		if st.InactiveSplit[StatAll].Current != s.splits || st.InactiveSplitBytes[StatAll].Current != s.splitBytes {
			t.Errorf("step %d: inactive_split %d bytes %d, want %d %d", i, st.InactiveSplit[StatAll].Current,
				st.InactiveSplitBytes[StatAll].Current, s.splits, s.splitBytes)
		}
		if n := len(a.small.blocks); n != s.poolBlocks {
			t.Errorf("step %d: %d free blocks, want %d", i, n, s.poolBlocks)
		}
		if got := a.small.blocks[len(a.small.blocks)-1].size; got != s.largestFree {
			t.Errorf("step %d: largest free block %d, want %d", i, got, s.largestFree)
		}
		checkInvariants(t, a, live...)
	}
	if b := a.small.blocks[0]; b.ptr != base || b.size != 2*MiB {
		t.Errorf("merged block %#x size %d, want %#x size 2 MiB", b.ptr, b.size, base)
	}
}

func TestStatsPeakAndReset(t *testing.T) {
	a, _ := newTest(GiB)
	x := mustMalloc(t, a, MiB, 0)   // small: block 1 MiB, segment 2 MiB
	y := mustMalloc(t, a, 3*MiB, 0) // large: block 3 MiB, segment 20 MiB
	mustFree(t, a, y)
	s := a.Stats()
	for _, c := range []struct {
		name string
		got  Stat
		want Stat
	}{
		// 1 MiB + 3 MiB at the peak, 3 MiB freed.
		{"allocated_bytes.all", s.AllocatedBytes[StatAll], Stat{MiB, 4 * MiB, 4 * MiB, 3 * MiB}},
		{"allocated_bytes.large", s.AllocatedBytes[StatLargePool], Stat{0, 3 * MiB, 3 * MiB, 3 * MiB}},
		{"allocated_bytes.small", s.AllocatedBytes[StatSmallPool], Stat{MiB, MiB, MiB, 0}},
		// 2 MiB + 20 MiB, nothing returned to the device.
		{"reserved_bytes.all", s.ReservedBytes[StatAll], Stat{22 * MiB, 22 * MiB, 22 * MiB, 0}},
		{"allocation.all", s.Allocation[StatAll], Stat{1, 2, 2, 1}},
		{"segment.all", s.Segment[StatAll], Stat{2, 2, 2, 0}},
		{"active_bytes.all", s.ActiveBytes[StatAll], Stat{MiB, 4 * MiB, 4 * MiB, 3 * MiB}},
		// The small segment's 1 MiB tail is split off and inactive; the
		// large block was freed whole (3 MiB + 17 MiB merged back).
		{"inactive_split_bytes.all", s.InactiveSplitBytes[StatAll], Stat{MiB, MiB + 17*MiB, MiB + 17*MiB, 17 * MiB}},
	} {
		if c.got != c.want {
			t.Errorf("%s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
	a.ResetPeakStats()
	s = a.Stats()
	if p := s.AllocatedBytes[StatAll].Peak; p != MiB {
		t.Errorf("peak after reset = %d, want %d", p, MiB)
	}
	z := mustMalloc(t, a, 100, 0) // 512 more, from the small segment's tail
	s = a.Stats()
	if p := s.AllocatedBytes[StatAll].Peak; p != MiB+512 {
		t.Errorf("peak = %d, want %d", p, MiB+512)
	}
	if p := s.ReservedBytes[StatAll].Peak; p != 22*MiB {
		t.Errorf("reserved peak = %d, want 22 MiB", p)
	}
	a.ResetAccumulatedStats()
	if s := a.Stats(); s.AllocatedBytes[StatAll].Allocated != 0 || s.AllocatedBytes[StatAll].Current != MiB+512 {
		t.Errorf("after ResetAccumulatedStats: %+v", s.AllocatedBytes[StatAll])
	}
	m := a.Stats().Map()
	if m["allocated_bytes.all.current"] != MiB+512 || m["reserved_bytes.large_pool.current"] != 20*MiB ||
		m["segment.small_pool.peak"] != 1 || m["max_split_size"] != -1 {
		t.Errorf("Map: %v", m)
	}
	checkInvariants(t, a, x, z)
}

func TestEmptyCache(t *testing.T) {
	a, d := newTest(GiB)
	var bs []*Block
	for _, n := range []uint64{1000, 2 * MiB, 5 * MiB, 30 * MiB, 700 * KiB} {
		bs = append(bs, mustMalloc(t, a, n, 0))
	}
	keep := mustMalloc(t, a, 4*MiB, 0) // carved from the 20 MiB segment after 2 MiB and 5 MiB
	for _, b := range bs {
		mustFree(t, a, b)
	}
	if err := a.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	// Segments: small 2 MiB (1000 and 700 KiB), large 20 MiB (2 MiB, 5 MiB
	// and 4 MiB share it: 11 MiB <= 20 MiB), large 30 MiB. Only the
	// 20 MiB one holds a live block.
	if u := d.Counters().Used; u != 20*MiB {
		t.Errorf("device usage with one live block = %d, want 20 MiB", u)
	}
	checkInvariants(t, a, keep)
	mustFree(t, a, keep)
	if err := a.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	c := d.Counters()
	if c.Used != 0 || c.Live != 0 || c.MallocCalls != 3 || c.FreeCalls != 3 {
		t.Errorf("after EmptyCache: %+v", c)
	}
	s := a.Stats()
	if s.ReservedBytes[StatAll].Current != 0 || s.Segment[StatAll].Current != 0 || s.InactiveSplitBytes[StatAll].Current != 0 {
		t.Errorf("stats after EmptyCache: reserved %+v segments %+v", s.ReservedBytes[StatAll], s.Segment[StatAll])
	}
	checkInvariants(t, a)
}

func TestCrossStream(t *testing.T) {
	a, d := newTest(GiB)
	b := mustMalloc(t, a, 4096, 1)
	a.RecordStream(b, 1) // own stream: ignored
	a.RecordStream(b, 2)
	a.RecordStream(b, 2) // duplicate: ignored
	mustFree(t, a, b)
	if c := d.Counters(); c.EventsRecorded != 1 || c.EventsLive != 1 {
		t.Fatalf("events: %+v, want one recorded on stream 2", c)
	}
	// Still in use on stream 2: stream 1 gets the next 4096 bytes instead.
	b2 := mustMalloc(t, a, 4096, 1)
	if b2.Ptr() == b.Ptr() {
		t.Fatalf("block reused before its stream-2 event completed")
	}
	if b2.Ptr() != b.Ptr()+4096 {
		t.Errorf("b2 at %#x, want %#x", b2.Ptr(), b.Ptr()+4096)
	}
	s := a.Stats()
	// b is freed (not allocated) but still active: 4096 bytes each.
	if s.AllocatedBytes[StatAll].Current != 4096 || s.ActiveBytes[StatAll].Current != 8192 {
		t.Errorf("allocated %d active %d, want 4096 8192", s.AllocatedBytes[StatAll].Current, s.ActiveBytes[StatAll].Current)
	}
	checkInvariants(t, a, b2)
	d.CompleteStream(2)
	b3 := mustMalloc(t, a, 4096, 1)
	if b3.Ptr() != b.Ptr() {
		t.Errorf("after the event completed got %#x, want the freed block %#x", b3.Ptr(), b.Ptr())
	}
	if c := d.Counters(); c.EventsLive != 0 || c.MallocCalls != 1 {
		t.Errorf("counters: %+v", c)
	}
	checkInvariants(t, a, b2, b3)

	// A block waiting on an event is released by EmptyCache, which
	// synchronises the device first.
	a.RecordStream(b3, 3)
	mustFree(t, a, b3)
	mustFree(t, a, b2)
	if err := a.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	if c := d.Counters(); c.Used != 0 || c.SyncCalls != 1 || c.EventsLive != 0 {
		t.Errorf("after EmptyCache: %+v", c)
	}
	checkInvariants(t, a)
}

func TestRecordEventFailure(t *testing.T) {
	a, d := newTest(GiB)
	b := mustMalloc(t, a, 4096, 1)
	ptr := b.Ptr()
	a.RecordStream(b, 2)
	d.SetRecordEventError(errors.New("fake cuEventRecord: CUDA_ERROR_LAUNCH_FAILED"))
	// The event cannot be recorded, so the device is synchronised and the
	// block freed at once.
	mustFree(t, a, b)
	if c := d.Counters(); c.SyncCalls != 1 || c.EventsLive != 0 {
		t.Errorf("counters: %+v", c)
	}
	if b2 := mustMalloc(t, a, 4096, 1); b2.Ptr() != ptr {
		t.Errorf("block not reusable after synchronisation")
	}
}

func TestOOMRetryAfterFlush(t *testing.T) {
	d := NewFakeDevice(40 * MiB)
	hooks := 0
	a := New(d, Options{BeforeRetry: func() { hooks++ }})
	mustFree(t, a, mustMalloc(t, a, 30*MiB, 1)) // 30 MiB cached for stream 1
	// Stream 2 wants 20 MiB (a 20 MiB segment): 10 MiB free fails, the
	// cached 30 MiB segment is returned, the retry succeeds.
	b := mustMalloc(t, a, 20*MiB, 2)
	s := a.Stats()
	if s.NumAllocRetries != 1 || s.NumOOMs != 0 || hooks != 1 {
		t.Errorf("retries %d ooms %d hooks %d, want 1 0 1", s.NumAllocRetries, s.NumOOMs, hooks)
	}
	if c := d.Counters(); c.MallocCalls != 3 || c.FreeCalls != 1 || c.Used != 20*MiB {
		t.Errorf("device: %+v", c)
	}
	checkInvariants(t, a, b)
}

func TestOOMHookFreesBlock(t *testing.T) {
	d := NewFakeDevice(32 * MiB)
	a := New(d, Options{})
	x := mustMalloc(t, a, 30*MiB, 1)
	a.SetBeforeRetry(func() {
		// Runs without the lock, as a finalizer freeing a tensor would.
		if err := a.Free(x); err != nil {
			t.Error(err)
		}
	})
	b := mustMalloc(t, a, 20*MiB, 2)
	if s := a.Stats(); s.NumAllocRetries != 1 || s.NumOOMs != 0 {
		t.Errorf("retries %d ooms %d", s.NumAllocRetries, s.NumOOMs)
	}
	checkInvariants(t, a, b)
}

func TestOOMError(t *testing.T) {
	// Worked example: an 8 GiB GPU with 820 MiB taken by someone else.
	d := NewFakeDevice(8 * GiB)
	if _, err := d.Malloc(820 * MiB); err != nil {
		t.Fatal(err)
	}
	hooks := 0
	a := New(d, Options{BeforeRetry: func() { hooks++ }})
	big := mustMalloc(t, a, 5*GiB, 0) // segment 5 GiB
	mustFree(t, a, mustMalloc(t, a, GiB, 0))
	half := mustMalloc(t, a, 512*MiB, 0) // front of the cached 1 GiB segment
	// allocated 5.5 GiB, reserved 6 GiB; the device has
	// 8192 - 820 - 6144 = 1228 MiB = 1.199 GiB free. No segment is wholly
	// free, so flushing the cache frees nothing and 2 GiB cannot fit.
	_, err := a.Malloc(2*GiB, 0)
	var oom *OOMError
	if !errors.As(err, &oom) {
		t.Fatalf("err = %v, want *OOMError", err)
	}
	want := "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; " +
		"5.50 GiB already allocated; 1.20 GiB free; 6.00 GiB reserved in total by ember)"
	if err.Error() != want {
		t.Errorf("message\n got %q\nwant %q", err.Error(), want)
	}
	if oom.Requested != 2*GiB || oom.AllocSize != 2*GiB || oom.Allocated != 5*GiB+512*MiB ||
		oom.Reserved != 6*GiB || oom.Free != 1228*MiB || oom.Total != 8*GiB {
		t.Errorf("fields: %+v", oom)
	}
	if !IsOOM(err) || !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("IsOOM %v, errors.Is(ErrOutOfMemory) %v", IsOOM(err), errors.Is(err, ErrOutOfMemory))
	}
	s := a.Stats()
	if s.NumAllocRetries != 1 || s.NumOOMs != 1 || hooks != 1 {
		t.Errorf("retries %d ooms %d hooks %d, want 1 1 1", s.NumAllocRetries, s.NumOOMs, hooks)
	}
	oom.Detail = "Largest live tensors: [5.00 GiB float32 (1342177280)]."
	if got := oom.Error(); got != want+" "+oom.Detail {
		t.Errorf("with detail: %q", got)
	}
	// As in PyTorch, the size reported is the segment's: a 5 MiB request
	// that needs a new 20 MiB segment says 20.00 MiB.
	d.SetMallocError(func(uint64) error { return ErrOutOfMemory })
	_, err = a.Malloc(5*MiB, 7) // stream 7 has no cached block
	if !errors.As(err, &oom) || !strings.HasPrefix(err.Error(), "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0;") ||
		oom.Requested != 5*MiB {
		t.Errorf("5 MiB: %v", err)
	}
	checkInvariants(t, a, big, half)
}

func TestDeviceErrorIsNotRetried(t *testing.T) {
	a, d := newTest(GiB)
	bad := errors.New("fake cuMemAlloc: CUDA_ERROR_ILLEGAL_ADDRESS (700)")
	d.SetMallocError(func(uint64) error { return bad })
	if _, err := a.Malloc(4096, 0); err != bad {
		t.Errorf("err = %v, want the device's", err)
	}
	if s := a.Stats(); s.NumAllocRetries != 0 || s.NumOOMs != 0 {
		t.Errorf("retries %d ooms %d", s.NumAllocRetries, s.NumOOMs)
	}
}

func TestMisuse(t *testing.T) {
	a, _ := newTest(GiB)
	if b, err := a.Malloc(0, 0); b != nil || err != nil {
		t.Errorf("Malloc(0) = %v, %v; want nil, nil", b, err)
	}
	if err := a.Free(nil); err != nil {
		t.Error(err)
	}
	b := mustMalloc(t, a, 100, 0)
	mustFree(t, a, b)
	if err := a.Free(b); err == nil {
		t.Error("double Free succeeded")
	}
	other, _ := newTest(GiB)
	c := mustMalloc(t, other, 100, 0)
	if err := a.Free(c); err == nil {
		t.Error("Free of a foreign block succeeded")
	}
	if _, err := a.Malloc(MaxRequest+1, 0); err == nil || IsOOM(err) {
		t.Errorf("huge request: %v", err)
	}
	checkInvariants(t, a)
}

func TestFakeDeviceFragmentation(t *testing.T) {
	d := NewFakeDevice(4 * MiB)
	x, _ := d.Malloc(MiB)
	y, _ := d.Malloc(MiB)
	if _, err := d.Malloc(MiB); err != nil {
		t.Fatal(err)
	}
	if err := d.Free(y); err != nil {
		t.Fatal(err)
	}
	// 2 MiB free in two separate 1 MiB holes: no room for 2 MiB.
	if _, err := d.Malloc(2 * MiB); !IsOOM(err) {
		t.Fatalf("fragmented Malloc: %v, want OOM", err)
	}
	if free, total, _ := d.MemInfo(); free != 2*MiB || total != 4*MiB {
		t.Errorf("MemInfo = %d %d", free, total)
	}
	if err := d.Free(x); err != nil {
		t.Fatal(err)
	}
	// x and y coalesce into [base, base+2 MiB).
	p, err := d.Malloc(2 * MiB)
	if err != nil || p != FakeBase {
		t.Errorf("Malloc after coalescing = %#x, %v; want %#x", p, err, uint64(FakeBase))
	}
	if err := d.Free(p + 1); err == nil {
		t.Error("Free of an unknown pointer succeeded")
	}
}

func TestFormatSize(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		want string
	}{
		{0, "0 bytes"},
		{1024, "1024 bytes"}, // <= 1024 is still bytes
		{1025, "1.00 KiB"},   // 1025/1024 = 1.0009
		{1536, "1.50 KiB"},
		{MiB, "1024.00 KiB"}, // <= 1 MiB is KiB
		{20 * MiB, "20.00 MiB"},
		{1228 * MiB, "1.20 GiB"}, // 1228/1024 = 1.1992
		{5*GiB + 512*MiB, "5.50 GiB"},
	} {
		if got := FormatSize(c.n); got != c.want {
			t.Errorf("FormatSize(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestSummaryMatchesTorch renders the counters of testdata/gen_summary.py
// and compares with what torch 1.13's memory_summary printed for them.
func TestSummaryMatchesTorch(t *testing.T) {
	want, err := os.ReadFile("testdata/summary.golden")
	if err != nil {
		t.Fatal(err)
	}
	arr := func(v [3][4]int64) StatArray {
		var a StatArray
		for i, p := range []StatType{StatAll, StatLargePool, StatSmallPool} {
			a[p] = Stat{v[i][0], v[i][1], v[i][2], v[i][3]}
		}
		return a
	}
	const T = 1 << 40
	s := Stats{
		AllocatedBytes: arr([3][4]int64{{3*MiB + 512, 25 * MiB, 900 * MiB, 897*MiB - 512},
			{3 * MiB, 24 * MiB, 800 * MiB, 797 * MiB}, {512, MiB, 100 * MiB, 100*MiB - 512}}),
		ActiveBytes: arr([3][4]int64{{700 * KiB, 767 * KiB, 768 * KiB, 5 * GiB},
			{0, 0, 0, 4 * GiB}, {700 * KiB, 767 * KiB, 768 * KiB, GiB}}),
		ReservedBytes: arr([3][4]int64{{22 * MiB, 42 * MiB, 3 * T, 3*T - 22*MiB},
			{20 * MiB, 40 * MiB, 2 * T, 2*T - 20*MiB}, {2 * MiB, 2 * MiB, T, T - 2*MiB}}),
		InactiveSplitBytes: arr([3][4]int64{{0, 1000, 1023, 1024}, {}, {0, 1000, 1023, 1024}}),
		Allocation:         arr([3][4]int64{{3, 749999, 750000, 2_000_000_000}, {2, 5, 7, 5}, {1, 1, 1, 0}}),
		Active:             arr([3][4]int64{{3, 4, 999, 996}, {2, 3, 500, 498}, {1, 1, 499, 498}}),
		Segment:            arr([3][4]int64{{2, 3, 4, 2}, {1, 2, 3, 2}, {1, 1, 1, 0}}),
		InactiveSplit:      arr([3][4]int64{{0, 1, 2, 2}, {}, {0, 1, 2, 2}}),
		NumAllocRetries:    7,
		NumOOMs:            2,
	}
	if got := s.Summary(3); got != string(want) {
		t.Errorf("Summary differs from torch's:\n%s\nwant:\n%s", got, want)
	}
}

func TestSummaryOfAllocator(t *testing.T) {
	a, _ := newTest(GiB)
	b := mustMalloc(t, a, 1000, 0) // 1024 bytes allocated from a 2 MiB segment
	sum := a.Summary()
	for _, line := range []string{
		// 1024 < 768 KiB: shown in bytes.
		"| Allocated memory      |    1024 B  |    1024 B  |    1024 B  |       0 B  |",
		// 2 MiB >= 768 KiB: KB.
		// Each column takes its unit from its "all" value: Tot Freed is 0.
		"| GPU reserved memory   |    2048 KB |    2048 KB |    2048 KB |       0 B  |",
		"|       from small pool |    2048 KB |    2048 KB |    2048 KB |       0 B  |",
		"| GPU reserved segments |       1    |       1    |       1    |       0    |",
	} {
		if !strings.Contains(sum, line+"\n") {
			t.Errorf("summary lacks %q:\n%s", line, sum)
		}
	}
	mustFree(t, a, b)
}

func TestConcurrent(t *testing.T) {
	for _, c := range []struct {
		name     string
		capacity uint64
	}{
		{"roomy", 64 * GiB},
		// 8 workers with up to 21 live blocks of up to 33 MiB need more
		// than 160 MiB: allocations run out of memory, flush the cache and
		// retry concurrently, and some fail with *OOMError.
		{"tight", 160 * MiB},
	} {
		t.Run(c.name, func(t *testing.T) { testConcurrent(t, c.capacity) })
	}
}

func testConcurrent(t *testing.T, capacity uint64) {
	d := NewFakeDevice(capacity)
	a := New(d, Options{BeforeRetry: runtime.Gosched})
	const workers, iters = 8, 400
	sizes := []uint64{1, 511, 4000, 100 * KiB, MiB, MiB + 1, 3 * MiB, 9 * MiB, 12 * MiB, 33 * MiB}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() { // the "GPU": completes events now and then
		for {
			select {
			case <-stop:
				return
			default:
				d.CompleteEvents()
			}
		}
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			var live []*Block
			for i := range iters {
				if len(live) > 0 && (r.IntN(2) == 0 || len(live) > 20) {
					j := r.IntN(len(live))
					if err := a.Free(live[j]); err != nil {
						t.Error(err)
						return
					}
					live = append(live[:j], live[j+1:]...)
					continue
				}
				stream := uintptr(r.IntN(3))
				b, err := a.Malloc(sizes[r.IntN(len(sizes))], stream)
				var oom *OOMError
				if errors.As(err, &oom) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if r.IntN(4) == 0 {
					a.RecordStream(b, uintptr(r.IntN(3)))
				}
				if i%97 == 0 {
					if err := a.EmptyCache(); err != nil {
						t.Error(err)
					}
					_ = a.Stats()
				}
				live = append(live, b)
			}
			for _, b := range live {
				if err := a.Free(b); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	checkInvariants(t, a)
	s := a.Stats()
	t.Logf("retries %d, OOMs %d, device Malloc calls %d", s.NumAllocRetries, s.NumOOMs, d.Counters().MallocCalls)
	if s.Allocation[StatAll].Current != 0 || s.AllocatedBytes[StatAll].Current != 0 ||
		s.AllocatedBytes[StatAll].Allocated != s.AllocatedBytes[StatAll].Freed {
		t.Errorf("allocations left: %+v %+v %+v", s.Allocation[StatAll], s.AllocatedBytes[StatAll], s.RequestedBytes[StatAll])
	}
	if err := a.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	s = a.Stats()
	c := d.Counters()
	if c.Used != 0 || c.Live != 0 || c.EventsLive != 0 ||
		int64(c.FreeCalls) != s.Segment[StatAll].Allocated || s.Segment[StatAll].Freed != s.Segment[StatAll].Allocated {
		t.Errorf("device after EmptyCache: %+v", c)
	}
	// Blocks waiting on events stay active (and requested) until
	// EmptyCache synchronises.
	if s.ReservedBytes[StatAll].Current != 0 || s.Segment[StatAll].Current != 0 || s.Active[StatAll].Current != 0 ||
		s.ActiveBytes[StatAll].Current != 0 || s.RequestedBytes[StatAll].Current != 0 ||
		s.InactiveSplit[StatAll].Current != 0 || s.ReservedBytes[StatAll].Allocated != s.ReservedBytes[StatAll].Freed {
		t.Errorf("stats after EmptyCache: %s", fmt.Sprint(s.ReservedBytes, s.Segment, s.Active))
	}
}

// TestConcurrentReleaseStream: workers each allocate on a stream of their
// own, free part of it, release the stream (its handle then reused, as the
// driver may) and free the rest, while the others go on; the pools, the
// statistics and the device agree at the end.
func TestConcurrentReleaseStream(t *testing.T) {
	d := NewFakeDevice(4 * GiB)
	a := New(d, Options{})
	sizes := []uint64{700, 4000, 100 * KiB, MiB + 1, 3 * MiB, 12 * MiB}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 2))
			stream := uintptr(10 + w)
			for range 50 {
				var live []*Block
				for range 6 {
					b, err := a.Malloc(sizes[r.IntN(len(sizes))], stream)
					if err != nil {
						t.Error(err)
						return
					}
					if r.IntN(3) == 0 {
						a.RecordStream(b, uintptr(r.IntN(2)))
					}
					live = append(live, b)
				}
				for _, b := range live[:3] {
					if err := a.Free(b); err != nil {
						t.Error(err)
					}
				}
				d.CompleteStream(stream) // the stream's work is done
				if err := a.ReleaseStream(stream); err != nil {
					t.Error(err)
				}
				for _, b := range live[3:] {
					if err := a.Free(b); err != nil {
						t.Error(err)
					}
				}
				d.CompleteEvents()
			}
		}()
	}
	wg.Wait()
	checkInvariants(t, a)
	for _, p := range []*blockPool{&a.small, &a.large} {
		for _, b := range p.blocks {
			if b.stream >= 10 {
				t.Errorf("a block of released stream %d is still cached", b.stream)
			}
		}
	}
	if err := a.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, a)
	s := a.Stats()
	if c := d.Counters(); c.Used != 0 || c.EventsLive != 0 || s.ReservedBytes[StatAll].Current != 0 || s.ActiveBytes[StatAll].Current != 0 {
		t.Errorf("after EmptyCache: device %+v, reserved %d, active %d", c, s.ReservedBytes[StatAll].Current, s.ActiveBytes[StatAll].Current)
	}
}

func BenchmarkMallocFreeReuse(b *testing.B) {
	for _, size := range []uint64{4096, 4 * MiB} {
		b.Run(FormatSize(size), func(b *testing.B) {
			a, _ := newTest(GiB)
			mustFree(b, a, mustMalloc(b, a, size, 0))
			b.ReportAllocs()
			for b.Loop() {
				blk, _ := a.Malloc(size, 0)
				_ = a.Free(blk)
			}
		})
	}
}
