package launch

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/dist"
)

// distWorker joins the process group the launch contract describes and
// all-reduces its rank: every rank must print the same sum.
func distWorker() int {
	if _, err := dist.EnvOptions(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	g, err := dist.InitProcessGroup("cpu", dist.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer g.Close()
	t := ember.FromSlice([]float32{float32(g.Rank()), 1}, nil)
	if err := g.AllReduce(t, dist.Sum); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("rank %d of %d, local %d: sums %v\n", g.Rank(), g.WorldSize(), g.LocalRank(), t.Float32s())
	return 0
}

// TestContractMatchesDist checks that the variables WorkerEnv sets are what
// dist.OptionsFromEnv reads back, rank by rank.
func TestContractMatchesDist(t *testing.T) {
	c := Config{NProcPerNode: 3, NNodes: 2, NodeRank: 1, MasterAddr: "10.1.2.3", MasterPort: 29400, Env: []string{}}
	for local := 0; local < 3; local++ {
		env := map[string]string{}
		for _, kv := range c.WorkerEnv(local) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		o, err := dist.OptionsFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			t.Fatalf("local rank %d: %v", local, err)
		}
		if o.Rank != 3+local || o.WorldSize != 6 || o.LocalRank != local || o.MasterAddr != "10.1.2.3" || o.MasterPort != 29400 {
			t.Errorf("local rank %d: dist reads %+v", local, o)
		}
	}
}

// TestTwoNodesOnLoopback runs a job of two "machines" with two workers each
// on 127.0.0.1: two Runs with --nnodes 2 and node ranks 0 and 1, whose
// workers rendezvous through rank 0's store and all-reduce.
func TestTwoNodesOnLoopback(t *testing.T) {
	port, err := FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	outs := make([]*lines, 2)
	errs := make([]error, 2)
	for node := range 2 {
		c := helperConfig(t, "dist", 2)
		c.NNodes, c.NodeRank, c.MasterAddr, c.MasterPort = 2, node, "127.0.0.1", port
		outs[node] = newLines("", 0)
		c.Stdout, c.Stderr = outs[node], outs[node]
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[node] = run(t, context.Background(), c)
		}()
	}
	wg.Wait()
	for node := range 2 {
		if errs[node] != nil {
			t.Fatalf("node %d: %v\n%s", node, errs[node], outs[node])
		}
		for local := range 2 {
			r := 2*node + local
			want := fmt.Sprintf("[rank%d]: rank %d of 4, local %d: sums [6 4]\n", r, r, local)
			if !strings.Contains(outs[node].String(), want) {
				t.Errorf("node %d lacks %q:\n%s", node, want, outs[node])
			}
		}
	}
}
