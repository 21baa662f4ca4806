package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests launch this test binary as the workers: with
// EMBER_LAUNCH_TEST_HELPER=mode set, TestMain runs helper(mode) instead of
// the tests.
const helperVar = "EMBER_LAUNCH_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperVar); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	rank, _ := strconv.Atoi(os.Getenv("RANK"))
	crash, _ := strconv.Atoi(os.Getenv("HELPER_CRASH_RANK"))
	switch mode {
	case "env":
		for _, v := range append(slices.Clone(Variables), "GOMAXPROCS") {
			fmt.Printf("%s=%s\n", v, os.Getenv(v))
		}
		fmt.Fprintln(os.Stderr, "a line on stderr")
		fmt.Print("no newline at the end")
		return 0
	case "crash": // rank HELPER_CRASH_RANK fails once every rank is up; the others sleep
		if rank == crash {
			ready(rank)
			waitFile(os.Getenv("HELPER_GO"))
			fmt.Fprintln(os.Stderr, "loading the data")
			fmt.Fprintln(os.Stderr, "panic: boom")
			return 3
		}
		if rank == 0 && os.Getenv("HELPER_DIR") != "" { // leave a grandchild in the process group
			c := exec.Command(os.Args[0])
			c.Env = append(os.Environ(), helperVar+"=sleep")
			if err := c.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			os.WriteFile(filepath.Join(os.Getenv("HELPER_DIR"), "grandchild"), []byte(strconv.Itoa(c.Process.Pid)), 0o644)
		}
		ready(rank)
		time.Sleep(time.Minute)
		return 0
	case "ignoreterm": // like crash, but the sleepers ignore SIGTERM
		signal.Ignore(syscall.SIGTERM)
		ready(rank)
		if rank == crash {
			waitFile(os.Getenv("HELPER_GO"))
			return 4
		}
		time.Sleep(time.Minute)
		return 0
	case "signal": // exit cleanly on SIGINT/SIGTERM, saying which
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
		ready(rank)
		select {
		case s := <-c:
			fmt.Printf("got %v\n", s)
			return 0
		case <-time.After(time.Minute):
			return 1
		}
	case "killself":
		if rank == crash {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		return 0
	case "sleep":
		time.Sleep(time.Minute)
		return 0
	case "dist":
		return distWorker()
	case "pid": // say who we are, then sleep
		fmt.Printf("pid %d\n", os.Getpid())
		time.Sleep(time.Minute)
		return 0
	case "launcher": // launch two "pid" workers (and be killed by the test)
		exe, _ := os.Executable()
		env := append(os.Environ(), helperVar+"=pid")
		if err := Run(context.Background(), Config{NProcPerNode: 2, Program: exe, Env: env}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	return 2
}

// ready prints the line the tests wait for before they act.
func ready(rank int) { fmt.Printf("ready %d\n", rank) }

// waitFile waits until path exists (the test's go-ahead), at most a minute.
func waitFile(path string) {
	for t := time.Now(); time.Since(t) < time.Minute; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
}

// lines collects written lines and says when n of them contain a word.
type lines struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	word  string
	n     int
	reach chan struct{}
}

func newLines(word string, n int) *lines { return &lines{word: word, n: n, reach: make(chan struct{})} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.word != "" && l.n > 0 {
		// one write may carry several lines (the launcher's output under load)
		if l.n -= bytes.Count(p, []byte(l.word)); l.n <= 0 {
			close(l.reach)
		}
	}
	return len(p), nil
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func helperConfig(t *testing.T, mode string, n int, extra ...string) Config {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Config{NProcPerNode: n, Program: exe, Env: append(append(os.Environ(), helperVar+"="+mode), extra...), Grace: 5 * time.Second}
}

// run runs c with a generous bound, failing the test if Run hangs.
func run(t *testing.T, ctx context.Context, c Config) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	err := Run(ctx, c)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("Run did not return within 45s")
	}
	return err
}

