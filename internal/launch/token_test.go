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
