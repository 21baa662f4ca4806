// Package launch starts and supervises the worker processes of a
// distributed job on one machine, as torchrun does: it gives each worker
// the environment contract dist.InitProcessGroup reads (MASTER_ADDR,
// MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, ...), prefixes each line the
// workers print with their rank, and when one worker fails it stops the
// others and reports which rank failed and why. `ember launch` is a thin
// command over Run.
package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultPort is MASTER_PORT on several machines when none is given (as
// torchrun's default, so that every node agrees on it).
const DefaultPort = 29500

// DefaultGrace is how long stopping workers get between SIGTERM and
// SIGKILL when Config.Grace is zero.
const DefaultGrace = 10 * time.Second

// Config describes this machine's share of a job: NProcPerNode workers
// running Program with Args.
type Config struct {
	NProcPerNode int // workers on this machine (≥ 1)
	NNodes       int // machines in the job (0 means 1)
	NodeRank     int // this machine's index, 0 ≤ NodeRank < NNodes
	// MasterAddr is the address of the machine whose rank 0 serves the
	// rendezvous store: 127.0.0.1 by default on one machine, required on
	// several.
	MasterAddr string
	// MasterPort is its port: 0 picks a free one on one machine, and means
	// DefaultPort on several.
	MasterPort int

	Program string   // the worker's program, found on PATH as exec.Command does
	Args    []string // its arguments

	// Env is the environment the workers start from (nil: os.Environ()).
	// The contract's variables replace any of the same name in it.
	Env []string
	// Stdout and Stderr receive the workers' output lines, each prefixed
	// with "[rankN]: " (nil: os.Stdout, os.Stderr). Launch's own messages
	// go to Stderr too, prefixed with "ember launch: ".
	Stdout, Stderr io.Writer
	// Grace is the time between SIGTERM and SIGKILL when workers are
	// stopped (0: DefaultGrace).
	Grace time.Duration
	// Signals, when not nil, delivers the signals (SIGINT, SIGTERM) launch
	// itself receives: the first is forwarded to every worker, which then
	// get Grace to exit; a second kills them at once.
	Signals <-chan os.Signal
	// Token authenticates the job's processes to each other (the store and
	// the ring check it): EMBER_DIST_TOKEN of Env when set (give every
	// machine the same), else, on one machine, a random one per job. On
	// several machines without one, the job runs unauthenticated.
	Token string
}

// WorkerError reports the worker whose failure ended the job.
type WorkerError struct {
	Rank, LocalRank int
	PID             int
	ExitCode        int            // the exit code; -1 when a signal ended it
	Signal          syscall.Signal // the signal that ended it; 0 when it exited
	After           time.Duration  // how long it ran
	StderrTail      []string       // the last lines it wrote to stderr
}

// Status says which worker ended how, in one line.
func (e *WorkerError) Status() string {
	how := fmt.Sprintf("exited with code %d", e.ExitCode)
	if e.Signal != 0 {
		how = fmt.Sprintf("was killed by signal %d (%v)", int(e.Signal), e.Signal)
	}
	return fmt.Sprintf("rank %d (local rank %d, pid %d) %s after %v", e.Rank, e.LocalRank, e.PID, how, e.After.Round(time.Millisecond))
}

// Error is Status and the last lines the worker wrote to stderr.
func (e *WorkerError) Error() string {
	var b strings.Builder
	b.WriteString(e.Status())
	if len(e.StderrTail) > 0 {
		fmt.Fprintf(&b, "; the last lines of its stderr:")
		for _, l := range e.StderrTail {
			b.WriteString("\n  ")
			b.WriteString(l)
		}
	} else {
		b.WriteString("; it wrote nothing to stderr")
	}
	return b.String()
}

// ExitStatus is the status launch exits with: the worker's exit code, or
// 128+signal as a shell reports a killed process.
func (e *WorkerError) ExitStatus() int {
	if e.Signal != 0 {
		return 128 + int(e.Signal)
	}
	return e.ExitCode
}

// SignalError reports a job stopped because launch received a signal.
type SignalError struct{ Signal os.Signal }

func (e *SignalError) Error() string {
	return fmt.Sprintf("stopped the workers on %v", e.Signal)
}

// ExitStatus is 128+signal (130 for SIGINT).
func (e *SignalError) ExitStatus() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

type worker struct {
	rank, local int
	cmd         *exec.Cmd
	out, errw   *prefixWriter
	tail        *tailWriter
	start       time.Time
	exited      bool
}

type exit struct {
	w   *worker
	err error
}

// Run starts the workers and waits for them. It returns nil when every
// worker exits with status 0; a *WorkerError naming the first worker that
// failed (after stopping the others: SIGTERM to each worker's process
// group, SIGKILL after Grace); a *SignalError when a signal from Signals
// stopped the job; ctx's error when ctx was cancelled (which stops the
// workers the same way); or an error saying why the job could not start.
// Every worker runs in its own process group, and whatever a worker leaves
// running in it is killed when the worker exits, so nothing outlives Run.
func Run(ctx context.Context, c Config) error {
	c, err := c.withDefaults()
	if err != nil {
		return err
	}
	stdout, stderr := &lockedWriter{w: c.Stdout}, &lockedWriter{w: c.Stderr}
	if c.Stdout == c.Stderr {
		stderr = stdout
	}
	logf := func(format string, a ...any) {
		stderr.Write([]byte("ember launch: " + fmt.Sprintf(format, a...) + "\n"))
	}

	base := c.Env
	if base == nil {
		base = os.Environ()
	}
	exits := make(chan exit, c.NProcPerNode)
	var workers []*worker
	var waiters sync.WaitGroup
	for local := 0; local < c.NProcPerNode; local++ {
		w := &worker{rank: c.NodeRank*c.NProcPerNode + local, local: local, tail: newTailWriter(20)}
		w.out = &prefixWriter{w: stdout, prefix: fmt.Sprintf("[rank%d]: ", w.rank)}
		w.errw = &prefixWriter{w: stderr, prefix: w.out.prefix}
		w.cmd = exec.Command(c.Program, c.Args...)
		w.cmd.Env = mergeEnv(base, c.WorkerEnv(local))
		w.cmd.Stdout = w.out
		w.cmd.Stderr = io.MultiWriter(w.errw, w.tail)
		w.cmd.SysProcAttr = sysProcAttr()
		// Output pipes a leftover grandchild holds open must not keep Wait
		// (and so Run) waiting once the worker itself is gone.
		w.cmd.WaitDelay = time.Second
		if err := w.cmd.Start(); err != nil {
			for _, o := range workers {
				killGroup(o.cmd.Process.Pid, syscall.SIGKILL)
			}
			waiters.Wait()
			return fmt.Errorf("starting rank %d: %w", w.rank, err)
		}
		w.start = time.Now()
		workers = append(workers, w)
		waiters.Add(1)
		go func() {
			defer waiters.Done()
			err := w.cmd.Wait()
			w.out.flush()
			w.errw.flush()
			exits <- exit{w, err}
		}()
	}

	var (
		cause    error
		stopping bool
		killNow  <-chan time.Time
		done     = ctx.Done()
		signals  = c.Signals
	)
	stop := func(sig syscall.Signal) {
		stopping = true
		for _, w := range workers {
			if !w.exited {
				killGroup(w.cmd.Process.Pid, sig)
			}
		}
		if sig != syscall.SIGKILL {
			killNow = time.After(c.Grace)
		} else {
			killNow = nil
		}
	}
	for running := len(workers); running > 0; {
		select {
		case e := <-exits:
			running--
			e.w.exited = true
			killGroup(e.w.cmd.Process.Pid, syscall.SIGKILL) // what it left behind
			if werr := e.w.failure(e.err); werr != nil && !stopping {
				cause = werr
				if running > 0 {
					logf("%s: stopping the other %d worker(s) (SIGTERM, SIGKILL after %v)", werr.Status(), running, c.Grace)
				}
				stop(syscall.SIGTERM)
			}
		case s := <-signals:
			sig, _ := s.(syscall.Signal)
			if sig == 0 {
				sig = syscall.SIGTERM
			}
			if stopping {
				logf("%v again: killing the workers", s)
				stop(syscall.SIGKILL)
				signals = nil
				continue
			}
			cause = &SignalError{s}
			logf("got %v: forwarding it to the workers (SIGKILL after %v; again to kill now)", s, c.Grace)
			stop(sig)
		case <-done:
			done = nil
			if !stopping {
				cause = ctx.Err()
				stop(syscall.SIGTERM)
			}
		case <-killNow:
			killNow = nil
			logf("workers still running after %v: killing them", c.Grace)
			stop(syscall.SIGKILL)
		}
	}
	waiters.Wait()
	return cause
}

// failure turns a worker's Wait error into a *WorkerError (nil when it
// exited with status 0).
func (w *worker) failure(err error) *WorkerError {
	if err == nil {
		return nil
	}
	e := &WorkerError{Rank: w.rank, LocalRank: w.local, PID: w.cmd.Process.Pid, ExitCode: -1,
		After: time.Since(w.start), StderrTail: w.tail.lines()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal()
		} else {
			e.ExitCode = ee.ExitCode()
		}
		return e
	}
	// Wait failed for another reason (its output could not be copied):
	// the worker's status is unknown, and the job cannot be trusted.
	e.StderrTail = append(e.StderrTail, "ember launch: "+err.Error())
	return e
}

