package dist

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emberml/ember/internal/testenv"
)

// The multi-process tests re-execute the test binary: TestMain runs the
// worker named by EMBER_DIST_TEST_WORKER instead of the tests. Workers are
// real processes on 127.0.0.1 that read the launch contract from their
// environment as a user's program would.

const workerEnv = "EMBER_DIST_TEST_WORKER"

// workers maps a name to a function run in a child process; a non-nil
// error fails the child (exit status 1, message on stderr).
var workers = map[string]func() error{}

func TestMain(m *testing.M) { testenv.MainWithWorkers(m, workerEnv, workers) }

// freePort returns a port that was free a moment ago.
func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type child struct {
	rank   int
	cmd    *exec.Cmd
	out    bytes.Buffer
	err    error // from Wait
	exited chan struct{}
}

// spawn starts worker name as the given ranks of a world of size world
// (ranks left out never start). Children are killed when the test ends,
// and the test checks that none is left.
func spawn(t testing.TB, name string, world int, ranks []int, timeout time.Duration, extraEnv ...string) []*child {
	t.Helper()
	return spawnPort(t, name, world, ranks, timeout, freePort(t), extraEnv...)
}

// spawnPort is spawn with the store at 127.0.0.1:port.
func spawnPort(t testing.TB, name string, world int, ranks []int, timeout time.Duration, port int, extraEnv ...string) []*child {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	var cs []*child
	for _, r := range ranks {
		c := &child{rank: r, exited: make(chan struct{})}
		c.cmd = exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		c.cmd.Env = append(os.Environ(),
			workerEnv+"="+name,
			fmt.Sprintf("RANK=%d", r), fmt.Sprintf("WORLD_SIZE=%d", world), fmt.Sprintf("LOCAL_RANK=%d", r),
			"MASTER_ADDR=127.0.0.1", fmt.Sprintf("MASTER_PORT=%d", port),
			"EMBER_DIST_TIMEOUT="+timeout.String(),
		)
		c.cmd.Env = append(c.cmd.Env, extraEnv...)
		c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
		c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { c.err = c.cmd.Wait(); close(c.exited) }()
		cs = append(cs, c)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			c.cmd.Process.Kill()
			<-c.exited
			if t.Failed() {
				t.Logf("rank %d: %v; output:\n%s", c.rank, c.err, c.out.String())
			}
			// The process is reaped: signalling its pid must fail.
			if err := syscall.Kill(c.cmd.Process.Pid, 0); err == nil {
				t.Errorf("rank %d (pid %d) is still alive", c.rank, c.cmd.Process.Pid)
			}
		}
		cancel()
	})
	return cs
}

// wait waits for every child and returns their outputs by rank.
func wait(t testing.TB, cs []*child) map[int]string {
	t.Helper()
	outs := map[int]string{}
	for _, c := range cs {
		select {
		case <-c.exited:
		case <-time.After(90 * time.Second):
			t.Fatalf("rank %d did not exit; output so far:\n%s", c.rank, c.out.String())
		}
		outs[c.rank] = c.out.String()
	}
	return outs
}

// waitOK waits for the children and fails the test unless all succeeded.
func waitOK(t testing.TB, cs []*child) map[int]string {
	t.Helper()
	outs := wait(t, cs)
	for _, c := range cs {
		if c.err != nil {
			t.Errorf("rank %d: %v\n%s", c.rank, c.err, outs[c.rank])
		}
	}
	return outs
}

func ranks(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// expectAll checks that every listed rank's output contains all of want.
func expectAll(t *testing.T, outs map[int]string, rs []int, want ...string) {
	t.Helper()
	for _, r := range rs {
		for _, w := range want {
			if !strings.Contains(outs[r], w) {
				t.Errorf("rank %d output lacks %q:\n%s", r, w, outs[r])
			}
		}
	}
}
