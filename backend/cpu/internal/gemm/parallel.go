package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// A parallel product walks the same (jc, pc) blocks as the serial one, but
// all goroutines share each packed block of B. The work of a block is a list
// of items: first packing groups of B micro-panels into the block's buffer,
// then computing bands of C rows (each goroutine packs its own A rows: one
// micro-panel in the streamed-B order, an MC-row block in BLIS's). Items of
// all blocks are numbered in order and handed out through one atomic
// counter, so a goroutine that starts late (waking a parked thread takes
// ~100µs) or runs slowly just takes fewer items. An item
// waits only on earlier items: a band waits for its block's B to be packed,
// and packing block b into one of two buffers waits until block b-2, which
// used that buffer, is finished; a band of a later k block waits for the
// same band of the block before, which adds into the same tiles of C.

// bGroup is how many B micro-panels one packing item covers at most; a
// block of few panels is cut into at least two items per goroutine, so
// that all goroutines pack it (a small product's B is one block, and
// packing it on one goroutine while the others wait costs ~10%).
const bGroup = 8

// job is one parallel product.
type job[T float] struct {
	p        params[T]
	m, n     int
	ncb, kcb int // block sizes
	bg       int // B micro-panels per packing item
	mb       int // rows per band
	nk       int // k blocks per column block
	blocks   int
	bp       [2][]T
	next     atomic.Int64 // next item to hand out
	total    int64        // items in all
	packed   []atomic.Int64
	computed []atomic.Int64
	bandDone []atomic.Int64 // per column block and band of rows: k blocks finished
	finished atomic.Int64   // parts done (of t-1 offered)
	tickets  []ticket
}

var (
	jobsS freeList[*job[float32]]
	jobsD freeList[*job[float64]]
)

func jobList[T float]() *freeList[*job[T]] {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return any(&jobsS).(*freeList[*job[T]])
	}
	return any(&jobsD).(*freeList[*job[T]])
}

// block returns block b's column and k ranges and its item counts.
func (j *job[T]) block(b int) (jc, nc, pc, kc, groups, bands int) {
	jc = b / j.nk * j.ncb
	nc = min(j.ncb, j.n-jc)
	pc = b % j.nk * j.kcb
	kc = min(j.kcb, j.p.k-pc)
	panels := (nc + j.p.kr.nr - 1) / j.p.kr.nr
	groups = (panels + j.bg - 1) / j.bg
	bands = (j.m + j.mb - 1) / j.mb
	return
}

func parallel[T float](p *params[T], m, n, t int) {
	kr := p.kr
	var j *job[T]
	if v, ok := jobList[T]().get(); ok {
		j = v
	} else {
		j = new(job[T])
	}
	j.p = *p
	j.m, j.n = m, n
	j.ncb = balance(n, kr.nc, kr.nr)
	j.kcb = balance(p.k, kr.kc, max(kr.ku, 1))
	j.nk = (p.k + j.kcb - 1) / j.kcb
	j.bg = max(1, min(bGroup, j.ncb/kr.nr/(2*t)))
	j.mb = kr.mr
	if !kr.streamB {
		// mc-row bands, at least two per goroutine
		j.mb = min(balance(m, kr.mc, kr.mr), max(kr.mr, (m+2*t-1)/(2*t)/kr.mr*kr.mr))
	}
	j.blocks = (n + j.ncb - 1) / j.ncb * j.nk
	size := j.ncb * j.kcb
	for i := range j.bp {
		if len(j.bp[i]) < size {
			j.bp[i] = make([]T, size)
		}
	}
	if len(j.packed) < j.blocks {
		j.packed = make([]atomic.Int64, j.blocks)
		j.computed = make([]atomic.Int64, j.blocks)
	}
	nbd := (m + j.mb - 1) / j.mb * (j.blocks / j.nk)
	if len(j.bandDone) < nbd {
		j.bandDone = make([]atomic.Int64, nbd)
	}
	for i := range j.bandDone[:nbd] {
		j.bandDone[i].Store(0)
	}
	j.total = 0
	for b := 0; b < j.blocks; b++ {
		j.packed[b].Store(0)
		j.computed[b].Store(0)
		_, _, _, _, g, r := j.block(b)
		j.total += int64(g + r)
	}
	j.next.Store(0)

	j.finished.Store(0)
	offer(j, t, &j.tickets)
	j.runPart(0)
	withdraw(j.tickets)
	waitFor(&j.finished, int64(t-1))
	j.p = params[T]{}
	jobList[T]().put(j)
}

