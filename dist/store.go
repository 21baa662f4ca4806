// Package dist is ember's distributed communication layer, modelled on
// torch.distributed: a TCP key-value store for rendezvous (TCPStore), a
// process group initialised from the launch contract of `ember launch`,
// torchrun or SLURM (InitProcessGroup, EnvOptions) and collectives
// (AllReduce, AllReduceAsync, Broadcast, AllGather, ReduceScatter,
// Barrier) on one of two backends:
//
//   - "cpu" (alias "gloo"): a pipelined ring over TCP between the processes,
//     for CPU tensors of float32, float64, int64 and int32 (bool for the
//     collectives that only move data);
//   - "nccl": NVIDIA's NCCL, loaded at run time (libnccl.so.2), for CUDA
//     tensors, queued on the device's current stream.
//
// Every rank calls the same collectives in the same order. Each has the
// group's timeout; a rank that does not arrive, or dies, makes the others
// fail with a *RankError naming it, and the group stays broken afterwards.
// Calls that disagree (another shape, dtype, op or root) fail with an
// error naming both calls instead of mixing data.
package dist

import (
	"bufio"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"time"
)

// Store is a key-value store shared by all ranks for rendezvous, like
// torch.distributed.Store. It is safe for concurrent use.
type Store interface {
	// Set stores value under key, waking any Get waiting for it.
	Set(key string, value []byte) error
	// Get returns the value of key, waiting until it is set or the
	// store's timeout passes (a *StoreTimeoutError naming the key).
	Get(key string) ([]byte, error)
	// Wait waits until every key is set or the timeout passes.
	Wait(keys ...string) error
	// Add adds delta to the integer stored under key (0 when unset) and
	// returns the new value.
	Add(key string, delta int64) (int64, error)
	// Close releases the store's connections (and, on the server, its
	// listener).
	Close() error
}

// StoreTimeoutError reports a key that was not set within the timeout.
type StoreTimeoutError struct {
	Key   string
	After time.Duration
}

func (e *StoreTimeoutError) Error() string {
	return fmt.Sprintf("dist: store: key %q was not set within %v", e.Key, e.After)
}

// Timeout reports true (so the error satisfies net.Error-like checks).
func (e *StoreTimeoutError) Timeout() bool { return true }

// ErrStoreClosed is returned by calls on a closed store.
var ErrStoreClosed = errors.New("dist: store is closed")

// Wire protocol. A request is [op u8][key len u32][key] followed by an
// op-specific payload; a reply is [status u8][len u32][data]. Integers are
// big-endian.
const (
	opSet byte = 1 // payload: [len u32][value]
	opGet byte = 2 // payload: [timeout ms i64]; reply data: value
	opAdd byte = 3 // payload: [delta i64]; reply data: [i64]

	stOK      byte = 0
	stTimeout byte = 1
	stError   byte = 2

	maxKey   = 1 << 16
	maxValue = 1 << 28

	// Every connection opens with [magic u32][token len u16][token]; the
	// server answers one status byte and, on a wrong token, closes it.
	storeHello = 0x454d4253 // "EMBS"
	maxToken   = 1 << 10
	// helloTimeout bounds how long a connection may take to say hello:
	// one that stays silent is closed, and never counts as a client.
	helloTimeout = 5 * time.Second
	// maxStoreConns caps the connections the server holds at once.
	maxStoreConns = 1024
)

// TokenEnv is the variable that holds the job's token. `ember launch` sets
// a random one per job (or passes on the one its own environment has);
// every process of the job must have the same. A store or ring connection
// that does not present it is closed. Without it (empty on every process),
// any process that can reach the store's and the ring's ports can join
// the job: they listen on MASTER_ADDR's interface only (loopback for a job
// on one machine) unless EMBER_DIST_LISTEN_ALL=1.
const TokenEnv = "EMBER_DIST_TOKEN"

func jobToken() string { return os.Getenv(TokenEnv) }

// listenAll reports whether the job asked to listen on every interface.
func listenAll() bool { return os.Getenv("EMBER_DIST_LISTEN_ALL") == "1" }

func appendHello(b []byte, token string) []byte {
	b = binary.BigEndian.AppendUint32(b, storeHello)
	b = binary.BigEndian.AppendUint16(b, uint16(len(token)))
	return append(b, token...)
}

