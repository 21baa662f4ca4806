package dist

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend"
)

// The cpu backend: the ranks form a ring over TCP. Each rank holds one
// connection to the next rank, which it only writes, and one from the
// previous rank, which it only reads. Every collective is a schedule of
// steps in which a rank receives a block from the previous rank (reducing
// it into its own data or copying it in place) and, segment by segment as
// each lands, queues it for a sender goroutine that forwards it to the next
// rank. So AllReduce is a reduce-scatter followed by an all-gather
// (2·(W-1) steps over blocks of n/W elements), pipelined: a segment moves on
// as soon as it is reduced. Data goes between the tensors' memory and the
// sockets without copies, except for the reduction's receive buffer.
//
// Each collective starts with a header (sequence number, op, dtype,
// shape, root) sent to the next rank, which compares it with its own: a
// mismatch fails the collective with a message naming both calls instead
// of corrupting data or hanging.
//
// On a failure (timeout, a connection dropped, a mismatch) a rank closes
// its connections, which makes its neighbours fail at once, and the failure
// spreads around the ring. Each rank then records in the store that it
// reached this collective and waits briefly for the others' records: the
// ranks that never record one did not arrive (or died) and are named in
// the *RankError every survivor returns.

const (
	helloMagic  = 0x454d4252 // "EMBR"
	headerMagic = 0x454d4243 // "EMBC"
	segBytes    = 512 << 10  // pipelining unit
)

type ringGroup struct {
	g          *ProcessGroup
	next, prev net.Conn // nil for a world of one
	seq        uint64
	scratch    []byte
}

var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// newRing publishes this rank's listening address in the store, waits for
// every rank's, and connects to its ring neighbours.
func newRing(g *ProcessGroup, masterAddr string, masterPort int, deadline time.Time) (*ringGroup, error) {
	r := &ringGroup{g: g}
	if g.world == 1 {
		return r, nil
	}
	host := advertisedHost(g.store, masterAddr, masterPort)
	bind := host
	if listenAll() {
		bind = ""
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(bind, "0"))
	if err != nil {
		return nil, fmt.Errorf("dist: rendezvous: listen: %w", err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	order := "le"
	if !littleEndian {
		order = "be"
	}
	if err := g.store.Set(g.key("addr", g.rank), []byte(order+" "+net.JoinHostPort(host, fmt.Sprint(port)))); err != nil {
		return nil, storeFailed("rendezvous", err)
	}
	if err := g.join(deadline); err != nil {
		return nil, err
	}
	nextRank, prevRank := (g.rank+1)%g.world, (g.rank+g.world-1)%g.world
	val, err := g.store.Get(g.key("addr", nextRank))
	if err != nil {
		return nil, storeFailed("rendezvous", err)
	}
	ord, addr, _ := strings.Cut(string(val), " ")
	if ord != order {
		return nil, fmt.Errorf("dist: rendezvous: rank %d has byte order %q, this rank %q: the cpu backend needs one byte order", nextRank, ord, order)
	}
	var wg sync.WaitGroup
	var acceptErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.prev, acceptErr = acceptFrom(ln, g.prefix, prevRank, jobToken(), deadline)
	}()
	r.next, err = dialTo(addr, g.prefix, g.rank, jobToken(), deadline)
	if err != nil {
		ln.Close() // stops the accept
		err = &RankError{Op: "rendezvous", Rank: nextRank, Err: fmt.Errorf("connecting to rank %d at %s: %w", nextRank, addr, err)}
	}
	wg.Wait()
	if err == nil && acceptErr != nil {
		err = &RankError{Op: "rendezvous", Rank: prevRank, Err: fmt.Errorf("waiting for rank %d to connect: %w", prevRank, acceptErr)}
	}
	if err != nil {
		r.closeConns()
		return nil, err
	}
	return r, nil
}

// join announces this rank in the store and waits for the others; a
// rank that has not come by the deadline is named in a *RankError.
func (g *ProcessGroup) join(deadline time.Time) error {
	if _, err := g.store.Add(g.key("joined", g.rank), 1); err != nil {
		return storeFailed("rendezvous", err)
	}
	missing, err := g.waitAll("joined", deadline)
	if err != nil {
		return storeFailed("rendezvous", err)
	}
	if len(missing) > 0 {
		return &RankError{Op: "rendezvous", Rank: missing[0], Err: timeoutError(fmt.Sprintf("rank(s) %s of %d never joined", joinInts(missing), g.world))}
	}
	return nil
}

// key names a per-rank key of the group in the store.
func (g *ProcessGroup) key(what string, rank int) string {
	return fmt.Sprintf("%s%s/%d", g.prefix, what, rank)
}

func storeFailed(op string, err error) error {
	return &RankError{Op: op, Rank: 0, Err: fmt.Errorf("the store (served by rank 0's process) failed: %w", err)}
}

type timeoutError string

func (e timeoutError) Error() string { return string(e) }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// advertisedHost is the address other ranks reach this one at: the local
// side of the connection to the store (the interface that reaches the
// master), else the one a UDP socket towards the master would use.
func advertisedHost(s Store, masterAddr string, masterPort int) string {
	if ts, ok := s.(*TCPStore); ok {
		if ip := ts.localIP(); ip != "" {
			return ip
		}
	}
	if c, err := net.Dial("udp", net.JoinHostPort(masterAddr, fmt.Sprint(masterPort))); err == nil {
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).IP.String()
	}
	return "127.0.0.1"
}