func TestEnvContract(t *testing.T) {
	c := helperConfig(t, "env", 3)
	out, errOut := newLines("", 0), newLines("", 0)
	c.Stdout, c.Stderr = out, errOut
	if err := run(t, context.Background(), c); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, errOut)
	}
	got := map[string]map[string]string{} // rank → name → value
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		pre, kv, ok := strings.Cut(l, ": ")
		if !ok || !strings.HasPrefix(pre, "[rank") {
			t.Fatalf("line without a rank prefix: %q", l)
		}
		if got[pre] == nil {
			got[pre] = map[string]string{}
		}
		if k, v, ok := strings.Cut(kv, "="); ok {
			got[pre][k] = v
		} else if kv != "no newline at the end" {
			t.Errorf("unexpected line %q", l)
		}
	}
	port := got["[rank0]"]["MASTER_PORT"]
	if p, _ := strconv.Atoi(port); p <= 0 {
		t.Errorf("MASTER_PORT %q: no free port was picked", port)
	}
	for r := 0; r < 3; r++ {
		env := got[fmt.Sprintf("[rank%d]", r)]
		want := map[string]string{"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port, "RANK": strconv.Itoa(r), "WORLD_SIZE": "3",
			"LOCAL_RANK": strconv.Itoa(r), "LOCAL_WORLD_SIZE": "3", "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1", "NODE_RANK": "0"}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("rank %d: %s=%q, want %q", r, k, env[k], v)
			}
		}
		if os.Getenv("GOMAXPROCS") == "" && env["GOMAXPROCS"] == "" {
			t.Errorf("rank %d: GOMAXPROCS not set", r)
		}
	}
	for r := 0; r < 3; r++ {
		if s := fmt.Sprintf("[rank%d]: a line on stderr\n", r); !strings.Contains(errOut.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, errOut)
		}
		if s := fmt.Sprintf("[rank%d]: no newline at the end\n", r); !strings.Contains(out.String(), s) {
			t.Errorf("stdout lacks %q", s)
		}
	}
}

func TestWorkerEnvSeveralNodes(t *testing.T) {
	c := Config{NProcPerNode: 4, NNodes: 2, NodeRank: 1, MasterAddr: "10.0.0.1", MasterPort: 29500, Env: []string{"GOMAXPROCS=2"}}
	got := c.WorkerEnv(2)
	want := []string{"MASTER_ADDR=10.0.0.1", "MASTER_PORT=29500", "RANK=6", "WORLD_SIZE=8", "LOCAL_RANK=2",
		"LOCAL_WORLD_SIZE=4", "GROUP_RANK=1", "GROUP_WORLD_SIZE=2", "NODE_RANK=1"}
	if !slices.Equal(got, want) {
		t.Errorf("WorkerEnv(2) = %v\nwant %v", got, want)
	}
	merged := mergeEnv([]string{"PATH=/bin", "RANK=99", "GOMAXPROCS=2"}, got)
	if slices.Contains(merged, "RANK=99") || !slices.Contains(merged, "RANK=6") || !slices.Contains(merged, "PATH=/bin") {
		t.Errorf("merged %v", merged)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		c    Config
		want string
	}{
		{Config{NProcPerNode: 0, Program: "x"}, "--nproc-per-node 0"},
		{Config{NProcPerNode: 1, NNodes: 2, NodeRank: 2, MasterAddr: "h", Program: "x"}, "--node-rank 2"},
		{Config{NProcPerNode: 1, NNodes: 2, Program: "x"}, "--master-addr is needed"},
		{Config{NProcPerNode: 1, MasterPort: 70000, Program: "x"}, "--master-port 70000"},
		{Config{NProcPerNode: 1}, "no program"},
		{Config{NProcPerNode: 1, Grace: -time.Second, Program: "x"}, "--grace -1s"},
		{Config{NProcPerNode: 2, Program: "/nonexistent/ember-worker"}, "starting rank 0"},
	} {
		if err := Run(context.Background(), c.c); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.c, err, c.want)
		}
	}
}