// readHello reads a connection's hello and reports whether it holds token.
func readHello(r io.Reader, token string) bool {
	var h [6]byte
	if _, err := io.ReadFull(r, h[:]); err != nil || binary.BigEndian.Uint32(h[:]) != storeHello {
		return false
	}
	n := int(binary.BigEndian.Uint16(h[4:]))
	if n > maxToken {
		return false
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(r, got); err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(got, []byte(token)) == 1
}

// TCPStore is a Store served over TCP by one process (the server, rank 0
// in a process group) and reached by the others as clients.
type TCPStore struct {
	addr    string
	token   string
	timeout time.Duration
	srv     *storeServer // nil on clients

	mu     sync.Mutex
	idle   []*storeConn
	all    map[*storeConn]struct{}
	closed bool
}

type storeConn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

// NewTCPStore creates a store at addr ("host:port"). With isServer it
// listens there (port 0 picks a free port; Addr reports it) and also acts
// as a client of itself; otherwise it dials addr, retrying until timeout.
// timeout bounds every Get and Wait and the initial connection. The
// server accepts only connections that present the job's token
// (EMBER_DIST_TOKEN, see TokenEnv), and clients present it.
func NewTCPStore(addr string, isServer bool, timeout time.Duration) (*TCPStore, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("dist: NewTCPStore: timeout must be positive, got %v", timeout)
	}
	s := &TCPStore{addr: addr, token: jobToken(), timeout: timeout, all: map[*storeConn]struct{}{}}
	if len(s.token) > maxToken {
		return nil, fmt.Errorf("dist: %s holds %d bytes, at most %d", TokenEnv, len(s.token), maxToken)
	}
	if isServer {
		srv, err := listenStore(addr, s.token)
		if err != nil {
			return nil, err
		}
		s.srv = srv
		s.addr = srv.ln.Addr().String()
	}
	c, err := s.dial(time.Now().Add(timeout))
	if err != nil {
		if s.srv != nil {
			s.srv.close()
		}
		return nil, err
	}
	s.put(c)
	return s, nil
}

// Addr returns the address of the store's server.
func (s *TCPStore) Addr() string { return s.addr }

func (s *TCPStore) dial(deadline time.Time) (*storeConn, error) {
	backoff := 10 * time.Millisecond
	for {
		d := time.Until(deadline)
		if d <= 0 {
			d = time.Millisecond
		}
		c, err := net.DialTimeout("tcp", s.addr, min(d, time.Second))
		if err == nil {
			err = s.hello(c, deadline)
			if errors.Is(err, errTokenRefused) {
				return nil, err
			}
		}
		if err == nil {
			sc := &storeConn{c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				c.Close()
				return nil, ErrStoreClosed
			}
			s.all[sc] = struct{}{}
			s.mu.Unlock()
			return sc, nil
		}
		if time.Now().Add(backoff).After(deadline) {
			return nil, fmt.Errorf("dist: store: could not connect to %s within %v: %w", s.addr, s.timeout, err)
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

var errTokenRefused = fmt.Errorf("dist: store: the server refused this process's token (%s differs between the job's processes)", TokenEnv)

// hello presents the token on a new connection and reads the answer.
func (s *TCPStore) hello(c net.Conn, deadline time.Time) error {
	c.SetDeadline(time.Now().Add(min(max(time.Until(deadline), time.Second), helloTimeout)))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write(appendHello(nil, s.token)); err != nil {
		c.Close()
		return err
	}
	var st [1]byte
	if _, err := io.ReadFull(c, st[:]); err != nil {
		c.Close()
		if errors.Is(err, io.EOF) {
			return errTokenRefused
		}
		return err
	}
	if st[0] != stOK {
		c.Close()
		return errTokenRefused
	}
	return nil
}

// get takes an idle connection or dials a new one, so that a Get blocked
// on the server does not hold up other callers.
func (s *TCPStore) get() (*storeConn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrStoreClosed
	}
	if n := len(s.idle); n > 0 {
		c := s.idle[n-1]
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		return c, nil
	}
	s.mu.Unlock()
	return s.dial(time.Now().Add(s.timeout))
}

func (s *TCPStore) put(c *storeConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.c.Close()
		return
	}
	s.idle = append(s.idle, c)
}

func (s *TCPStore) drop(c *storeConn) {
	c.c.Close()
	s.mu.Lock()
	delete(s.all, c)
	s.mu.Unlock()
}

// call sends one request and reads its reply.
func (s *TCPStore) call(q request) (byte, []byte, error) {
	if len(q.key) >= maxKey {
		return 0, nil, fmt.Errorf("dist: store: key of %d bytes is too long", len(q.key))
	}
	c, err := s.get()
	if err != nil {
		return 0, nil, err
	}
	c.c.SetDeadline(time.Now().Add(q.wait + 10*time.Second))
	c.w.Write(appendRequest(nil, q))
	if err = c.w.Flush(); err == nil {
		var st byte
		var data []byte
		if st, data, err = readFrame(c.r, maxValue); err == nil {
			s.put(c)
			return st, data, nil
		}
	}
	s.drop(c)
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return 0, nil, ErrStoreClosed
	}
	return 0, nil, fmt.Errorf("dist: store %s: %w", s.addr, err)
}

