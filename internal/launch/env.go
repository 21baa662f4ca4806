package launch

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Variables is the environment contract, in the order WorkerEnv sets them:
// torchrun's names, which dist.InitProcessGroup reads.
var Variables = []string{
	"MASTER_ADDR",      // the address of rank 0's rendezvous store
	"MASTER_PORT",      // its port
	"RANK",             // the worker's rank in the job, 0 ≤ RANK < WORLD_SIZE
	"WORLD_SIZE",       // workers in the job: NNodes × NProcPerNode
	"LOCAL_RANK",       // the worker's rank on its machine (its GPU: cuda:LOCAL_RANK)
	"LOCAL_WORLD_SIZE", // workers on its machine: NProcPerNode
	"GROUP_RANK",       // the machine's rank (torchrun's name)
	"GROUP_WORLD_SIZE", // machines in the job
	"NODE_RANK",        // GROUP_RANK again, under the name Lightning and older launchers use
	"EMBER_DIST_TOKEN", // the job's token, when it has one (see Config.Token)
}

// WorkerEnv returns the contract's variables (NAME=value) for the worker
// with local rank local, once Run has filled in the defaults (MasterAddr,
// MasterPort, NNodes). When the base environment does not set GOMAXPROCS
// and several workers share the machine, it adds GOMAXPROCS=NumCPU/
// NProcPerNode (at least 1) so that their CPU kernels do not oversubscribe
// the cores (as torchrun sets OMP_NUM_THREADS).
func (c Config) WorkerEnv(local int) []string {
	nnodes := max(c.NNodes, 1)
	env := []string{
		"MASTER_ADDR=" + c.MasterAddr,
		"MASTER_PORT=" + strconv.Itoa(c.MasterPort),
		"RANK=" + strconv.Itoa(c.NodeRank*c.NProcPerNode+local),
		"WORLD_SIZE=" + strconv.Itoa(nnodes*c.NProcPerNode),
		"LOCAL_RANK=" + strconv.Itoa(local),
		"LOCAL_WORLD_SIZE=" + strconv.Itoa(c.NProcPerNode),
		"GROUP_RANK=" + strconv.Itoa(c.NodeRank),
		"GROUP_WORLD_SIZE=" + strconv.Itoa(nnodes),
		"NODE_RANK=" + strconv.Itoa(c.NodeRank),
	}
	if c.Token != "" {
		env = append(env, "EMBER_DIST_TOKEN="+c.Token)
	}
	if c.NProcPerNode > 1 && !hasVar(c.Env, "GOMAXPROCS") {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(max(1, runtime.NumCPU()/c.NProcPerNode)))
	}
	return env
}

// hasVar reports whether env (nil: the process's environment, as for
// Config.Env) sets name.
func hasVar(env []string, name string) bool {
	if env == nil {
		_, ok := os.LookupEnv(name)
		return ok
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}

// envValue returns name's value in env (nil: the process's environment).
func envValue(env []string, name string) string {
	if env == nil {
		return os.Getenv(name)
	}
	v := ""
	for _, kv := range env {
		if rest, ok := strings.CutPrefix(kv, name+"="); ok {
			v = rest
		}
	}
	return v
}

// mergeEnv returns base with the variables of set replacing those of the
// same name.
func mergeEnv(base, set []string) []string {
	names := make(map[string]bool, len(set))
	for _, kv := range set {
		names[kv[:strings.IndexByte(kv, '=')]] = true
	}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		if i := strings.IndexByte(kv, '='); i > 0 && names[kv[:i]] {
			continue
		}
		out = append(out, kv)
	}
	return append(out, set...)
}

// FreePort returns a TCP port that was free on addr a moment ago (the
// kernel's choice for port 0). Another process may take it before rank 0
// listens on it; on one machine that is rare, and rank 0 then fails to
// start its store with an error naming the port.
func FreePort(addr string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, fmt.Errorf("finding a free port on %s for MASTER_PORT: %w", addr, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