// gone reports whether pid no longer runs (exited, or a zombie nobody has
// reaped yet).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

func TestCrashStopsTheOthers(t *testing.T) {
	dir := t.TempDir()
	goAhead := filepath.Join(dir, "go")
	c := helperConfig(t, "crash", 3, "HELPER_CRASH_RANK=1", "HELPER_GO="+goAhead, "HELPER_DIR="+dir)
	out, errOut := newLines("ready", 3), newLines("", 0)
	c.Stdout, c.Stderr = out, errOut
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- run(t, context.Background(), c) }()
	select { // every rank is up (and rank 0 has started its grandchild)
	case <-out.reach:
	case <-time.After(30 * time.Second):
		t.Fatalf("the workers did not start:\n%s\n%s", out, errOut)
	}
	os.WriteFile(goAhead, nil, 0o644)
	err := <-done
	var we *WorkerError
	if !errors.As(err, &we) {
		t.Fatalf("error %v (%T), want a *WorkerError\nstderr:\n%s", err, err, errOut)
	}
	if we.Rank != 1 || we.ExitCode != 3 || we.Signal != 0 || we.ExitStatus() != 3 {
		t.Errorf("%+v: want rank 1, exit code 3", we)
	}
	if !slices.Equal(we.StderrTail, []string{"loading the data", "panic: boom"}) {
		t.Errorf("stderr tail %q", we.StderrTail)
	}
	msg := we.Error()
	for _, s := range []string{"rank 1 (local rank 1", "exited with code 3", "panic: boom"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q lacks %q", msg, s)
		}
	}
	if !strings.Contains(errOut.String(), "ember launch: rank 1") || !strings.Contains(errOut.String(), "stopping the other 2 worker(s)") {
		t.Errorf("launch's own messages:\n%s", errOut)
	}
	// The sleepers (a minute) were stopped by SIGTERM, not waited for.
	if d := time.Since(start); d > 40*time.Second {
		t.Errorf("Run took %v", d)
	}
	b, err := os.ReadFile(filepath.Join(dir, "grandchild"))
	if err != nil {
		t.Fatalf("rank 0 did not start its grandchild: %v", err)
	}
	pid, _ := strconv.Atoi(string(b))
	for deadline := time.Now().Add(10 * time.Second); !gone(pid) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("rank 0's grandchild %d outlived Run", pid)
	}
}

func TestGraceThenKill(t *testing.T) {
	goAhead := filepath.Join(t.TempDir(), "go")
	c := helperConfig(t, "ignoreterm", 2, "HELPER_CRASH_RANK=1", "HELPER_GO="+goAhead)
	c.Grace = 300 * time.Millisecond
	out, errOut := newLines("ready", 2), newLines("", 0)
	c.Stdout, c.Stderr = out, errOut
	done := make(chan error, 1)
	go func() { done <- run(t, context.Background(), c) }()
	<-out.reach // rank 0 ignores SIGTERM by now
	os.WriteFile(goAhead, nil, 0o644)
	err := <-done
	var we *WorkerError
	if !errors.As(err, &we) || we.Rank != 1 || we.ExitCode != 4 {
		t.Fatalf("error %v, want rank 1's exit code 4", err)
	}
	if !strings.Contains(errOut.String(), "killing them") {
		t.Errorf("no SIGKILL after the grace period:\n%s", errOut)
	}
}

func TestKilledBySignal(t *testing.T) {
	c := helperConfig(t, "killself", 2, "HELPER_CRASH_RANK=0")
	c.Stdout, c.Stderr = newLines("", 0), newLines("", 0)
	err := run(t, context.Background(), c)
	var we *WorkerError
	if !errors.As(err, &we) || we.Rank != 0 || we.Signal != syscall.SIGKILL || we.ExitStatus() != 137 {
		t.Fatalf("error %v, want rank 0 killed by SIGKILL (status 137)", err)
	}
	if !strings.Contains(we.Error(), "killed by signal 9 (killed)") {
		t.Errorf("message %q", we.Error())
	}
}