func readFrame(r io.Reader, limit int) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if int64(n) > int64(limit) {
		return 0, nil, fmt.Errorf("frame of %d bytes exceeds the limit of %d", n, limit)
	}
	data, err := readN(r, int(n))
	return hdr[0], data, err
}

// readN reads n bytes, growing the buffer as they arrive, so that a bogus
// length in a short message does not allocate that much.
func readN(r io.Reader, n int) ([]byte, error) {
	const step = 1 << 20
	b := make([]byte, 0, min(n, step))
	for len(b) < n {
		k := min(n-len(b), step)
		if cap(b)-len(b) < k {
			b = append(b, make([]byte, k)...)[:len(b)]
		}
		m, err := io.ReadFull(r, b[len(b):len(b)+k])
		b = b[:len(b)+m]
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// request is one decoded client request.
type request struct {
	op    byte
	key   string
	value []byte        // opSet
	wait  time.Duration // opGet
	delta int64         // opAdd
}

// appendRequest encodes q after b.
func appendRequest(b []byte, q request) []byte {
	b = append(b, q.op)
	b = binary.BigEndian.AppendUint32(b, uint32(len(q.key)))
	b = append(b, q.key...)
	switch q.op {
	case opSet:
		b = binary.BigEndian.AppendUint32(b, uint32(len(q.value)))
		b = append(b, q.value...)
	case opGet:
		b = binary.BigEndian.AppendUint64(b, uint64(q.wait.Milliseconds()))
	case opAdd:
		b = binary.BigEndian.AppendUint64(b, uint64(q.delta))
	}
	return b
}

// readRequest decodes one request; a malformed one is an error (the
// server then drops the connection).
func readRequest(r io.Reader) (request, error) {
	var q request
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return q, err
	}
	q.op = hdr[0]
	kn := binary.BigEndian.Uint32(hdr[1:])
	if kn >= maxKey {
		return q, fmt.Errorf("key of %d bytes is too long", kn)
	}
	kb, err := readN(r, int(kn))
	if err != nil {
		return q, err
	}
	q.key = string(kb)
	var nb [8]byte
	switch q.op {
	case opSet:
		if _, err := io.ReadFull(r, nb[:4]); err != nil {
			return q, err
		}
		n := binary.BigEndian.Uint32(nb[:4])
		if n > maxValue {
			return q, fmt.Errorf("value of %d bytes is too large", n)
		}
		q.value, err = readN(r, int(n))
		return q, err
	case opGet, opAdd:
		if _, err := io.ReadFull(r, nb[:]); err != nil {
			return q, err
		}
		v := binary.BigEndian.Uint64(nb[:])
		if q.op == opAdd {
			q.delta = int64(v)
		} else {
			q.wait = time.Duration(min(v, uint64(math.MaxInt64/int64(time.Millisecond)))) * time.Millisecond
		}
		return q, nil
	}
	return q, fmt.Errorf("unknown op %d", q.op)
}

func replyErr(st byte, data []byte, key string, timeout time.Duration) error {
	switch st {
	case stOK:
		return nil
	case stTimeout:
		return &StoreTimeoutError{Key: key, After: timeout}
	default:
		return fmt.Errorf("dist: store: key %q: %s", key, data)
	}
}

// Set stores value under key.
func (s *TCPStore) Set(key string, value []byte) error {
	if len(value) > maxValue {
		return fmt.Errorf("dist: store: value of %d bytes for key %q is too large", len(value), key)
	}
	st, data, err := s.call(request{op: opSet, key: key, value: value})
	if err != nil {
		return err
	}
	return replyErr(st, data, key, s.timeout)
}

// Get returns key's value, waiting for it up to the store's timeout.
func (s *TCPStore) Get(key string) ([]byte, error) { return s.getWithin(key, s.timeout) }

func (s *TCPStore) getWithin(key string, d time.Duration) ([]byte, error) {
	st, data, err := s.call(request{op: opGet, key: key, wait: d})
	if err != nil {
		return nil, err
	}
	if err := replyErr(st, data, key, s.timeout); err != nil {
		return nil, err
	}
	return data, nil
}

// check reports whether key is set, without waiting.
func (s *TCPStore) check(key string) (bool, error) {
	_, err := s.getWithin(key, 0)
	var te *StoreTimeoutError
	if errors.As(err, &te) {
		return false, nil
	}
	return err == nil, err
}

// Wait waits until all keys are set; the timeout covers all of them
// together, and the error names the first key still missing.
func (s *TCPStore) Wait(keys ...string) error {
	deadline := time.Now().Add(s.timeout)
	for _, k := range keys {
		d := time.Until(deadline)
		if d < 0 {
			d = 0
		}
		if _, err := s.getWithin(k, d); err != nil {
			var te *StoreTimeoutError
			if errors.As(err, &te) {
				te.After = s.timeout
			}
			return err
		}
	}
	return nil
}

// Add adds delta to the integer under key and returns the result.
func (s *TCPStore) Add(key string, delta int64) (int64, error) {
	st, data, err := s.call(request{op: opAdd, key: key, delta: delta})
	if err != nil {
		return 0, err
	}
	if err := replyErr(st, data, key, s.timeout); err != nil {
		return 0, err
	}
	if len(data) != 8 {
		return 0, fmt.Errorf("dist: store: add %q: bad reply of %d bytes", key, len(data))
	}
	return int64(binary.BigEndian.Uint64(data)), nil
}

// localIP is the address this process reaches the store's server from
// (the interface peers can reach it on, in the usual one-network setup).
func (s *TCPStore) localIP() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.all {
		if a, ok := c.c.LocalAddr().(*net.TCPAddr); ok {
			return a.IP.String()
		}
	}
	return ""
}