// waitFor spins until v reaches want. Every 16 polls it yields the P, and
// the CPU (sched_yield): on a busy machine the goroutine it waits for may
// be on a thread that is waiting for a CPU, which spinning would keep.
// A job's caller waits for its workers' parts with it too, rather than
// parking on a WaitGroup: a parked caller's goroutine is woken onto the P
// of the worker that finished last, so both then share one P, the idle
// one's thread must be woken (~50-100µs in a VM) before the next job's
// worker can run beside the caller, and about half of back-to-back 256³
// products ran alone (~165 µs rather than ~115).
func waitFor(v *atomic.Int64, want int64) {
	for i := 0; v.Load() < want; i++ {
		if i%16 == 15 {
			runtime.Gosched()
			osYield()
		}
	}
}

// runPart takes items until none are left.
func (j *job[T]) runPart(int) {
	p := &j.p
	kr := p.kr
	nr := kr.nr
	buf := kr.buffers()
	defer kr.bufs.put(buf)
	b, base := 0, int64(0) // current block and its first item
	jc, nc, pc, kc, groups, bands := j.block(0)
	for {
		it := j.next.Add(1) - 1
		if it >= j.total {
			return
		}
		for it >= base+int64(groups+bands) {
			base += int64(groups + bands)
			b++
			jc, nc, pc, kc, groups, bands = j.block(b)
		}
		bp := j.bp[b%2]
		k := int(it - base)
		if k < groups {
			// Pack micro-panels k*bGroup... of block b, once block b-2
			// no longer reads this buffer.
			if b >= 2 {
				_, _, _, _, _, r := j.block(b - 2)
				waitFor(&j.computed[b-2], int64(r))
			}
			j0 := k * j.bg * nr
			w := min(j.bg*nr, nc-j0)
			p.packB(bp[j0*kc:], pc, kc, jc+j0, w)
			j.packed[b].Add(1)
			continue
		}
		band := k - groups
		bd := &j.bandDone[b/j.nk*bands+band]
		i := band * j.mb
		mrr := min(j.mb, j.m-i)
		accum := 1
		if pc == 0 {
			if p.beta == 0 {
				accum = 0
			} else {
				scale(p.beta, p.c, p.ldc, i, i+mrr, jc, jc+nc)
			}
		}
		p.packA(buf.a, i, mrr, pc, kc)
		waitFor(&j.packed[b], int64(groups))
		// The previous k block adds into the same tiles of C.
		waitFor(bd, int64(b%j.nk))
		p.tileBlock(buf, buf.a, bp, i, mrr, jc, nc, kc, accum)
		if p.ext != nil && pc+kc == p.k {
			p.ext.finish(any(p.c).([]float32), p.ldc, i, mrr, jc, nc)
		}
		bd.Add(1)
		j.computed[b].Add(1)
	}
}

func (j *job[T]) done() { j.finished.Add(1) }

// Worker goroutines, started on demand and kept for later calls.
type part interface {
	runPart(i int)
	done()
}

// ticket is part i of a job offered to the pool. A worker takes it, or the
// job's caller withdraws it once its own part is done, whichever comes
// first: a job never waits for a worker that has not started on it (the
// workers may all be busy, one of them with the very item that started
// this job: parallel jobs nest), and a worker never touches a job whose
// ticket it did not win (a finished job may already serve another call).
type ticket struct {
	state atomic.Int32 // ticketOffered, ticketTaken or ticketWithdrawn
	p     part
	i     int
}