// waitAll waits until every other rank has set the counter what/<rank>,
// or the deadline passes, and returns the ranks still missing.
func (g *ProcessGroup) waitAll(what string, deadline time.Time) ([]int, error) {
	ts, blocking := g.store.(*TCPStore)
	sleep := 2 * time.Millisecond
	for {
		var missing []int
		for p := 0; p < g.world; p++ {
			if p == g.rank {
				continue
			}
			if blocking && len(missing) == 0 {
				// Wait on the server for the first rank still missing.
				d := max(time.Until(deadline), 0)
				if _, err := ts.getWithin(g.key(what, p), d); err == nil {
					continue
				} else if !isStoreTimeout(err) {
					return nil, err
				}
				missing = append(missing, p)
				continue
			}
			n, err := g.store.Add(g.key(what, p), 0)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 || !time.Now().Before(deadline) {
			return missing, nil
		}
		if !blocking {
			time.Sleep(min(sleep, time.Until(deadline)))
			sleep = min(2*sleep, 50*time.Millisecond)
		}
	}
}

func isStoreTimeout(err error) bool {
	var te *StoreTimeoutError
	return errors.As(err, &te)
}

// hello is the first message on a ring connection: the magic, the group's
// key prefix, the dialer's rank and the job's token.
func hello(prefix string, rank int, token string) []byte {
	b := binary.BigEndian.AppendUint32(nil, helloMagic)
	b = binary.BigEndian.AppendUint32(b, uint32(rank))
	b = binary.BigEndian.AppendUint16(b, uint16(len(prefix)))
	b = append(b, prefix...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(token)))
	return append(b, token...)
}

