package dist

import (
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