const (
	ticketOffered = iota
	ticketTaken
	ticketWithdrawn
)

// offer hands parts 1..t-1 of p to the pool through ts, which it resizes
// to t-1 tickets (a job keeps its tickets for its next call: steady-state
// products do not allocate). p.done is called once for each part, by the
// worker that runs it or by withdraw (at once when the queue is full).
//
// A ticket is reused only once its previous offer is settled (after the
// job's wait), so an old queue entry that still points at it can only
// take, or find taken, the new offer: either way one worker runs each part.
func offer(p part, t int, ts *[]ticket) {
	startWorkers(t - 1)
	if cap(*ts) < t-1 {
		*ts = make([]ticket, t-1)
	}
	*ts = (*ts)[:t-1]
	for i := range *ts {
		tk := &(*ts)[i]
		tk.p, tk.i = p, i+1
		tk.state.Store(ticketOffered)
		select {
		case workCh <- tk:
		default:
			tk.state.Store(ticketWithdrawn)
			p.done()
		}
	}
}

// withdraw takes back the tickets no worker has taken: their parts count
// as done (the caller has run all the items they would have).
func withdraw(ts []ticket) {
	for i := range ts {
		if tk := &ts[i]; tk.state.CompareAndSwap(ticketOffered, ticketWithdrawn) {
			tk.p.done()
		}
	}
}

// take runs the ticket's part unless it was withdrawn. It reads the part
// only after winning the ticket, and not the ticket after done.
func (tk *ticket) take() {
	if tk.state.CompareAndSwap(ticketOffered, ticketTaken) {
		p := tk.p
		p.runPart(tk.i)
		p.done()
	}
}

var (
	workCh     = make(chan *ticket, 64)
	workersMu  sync.Mutex
	numWorkers int
)

func startWorkers(n int) {
	workersMu.Lock()
	for numWorkers < n {
		numWorkers++
		go worker()
	}
	workersMu.Unlock()
}

// After finishing its part a worker polls for more work before it parks:
// waking a parked goroutine's thread takes ~100-200µs here (a VM wakes an
// idle virtual CPU slowly), as long as a whole 256³ product, and
// back-to-back products are common. Polling is polite: each round yields
// the P to other goroutines and the CPU to other threads (sched_yield), so
// that on a busy machine the poller takes only time nobody else wants. How
// long a worker polls adapts to how soon work has been coming (nextSpin),
// between minSpin and maxSpin.
const (
	minSpin = 20 * time.Microsecond
	maxSpin = 500 * time.Microsecond
)

func worker() {
	spin := maxSpin / 2
	for {
		w := <-workCh
		for {
			w.take()
			t0 := time.Now()
			if !poll(&w, spin) {
				w = <-workCh
			}
			spin = nextSpin(spin, time.Since(t0))
		}
	}
}

// nextSpin is the polling time after polling for spin and waiting d for
// work: doubled when the work came in time, at least twice d when it came
// later but within maxSpin, halved when it came later than that (one long
// pause, a garbage collection say, does not end the polling; work that
// keeps coming late does).
func nextSpin(spin, d time.Duration) time.Duration {
	switch {
	case d <= spin:
		spin *= 2
	case d <= maxSpin:
		spin = max(spin, 2*d)
	default:
		spin /= 2
	}
	return min(maxSpin, max(minSpin, spin))
}

// poll waits up to d for more work without parking.
func poll(w **ticket, d time.Duration) bool {
	start := time.Now()
	for {
		select {
		case *w = <-workCh:
			return true
		default:
		}
		if time.Since(start) > d {
			return false
		}
		runtime.Gosched()
		osYield()
	}
}
