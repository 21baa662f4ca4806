package launch

import (
	"strings"
	"testing"
)

// On one machine each job gets a random token of its own, handed to every
// worker; a token in the environment is passed on as it is; several
// machines without one run without.
func TestJobToken(t *testing.T) {
	base := Config{NProcPerNode: 2, Program: "true", Env: []string{"PATH=/bin"}}
	a, err := base.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := base.withDefaults()
	if len(a.Token) != 32 || a.Token == b.Token {
		t.Errorf("tokens %q and %q: want two random 32-digit ones", a.Token, b.Token)
	}
	for local := 0; local < 2; local++ {
		if env := strings.Join(a.WorkerEnv(local), " "); !strings.Contains(env, "EMBER_DIST_TOKEN="+a.Token) {
			t.Errorf("worker %d's environment lacks the token: %s", local, env)
		}
	}
	set := base
	set.Env = []string{"EMBER_DIST_TOKEN=shared"}
	if c, _ := set.withDefaults(); c.Token != "shared" {
		t.Errorf("token %q, want the environment's", c.Token)
	}
	multi := Config{NProcPerNode: 1, NNodes: 2, MasterAddr: "10.0.0.1", Program: "true", Env: []string{}}
	if c, _ := multi.withDefaults(); c.Token != "" {
		t.Errorf("token %q on two machines without one, want none", c.Token)
	}
}

// The panic line that names the failure stays in the tail behind a long
// goroutine trace.
func TestTailKeepsPanicLine(t *testing.T) {
	w := newTailWriter(5)
	w.Write([]byte("step 1\npanic: dist: all_reduce: rank 3 did not take part within 15s\n\ngoroutine 1 [running]:\n"))
	for i := 0; i < 40; i++ {
		w.Write([]byte("main.main()\n\t/src/main.go:12 +0x1d\n"))
	}
	got := w.lines()
	if len(got) != 5 || got[0] != "panic: dist: all_reduce: rank 3 did not take part within 15s" || got[1] != "..." || got[4] != "\t/src/main.go:12 +0x1d" {
		t.Errorf("tail = %q", got)
	}
	short := newTailWriter(5)
	short.Write([]byte("panic: boom\nline\n"))
	if got := short.lines(); len(got) != 2 || got[0] != "panic: boom" {
		t.Errorf("short tail = %q", got)
	}
}
