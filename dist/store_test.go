package dist

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTCPStore(t *testing.T) {
	srv, err := NewTCPStore("127.0.0.1:0", true, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli, err := NewTCPStore(srv.Addr(), false, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()

	// A Get that waits is woken by a Set from another client, and does
	// not block concurrent calls on the same store.
	var wg sync.WaitGroup
	var got []byte
	var gerr error
	wg.Add(1)
	go func() { defer wg.Done(); got, gerr = cli.Get("k") }()
	time.Sleep(50 * time.Millisecond)
	if n, err := cli.Add("n", 5); err != nil || n != 5 {
		t.Fatalf("Add = %d, %v; want 5", n, err)
	}
	if n, err := srv.Add("n", -2); err != nil || n != 3 {
		t.Fatalf("Add = %d, %v; want 3", n, err)
	}
	if err := srv.Set("k", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if gerr != nil || string(got) != "hello" {
		t.Fatalf("Get = %q, %v", got, gerr)
	}
	if err := cli.Wait("k", "n"); err != nil {
		t.Fatal(err)
	}
	if err := cli.Set("empty", nil); err != nil {
		t.Fatal(err)
	}
	if v, err := cli.Get("empty"); err != nil || len(v) != 0 {
		t.Fatalf("Get(empty) = %q, %v", v, err)
	}
}

func TestTCPStoreTimeoutNamesKey(t *testing.T) {
	srv, err := NewTCPStore("127.0.0.1:0", true, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	start := time.Now()
	err = srv.Wait("there", "missing-key")
	var te *StoreTimeoutError
	if !errors.As(err, &te) || te.Key != "missing-key" && te.Key != "there" {
		t.Fatalf("Wait error = %v; want a StoreTimeoutError", err)
	}
	if !strings.Contains(err.Error(), `"there"`) {
		t.Errorf("error %q does not name the first missing key", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Wait took %v with a 200ms timeout", el)
	}
	srv.Close()
	if err := srv.Set("a", nil); !errors.Is(err, ErrStoreClosed) {
		t.Errorf("Set after Close = %v; want ErrStoreClosed", err)
	}
}

func TestTCPStoreDialTimeout(t *testing.T) {
	srv, err := NewTCPStore("127.0.0.1:0", true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	srv.Close()
	start := time.Now()
	if _, err := NewTCPStore(addr, false, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("dial of a closed store = %v; want an error naming %s", err, addr)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("dial took %v with a 300ms timeout", el)
	}
}

// FuzzStoreWire: the server's request decoder never panics on bytes from
// the network, never allocates for a length the message does not carry,
// and decodes what the client encodes.
func FuzzStoreWire(f *testing.F) {
	f.Add(appendRequest(nil, request{op: opSet, key: "dist/pg0/addr/1", value: []byte("le 127.0.0.1:4000")}), "k", []byte("v"), int64(-3))
	f.Add(appendRequest(nil, request{op: opGet, key: "k", wait: 1500 * time.Millisecond}), "", []byte(nil), int64(0))
	f.Add(appendRequest(nil, request{op: opAdd, key: "n", delta: 7}), "joined/3", []byte{0, 1, 2}, int64(1)<<40)
	f.Add([]byte{opSet, 0, 0, 0, 1, 'k', 0x0f, 0xff, 0xff, 0xff}, "x", []byte{}, int64(5)) // a 256 MiB value that is not there
	f.Add([]byte{9, 0, 0, 0, 0}, "x", []byte{}, int64(5))
	f.Fuzz(func(t *testing.T, raw []byte, key string, value []byte, n int64) {
		r := bytes.NewReader(raw)
		for {
			q, err := readRequest(r)
			if err != nil {
				break
			}
			if len(q.key) >= maxKey || len(q.value) > maxValue || q.wait < 0 {
				t.Fatalf("decoded an out-of-range request %+v", q)
			}
		}
		if len(key) >= maxKey {
			return
		}
		for _, q := range []request{
			{op: opSet, key: key, value: value},
			{op: opGet, key: key, wait: time.Duration(n&(1<<40-1)) * time.Millisecond},
			{op: opAdd, key: key, delta: n},
		} {
			got, err := readRequest(bytes.NewReader(appendRequest(nil, q)))
			if err != nil || got.op != q.op || got.key != q.key || !bytes.Equal(got.value, q.value) || got.wait != q.wait || got.delta != q.delta {
				t.Fatalf("round trip of %+v = %+v, %v", q, got, err)
			}
		}
		// A reply frame of any bytes reads without panicking.
		readFrame(bytes.NewReader(raw), maxValue)
	})
}