// waitClients waits, on the server, until no other process holds a
// connection to it (each client keeps one open until it closes) or the
// deadline passes.
func (s *TCPStore) waitClients(deadline time.Time) {
	if s.srv == nil {
		return
	}
	for time.Now().Before(deadline) {
		s.mu.Lock()
		own := len(s.all)
		s.mu.Unlock()
		s.srv.mu.Lock()
		n := s.srv.clients
		s.srv.mu.Unlock()
		if n <= own {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Close closes the client connections and, on the server, stops serving.
func (s *TCPStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for c := range s.all {
		c.c.Close()
	}
	s.all, s.idle = nil, nil
	s.mu.Unlock()
	if s.srv != nil {
		s.srv.close()
	}
	return nil
}

// storeServer holds the data and serves each connection on a goroutine.
type storeServer struct {
	ln   net.Listener
	wg   sync.WaitGroup
	done chan struct{}

	mu      sync.Mutex
	data    map[string][]byte
	changed chan struct{} // closed and replaced on every Set/Add
	conns   map[net.Conn]struct{}
	clients int // connections that presented the token
	token   string
}

func listenStore(addr, token string) (*storeServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dist: store: listen on %s: %w", addr, err)
	}
	s := &storeServer{ln: ln, done: make(chan struct{}), data: map[string][]byte{}, changed: make(chan struct{}), conns: map[net.Conn]struct{}{}, token: token}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *storeServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		select {
		case <-s.done:
			s.mu.Unlock()
			c.Close()
			return
		default:
		}
		if len(s.conns) >= maxStoreConns {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *storeServer) close() {
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return
	default:
	}
	close(s.done)
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *storeServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	c.SetDeadline(time.Now().Add(helloTimeout))
	if !readHello(r, s.token) {
		return
	}
	c.SetDeadline(time.Time{})
	// Counted before the answer: a client that has its OK is one that
	// waitClients waits for.
	s.mu.Lock()
	s.clients++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.clients--
		s.mu.Unlock()
	}()
	if _, err := c.Write([]byte{stOK}); err != nil {
		return
	}
	for {
		req, err := readRequest(r)
		if err != nil {
			return
		}
		key := req.key
		var st byte
		var out []byte
		switch req.op {
		case opSet:
			s.mu.Lock()
			s.data[key] = req.value
			s.notifyLocked()
			s.mu.Unlock()
		case opGet:
			v, ok := s.waitKey(key, req.wait)
			if !ok {
				select {
				case <-s.done:
					return
				default:
				}
				st = stTimeout
			}
			out = v
		case opAdd:
			s.mu.Lock()
			var cur int64
			if v, ok := s.data[key]; ok {
				if len(v) != 8 {
					s.mu.Unlock()
					st, out = stError, []byte("value is not an integer set by Add")
					break
				}
				cur = int64(binary.BigEndian.Uint64(v))
			}
			cur += req.delta
			v := make([]byte, 8)
			binary.BigEndian.PutUint64(v, uint64(cur))
			s.data[key] = v
			s.notifyLocked()
			s.mu.Unlock()
			out = v
		}
		var rh [5]byte
		rh[0] = st
		binary.BigEndian.PutUint32(rh[1:], uint32(len(out)))
		w.Write(rh[:])
		w.Write(out)
		if w.Flush() != nil {
			return
		}
	}
}

func (s *storeServer) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *storeServer) waitKey(key string, wait time.Duration) ([]byte, bool) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		s.mu.Lock()
		v, ok := s.data[key]
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return v, true
		}
		select {
		case <-ch:
		case <-t.C:
			return nil, false
		case <-s.done:
			return nil, false
		}
	}
}
