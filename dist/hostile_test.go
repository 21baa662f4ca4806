package dist

import (
	"errors"
	"net"
	"testing"
	"time"
)

// An idle connection that never says hello is not a client: the server
// does not wait for it to leave, and closes it after helloTimeout.
func TestStoreIgnoresSilentConnections(t *testing.T) {
	srv, err := NewTCPStore("127.0.0.1:0", true, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	idle, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	start := time.Now()
	srv.waitClients(time.Now().Add(5 * time.Second))
	if d := time.Since(start); d > time.Second {
		t.Errorf("the server waited %v for a silent connection", d)
	}
	// A real client is waited for.
	cli, err := NewTCPStore(srv.Addr(), false, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(300 * time.Millisecond); cli.Close() }()
	start = time.Now()
	srv.waitClients(time.Now().Add(5 * time.Second))
	if d := time.Since(start); d < 200*time.Millisecond || d > 3*time.Second {
		t.Errorf("waitClients returned after %v, want about 300ms (the client's close)", d)
	}
}

// A process without the job's token is refused, at once and by name.
func TestStoreToken(t *testing.T) {
	t.Setenv(TokenEnv, "job-secret")
	srv, err := NewTCPStore("127.0.0.1:0", true, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.Set("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(TokenEnv, "guess")
	start := time.Now()
	_, err = NewTCPStore(srv.Addr(), false, 5*time.Second)
	if !errors.Is(err, errTokenRefused) {
		t.Errorf("wrong token: %v, want errTokenRefused", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusal took %v", d)
	}
	t.Setenv(TokenEnv, "job-secret")
	cli, err := NewTCPStore(srv.Addr(), false, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if v, err := cli.Get("k"); err != nil || string(v) != "v" {
		t.Errorf("Get = %q, %v", v, err)
	}
}

// A silent connection to the ring listener does not hold up the rank that
// connects after it, and a hello without the token is closed.
func TestRingAcceptConcurrentHellos(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	silent, _ := net.Dial("tcp", ln.Addr().String())
	defer silent.Close()
	wrong, _ := net.Dial("tcp", ln.Addr().String())
	wrong.Write(hello("pg0/", 1, "guess"))
	defer wrong.Close()
	go func() {
		time.Sleep(100 * time.Millisecond)
		c, err := dialTo(ln.Addr().String(), "pg0/", 1, "tok", time.Now().Add(5*time.Second))
		if err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	start := time.Now()
	c, err := acceptFrom(ln, "pg0/", 1, "tok", time.Now().Add(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("accepting the real peer took %v behind a silent connection", d)
	}
}

// The store listens on the interface of MASTER_ADDR, on all only when
// EMBER_DIST_LISTEN_ALL=1.
func TestStoreListenAddress(t *testing.T) {
	t.Setenv("MASTER_ADDR", "127.0.0.1")
	t.Setenv("MASTER_PORT", "29999")
	_, listen, err := resolveOptions(Options{Rank: 0, WorldSize: 2})
	if err != nil || listen != "127.0.0.1:29999" {
		t.Errorf("listen %q, %v; want 127.0.0.1:29999", listen, err)
	}
	t.Setenv("EMBER_DIST_LISTEN_ALL", "1")
	if _, listen, _ = resolveOptions(Options{Rank: 0, WorldSize: 2}); listen != ":29999" {
		t.Errorf("listen %q with EMBER_DIST_LISTEN_ALL=1, want :29999", listen)
	}
}