func dialTo(addr, prefix string, rank int, token string, deadline time.Time) (net.Conn, error) {
	backoff := 5 * time.Millisecond
	for {
		c, err := net.DialTimeout("tcp", addr, max(time.Until(deadline), time.Millisecond))
		if err == nil {
			c.SetDeadline(deadline)
			if _, err = c.Write(hello(prefix, rank, token)); err == nil {
				return c, nil
			}
			c.Close()
		}
		if time.Now().Add(backoff).After(deadline) {
			return nil, err
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// maxPendingHellos caps the connections whose hello is being read at once;
// more are closed at once.
const maxPendingHellos = 64

// acceptFrom accepts connections until one from rank arrives with this
// group's hello and the job's token. Each hello is read on its own
// goroutine under helloTimeout, so that a silent connection delays no one;
// the others are closed.
func acceptFrom(ln net.Listener, prefix string, rank int, token string, deadline time.Time) (net.Conn, error) {
	tl := ln.(*net.TCPListener)
	tl.SetDeadline(deadline)
	want := hello(prefix, rank, token)
	found := make(chan net.Conn, 1)
	pending := make(chan struct{}, maxPendingHellos)
	var done atomic.Bool
	for {
		c, err := ln.Accept()
		if err != nil {
			if done.Load() {
				return <-found, nil
			}
			return nil, err
		}
		select {
		case pending <- struct{}{}:
		default:
			c.Close()
			continue
		}
		go func(c net.Conn) {
			defer func() { <-pending }()
			if d := time.Now().Add(helloTimeout); d.Before(deadline) {
				c.SetDeadline(d)
			} else {
				c.SetDeadline(deadline)
			}
			got := make([]byte, len(want))
			if _, err := io.ReadFull(c, got); err != nil || subtle.ConstantTimeCompare(got, want) != 1 || !done.CompareAndSwap(false, true) {
				c.Close()
				return
			}
			c.SetDeadline(deadline)
			found <- c
			tl.SetDeadline(time.Now()) // wake the Accept
		}(c)
	}
}

func (r *ringGroup) closeConns() {
	for _, c := range []net.Conn{r.next, r.prev} {
		if c != nil {
			c.Close()
		}
	}
}

// close shuts the ring down in order: it stops writing, then reads what
// the previous rank still sends until it stops too, so that no connection
// is reset with data in flight.
func (r *ringGroup) close() error {
	if r.next == nil {
		return nil
	}
	if r.g.Err() != nil {
		// A broken ring has nothing in flight worth draining, and the
		// neighbour may be the rank that hung.
		r.closeConns()
		return nil
	}
	if tc, ok := r.next.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	r.prev.SetReadDeadline(time.Now().Add(min(r.g.timeout, 5*time.Second)))
	io.Copy(io.Discard, r.prev)
	r.closeConns()
	return nil
}

// --- per-collective header ---

const (
	kindAllReduce byte = iota + 1
	kindBroadcast
	kindAllGather
	kindReduceScatter
	kindBarrier
)

var kindNames = map[byte]string{kindAllReduce: "all_reduce", kindBroadcast: "broadcast", kindAllGather: "all_gather", kindReduceScatter: "reduce_scatter", kindBarrier: "barrier"}

type header struct {
	seq   uint64
	kind  byte
	dtype byte
	op    byte
	root  int32
	shape []int64
}

func (h header) encode() []byte {
	b := make([]byte, 2, 32+8*len(h.shape))
	b = binary.BigEndian.AppendUint32(b, headerMagic)
	b = binary.BigEndian.AppendUint64(b, h.seq)
	b = append(b, h.kind, h.dtype, h.op, byte(len(h.shape)))
	b = binary.BigEndian.AppendUint32(b, uint32(h.root))
	for _, d := range h.shape {
		b = binary.BigEndian.AppendUint64(b, uint64(d))
	}
	binary.BigEndian.PutUint16(b, uint16(len(b)-2))
	return b
}

func readHeader(r io.Reader) (header, error) {
	var h header
	var lb [2]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return h, err
	}
	n := int(binary.BigEndian.Uint16(lb[:]))
	if n < 20 || n > 20+8*255 {
		return h, fmt.Errorf("corrupt collective header of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return h, err
	}
	if binary.BigEndian.Uint32(b) != headerMagic || n != 20+8*int(b[15]) {
		return h, fmt.Errorf("corrupt collective header")
	}
	h.seq = binary.BigEndian.Uint64(b[4:])
	h.kind, h.dtype, h.op = b[12], b[13], b[14]
	h.root = int32(binary.BigEndian.Uint32(b[16:]))
	for i := 0; i < int(b[15]); i++ {
		h.shape = append(h.shape, int64(binary.BigEndian.Uint64(b[20+8*i:])))
	}
	return h, nil
}

func (h header) String() string {
	name := kindNames[h.kind]
	if name == "" {
		name = fmt.Sprintf("collective(%d)", h.kind)
	}
	s := fmt.Sprintf("%s #%d", name, h.seq)
	switch h.kind {
	case kindAllReduce, kindReduceScatter:
		s += fmt.Sprintf(" (%v)", ReduceOp(h.op))
	case kindBroadcast:
		s += fmt.Sprintf(" from root %d", h.root)
	}
	if h.kind != kindBarrier {
		sh := make(ember.Shape, len(h.shape))
		for i, d := range h.shape {
			sh[i] = int(d)
		}
		s += fmt.Sprintf(" of %v %v", ember.DType(h.dtype), sh)
	}
	return s
}

func (h header) equal(o header) bool {
	if h.seq != o.seq || h.kind != o.kind || h.dtype != o.dtype || h.op != o.op || h.root != o.root || len(h.shape) != len(o.shape) {
		return false
	}
	for i := range h.shape {
		if h.shape[i] != o.shape[i] {
			return false
		}
	}
	return true
}

func newHeader(seq uint64, kind byte, t *ember.Tensor, op ReduceOp, root int) header {
	h := header{seq: seq, kind: kind, op: byte(op), root: int32(root)}
	if t != nil {
		h.dtype = byte(t.DType())
		for _, d := range t.Shape() {
			h.shape = append(h.shape, int64(d))
		}
	}
	return h
}

// --- tensor memory ---

// bytesOf returns the bytes of a contiguous CPU tensor, in place.
func bytesOf(t *ember.Tensor) []byte {
	v, _ := ember.UnsafeView(t)
	st, ok := v.S.(backend.HostStorage)
	if !ok {
		panic(fmt.Sprintf("dist: cpu backend given %T storage", v.S))
	}
	return backend.HostBytes(st, v.Offset, v.NumElements())
}

func asType[T any](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

// split cuts b (n elements of size es) into w blocks whose sizes differ by
// at most one element.
func split(b []byte, n, es, w int) [][]byte {
	out := make([][]byte, w)
	for i := range out {
		lo, hi := i*n/w, (i+1)*n/w
		out[i] = b[lo*es : hi*es]
	}
	return out
}

// --- the ring engine ---

type ringStep struct {
	recv    int  // block received in this step
	reduce  bool // reduce it into the block (else copy it in place)
	final   bool // apply the finisher (Avg's division) after reducing
	forward bool // queue each segment to the next rank once it is in place
}

// sender writes queued byte slices to the next rank, in order.
type sender struct {
	c      net.Conn
	mu     sync.Mutex
	cond   sync.Cond
	items  [][]byte
	sent   int  // items fully written
	closed bool // nothing more will be queued
	err    error
	done   chan struct{}
}

func newSender(c net.Conn) *sender {
	s := &sender{c: c, done: make(chan struct{})}
	s.cond.L = &s.mu
	go s.loop()
	return s
}

func (s *sender) loop() {
	defer close(s.done)
	for {
		s.mu.Lock()
		for s.sent == len(s.items) && !s.closed {
			s.cond.Wait()
		}
		if s.sent == len(s.items) {
			s.mu.Unlock()
			return
		}
		item := s.items[s.sent]
		s.mu.Unlock()
		_, err := s.c.Write(item)
		s.mu.Lock()
		if err != nil {
			s.err = err
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		}
		s.items[s.sent] = nil
		s.sent++
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// queue adds an item and returns its index.
func (s *sender) queue(b []byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = append(s.items, b)
	s.cond.Broadcast()
	return len(s.items) - 1
}

// waitSent waits until the item at index i (and all before it) is written.
func (s *sender) waitSent(i int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.sent <= i && s.err == nil {
		s.cond.Wait()
	}
	return s.err
}

// finish waits for everything queued to be written.
func (s *sender) finish() error {
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	<-s.done
	return s.err
}

// run executes one collective: it sends the header and the first blocks,
// then runs the steps. rf reduces src into dst, fin finishes a reduced
// segment in place.
func (r *ringGroup) run(h header, blocks [][]byte, first []int, steps []ringStep, es int, rf, fin func(dst, src []byte)) error {
	start := time.Now()
	deadline := start.Add(r.g.timeout)
	r.next.SetDeadline(deadline)
	r.prev.SetDeadline(deadline)
	snd := newSender(r.next)
	lastQueued := make([]int, len(blocks)) // per block: index of its last queued item + 1
	queue := func(b int, seg []byte) { lastQueued[b] = snd.queue(seg) + 1 }
	snd.queue(h.encode())
	for _, b := range first {
		for off := 0; off < len(blocks[b]); off += segBytes {
			queue(b, blocks[b][off:min(off+segBytes, len(blocks[b]))])
		}
	}
	seg := segBytes - segBytes%es
	err := func() error {
		ph, err := readHeader(r.prev)
		if err != nil {
			return err
		}
		if !ph.equal(h) {
			return &mismatchError{msg: fmt.Sprintf("rank %d called %v, rank %d called %v", (r.g.rank+r.g.world-1)%r.g.world, ph, r.g.rank, h)}
		}
		for _, st := range steps {
			blk := blocks[st.recv]
			if n := lastQueued[st.recv]; n > 0 {
				// This block was sent earlier and is about to be
				// overwritten: the sender is done with it by now (the
				// data arriving depends on it), this makes it explicit.
				if err := snd.waitSent(n - 1); err != nil {
					return err
				}
			}
			for off := 0; off < len(blk); off += seg {
				s := blk[off:min(off+seg, len(blk))]
				if st.reduce {
					buf := r.buf(len(s))
					if _, err := io.ReadFull(r.prev, buf); err != nil {
						return err
					}
					rf(s, buf)
					if st.final && fin != nil {
						fin(s, nil)
					}
				} else if _, err := io.ReadFull(r.prev, s); err != nil {
					return err
				}
				if st.forward {
					queue(st.recv, s)
				}
			}
		}
		return nil
	}()
	if err != nil {
		r.closeConns()
		snd.finish()
		return r.fail(h, start, err)
	}
	if err := snd.finish(); err != nil {
		r.closeConns()
		return r.fail(h, start, err)
	}
	return nil
}

func (r *ringGroup) buf(n int) []byte {
	if cap(r.scratch) < n {
		r.scratch = make([]byte, segBytes)
	}
	return r.scratch[:n]
}

type mismatchError struct{ msg string }

func (e *mismatchError) Error() string { return e.msg }

// fail turns the first error seen in a collective into the group's error.
// It records in the store that this rank reached the collective (and why it
// failed), waits a little for the other ranks' records, and names the
// ranks that have none.
func (r *ringGroup) fail(h header, start time.Time, cause error) error {
	g := r.g
	op := kindNames[h.kind]
	// How long this rank waited for the collective, not counting the
	// wait below for the others' reports.
	after := time.Since(start)
	var mm *mismatchError
	kind := failKind(cause)
	key := g.key("fail", g.rank)
	err := g.store.Set(key+"/msg", []byte(kind+" "+cause.Error()))
	if err == nil {
		_, err = g.store.Add(key, int64(h.seq)+1)
	}
	if err != nil {
		return &RankError{Op: op, Rank: 0, After: after, Err: fmt.Errorf("%v; and the store (served by rank 0's process) is unreachable: %v", cause, err)}
	}
	missing, err := g.waitAll("fail", time.Now().Add(g.grace()))
	if err != nil {
		return &RankError{Op: op, Rank: 0, After: after, Err: fmt.Errorf("%v; and the store (served by rank 0's process) is unreachable: %v", cause, err)}
	}
	if errors.As(cause, &mm) {
		return fmt.Errorf("dist: %s #%d: the ranks' calls disagree: %s", op, h.seq, mm.msg)
	}
	isMissing := map[int]bool{}
	for _, p := range missing {
		isMissing[p] = true
	}
	reports := map[int]string{g.rank: kind}
	for p := 0; p < g.world; p++ {
		if p == g.rank || isMissing[p] {
			continue
		}
		v, err := g.store.Get(g.key("fail", p) + "/msg")
		if err != nil {
			continue
		}
		k, msg, _ := strings.Cut(string(v), " ")
		if k == "mismatch" {
			return fmt.Errorf("dist: %s #%d: the ranks' calls disagree: %s (seen by rank %d)", op, h.seq, msg, p)
		}
		reports[p] = k
	}
	if len(missing) > 0 {
		// The rank after the first missing one reads from it: its error
		// tells a rank that hung (a timeout) from one that died.
		m := missing[0]
		return &RankError{Op: op, Rank: m, After: after, Err: &absentError{ranks: missing, what: fmt.Sprintf("%s #%d", op, h.seq), timeout: reports[(m+1)%g.world] == "timeout", cause: cause}}
	}
	// Everyone reached the collective: blame the neighbour the error came from.
	culprit := (g.rank + g.world - 1) % g.world
	var ne *net.OpError
	if errors.As(cause, &ne) && ne.Op == "write" {
		culprit = (g.rank + 1) % g.world
	}
	return &RankError{Op: op, Rank: culprit, After: after, Err: cause}
}

func failKind(err error) string {
	var mm *mismatchError
	var ne net.Error
	switch {
	case errors.As(err, &mm):
		return "mismatch"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return "error"
}

// absentError says which ranks did not take part in a collective.
type absentError struct {
	ranks   []int
	what    string
	timeout bool  // the rank after the first one absent timed out waiting for it
	cause   error // what this rank saw
}

func (e *absentError) Error() string {
	return fmt.Sprintf("rank(s) %s did not take part in %s (here: %v)", joinInts(e.ranks), e.what, e.cause)
}

func (e *absentError) Unwrap() error   { return e.cause }
func (e *absentError) Timeout() bool   { return e.timeout }
func (e *absentError) Temporary() bool { return false }

// --- collectives ---

func (r *ringGroup) allReduce(t *ember.Tensor, op ReduceOp) error {
	r.seq++
	w, rank := r.g.world, r.g.rank
	data := bytesOf(t)
	es := t.DType().Size()
	rf, fin := reducer(t.DType(), op, w)
	if w == 1 {
		return nil
	}
	blocks := split(data, t.NumElements(), es, w)
	var steps []ringStep
	for s := 0; s < w-1; s++ { // reduce-scatter
		steps = append(steps, ringStep{recv: mod(rank-s-1, w), reduce: true, forward: true, final: s == w-2})
	}
	for s := 0; s < w-1; s++ { // all-gather
		steps = append(steps, ringStep{recv: mod(rank-s, w), forward: s < w-2})
	}
	return r.run(newHeader(r.seq, kindAllReduce, t, op, 0), blocks, []int{rank}, steps, es, rf, fin)
}

func (r *ringGroup) broadcast(t *ember.Tensor, root int) error {
	r.seq++
	w := r.g.world
	if w == 1 {
		return nil
	}
	d := mod(r.g.rank-root, w)
	var first []int
	var steps []ringStep
	if d == 0 {
		first = []int{0}
	} else {
		steps = []ringStep{{recv: 0, forward: d < w-1}}
	}
	return r.run(newHeader(r.seq, kindBroadcast, t, 0, root), [][]byte{bytesOf(t)}, first, steps, t.DType().Size(), nil, nil)
}

// gatherSteps is the all-gather schedule: rank r starts with block r and
// receives the others in turn, forwarding all but the last.
func gatherSteps(rank, w int) []ringStep {
	var steps []ringStep
	for s := 0; s < w-1; s++ {
		steps = append(steps, ringStep{recv: mod(rank-s-1, w), forward: s < w-2})
	}
	return steps
}

func (r *ringGroup) allGather(out []*ember.Tensor, in *ember.Tensor) error {
	r.seq++
	w, rank := r.g.world, r.g.rank
	blocks := make([][]byte, w)
	for i, o := range out {
		blocks[i] = bytesOf(o)
	}
	if src := bytesOf(in); len(src) > 0 && &src[0] != &blocks[rank][0] {
		copy(blocks[rank], src)
	}
	if w == 1 {
		return nil
	}
	return r.run(newHeader(r.seq, kindAllGather, in, 0, 0), blocks, []int{rank}, gatherSteps(rank, w), in.DType().Size(), nil, nil)
}

func (r *ringGroup) reduceScatter(out *ember.Tensor, in []*ember.Tensor, op ReduceOp) error {
	r.seq++
	w, rank := r.g.world, r.g.rank
	es := out.DType().Size()
	// Reduce in a copy, so the inputs stay as they were.
	n := len(bytesOf(out))
	work := make([]byte, w*n)
	blocks := make([][]byte, w)
	for i, t := range in {
		blocks[i] = work[i*n : (i+1)*n]
		copy(blocks[i], bytesOf(t))
	}
	rf, fin := reducer(out.DType(), op, w)
	if w > 1 {
		var steps []ringStep
		for s := 0; s < w-1; s++ {
			steps = append(steps, ringStep{recv: mod(rank-s-2, w), reduce: true, forward: s < w-2, final: s == w-2})
		}
		if err := r.run(newHeader(r.seq, kindReduceScatter, out, op, 0), blocks, []int{mod(rank-1, w)}, steps, es, rf, fin); err != nil {
			return err
		}
	}
	copy(bytesOf(out), blocks[rank])
	return nil
}

func (r *ringGroup) barrier() error {
	r.seq++
	w, rank := r.g.world, r.g.rank
	if w == 1 {
		return nil
	}
	token := make([]byte, w)
	return r.run(newHeader(r.seq, kindBarrier, nil, 0, 0), split(token, w, 1, w), []int{rank}, gatherSteps(rank, w), 1, nil, nil)
}

func mod(a, w int) int { return ((a % w) + w) % w }

// --- reductions ---

type number interface {
	~float32 | ~float64 | ~int32 | ~int64
}

// reducer returns the element-wise combination of op for dt and, for Avg,
// the division by the world size of a fully reduced segment.
func reducer(dt ember.DType, op ReduceOp, w int) (rf, fin func(dst, src []byte)) {
	switch dt {
	case ember.Float32:
		return reducerOf[float32](op, w)
	case ember.Float64:
		return reducerOf[float64](op, w)
	case ember.Int64:
		return reducerOf[int64](op, w)
	case ember.Int32:
		return reducerOf[int32](op, w)
	}
	return nil, nil
}

func reducerOf[T number](op ReduceOp, w int) (rf, fin func(dst, src []byte)) {
	switch op {
	case Sum, Avg:
		rf = func(dst, src []byte) {
			d, s := asType[T](dst), asType[T](src)
			s = s[:len(d)]
			for i := range d {
				d[i] += s[i]
			}
		}
	case Max:
		rf = func(dst, src []byte) {
			d, s := asType[T](dst), asType[T](src)
			s = s[:len(d)]
			for i := range d {
				d[i] = max(d[i], s[i])
			}
		}
	case Min:
		rf = func(dst, src []byte) {
			d, s := asType[T](dst), asType[T](src)
			s = s[:len(d)]
			for i := range d {
				d[i] = min(d[i], s[i])
			}
		}
	}
	if op == Avg {
		n := T(w)
		fin = func(dst, _ []byte) {
			d := asType[T](dst)
			for i := range d {
				d[i] /= n
			}
		}
	}
	return rf, fin
}