func TestSignalsAreForwarded(t *testing.T) {
	c := helperConfig(t, "signal", 3)
	sigs := make(chan os.Signal, 1)
	c.Signals = sigs
	out, errOut := newLines("ready", 3), newLines("", 0)
	c.Stdout, c.Stderr = out, errOut
	done := make(chan error, 1)
	go func() { done <- run(t, context.Background(), c) }()
	<-out.reach
	sigs <- syscall.SIGINT
	err := <-done
	var se *SignalError
	if !errors.As(err, &se) || se.Signal != syscall.SIGINT || se.ExitStatus() != 130 {
		t.Fatalf("error %v, want a *SignalError for SIGINT (status 130)", err)
	}
	for r := 0; r < 3; r++ {
		if s := fmt.Sprintf("[rank%d]: got interrupt\n", r); !strings.Contains(out.String(), s) {
			t.Errorf("rank %d did not get SIGINT:\n%s", r, out)
		}
	}
}

// TestLauncherKilled kills launch itself with SIGKILL (no chance to stop
// anything): the kernel kills its workers (Pdeathsig).
func TestLauncherKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux's")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(exe)
	c.Env = append(os.Environ(), helperVar+"=launcher")
	out := newLines("pid ", 2)
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-out.reach:
	case <-time.After(30 * time.Second):
		c.Process.Kill()
		c.Wait()
		t.Fatalf("the workers did not start:\n%s", out)
	}
	var pids []int
	for _, l := range strings.Split(out.String(), "\n") {
		if _, p, ok := strings.Cut(l, "]: pid "); ok {
			n, _ := strconv.Atoi(p)
			pids = append(pids, n)
		}
	}
	c.Process.Kill()
	c.Wait()
	for _, pid := range pids {
		for deadline := time.Now().Add(10 * time.Second); !gone(pid) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if !gone(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("worker %d outlived its launcher", pid)
		}
	}
	if len(pids) != 2 {
		t.Errorf("pids %v from:\n%s", pids, out)
	}
}

func TestContextCancelStops(t *testing.T) {
	c := helperConfig(t, "sleep", 2)
	c.Stdout, c.Stderr = newLines("", 0), newLines("", 0)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if err := run(t, ctx, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestPrefixWriter(t *testing.T) {
	var b bytes.Buffer
	p := &prefixWriter{w: &b, prefix: "[rank2]: "}
	p.Write([]byte("one\ntw"))
	p.Write([]byte("o\n\nthree"))
	p.flush()
	if want := "[rank2]: one\n[rank2]: two\n[rank2]: \n[rank2]: three\n"; b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
	// A progress bar's carriage returns end lines too; "\r\n" is one
	// ending, also when split across writes.
	b.Reset()
	p.Write([]byte("10%\r20%\r"))
	p.Write([]byte("\ndone\r\nx\r"))
	p.Write([]byte("\n"))
	if want := "[rank2]: 10%\r[rank2]: 20%\r\n[rank2]: done\r\n[rank2]: x\r\n"; b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
	tw := newTailWriter(2)
	tw.Write([]byte("a\nb\nc\nd"))
	if got := tw.lines(); !slices.Equal(got, []string{"c", "d"}) {
		t.Errorf("tail %q", got)
	}
	tw.Write([]byte("\n10%\r90%\r\nerr\n50%\r"))
	if got := tw.lines(); !slices.Equal(got, []string{"err", "50%"}) {
		t.Errorf("tail with redrawn lines %q", got)
	}
	tw.Write([]byte("\n"))
	if got := tw.lines(); !slices.Equal(got, []string{"err", "50%"}) {
		t.Errorf("tail after the redrawn line ended %q", got)
	}
}