func (c Config) withDefaults() (Config, error) {
	if c.NNodes == 0 {
		c.NNodes = 1
	}
	switch {
	case c.NProcPerNode < 1:
		return c, fmt.Errorf("--nproc-per-node %d: need at least 1 worker", c.NProcPerNode)
	case c.NNodes < 1:
		return c, fmt.Errorf("--nnodes %d: need at least 1 machine", c.NNodes)
	case c.NodeRank < 0 || c.NodeRank >= c.NNodes:
		return c, fmt.Errorf("--node-rank %d: want 0 ≤ node rank < %d (--nnodes)", c.NodeRank, c.NNodes)
	case c.MasterPort < 0 || c.MasterPort > 65535:
		return c, fmt.Errorf("--master-port %d: not a TCP port", c.MasterPort)
	case c.Grace < 0:
		return c, fmt.Errorf("--grace %v: want 0 or more", c.Grace)
	case c.Program == "":
		return c, errors.New("no program to launch (ember launch [flags] -- program [args])")
	}
	if c.MasterAddr == "" {
		if c.NNodes > 1 {
			return c, fmt.Errorf("--master-addr is needed with --nnodes %d (the address of node 0, which every node can reach)", c.NNodes)
		}
		c.MasterAddr = "127.0.0.1"
	}
	if c.MasterPort == 0 {
		if c.NNodes > 1 {
			c.MasterPort = DefaultPort
		} else {
			p, err := FreePort(c.MasterAddr)
			if err != nil {
				return c, err
			}
			c.MasterPort = p
		}
	}
	if c.Token == "" {
		c.Token = envValue(c.Env, "EMBER_DIST_TOKEN")
	}
	if c.Token == "" && c.NNodes == 1 {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return c, fmt.Errorf("making the job's token: %w", err)
		}
		c.Token = hex.EncodeToString(b[:])
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	return c, nil
}
