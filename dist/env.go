package dist

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultMasterPort is the store's port when MASTER_PORT is unset (torch's).
const DefaultMasterPort = 29500

// EnvError reports an environment variable of the launch contract that is
// missing or malformed.
type EnvError struct {
	Var   string // the variable, e.g. "WORLD_SIZE"
	Value string // its value ("" when missing)
	Msg   string // what is wrong
}

func (e *EnvError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("dist: environment: %s %s", e.Var, e.Msg)
	}
	return fmt.Sprintf("dist: environment: %s=%q %s", e.Var, e.Value, e.Msg)
}

// ErrNoLaunchEnv is returned by EnvOptions when neither torchrun's nor
// SLURM's variables are set.
var ErrNoLaunchEnv = errors.New("dist: environment: neither RANK and WORLD_SIZE (torchrun, ember launch) nor SLURM_PROCID and SLURM_NTASKS (srun) are set; start the program with `ember launch`, torchrun or srun, or pass Options{Rank, WorldSize, ...}")

// EnvOptions reads the launch contract from the environment:
//
//   - torchrun and `ember launch`: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
//     MASTER_PORT;
//   - when RANK and WORLD_SIZE are both absent, SLURM's srun: SLURM_PROCID,
//     SLURM_NTASKS, SLURM_LOCALID, and the first host of
//     SLURM_STEP_NODELIST (else SLURM_NODELIST, SLURM_JOB_NODELIST) as the
//     master address unless MASTER_ADDR is set.
//
// MASTER_PORT defaults to 29500; MASTER_ADDR to 127.0.0.1 for a world of
// size 1; LOCAL_RANK (SLURM_LOCALID) to the rank. EMBER_DIST_TIMEOUT, a Go
// duration such as "90s", sets Timeout. A variable that is missing or
// malformed is an *EnvError naming it; no variable at all is
// ErrNoLaunchEnv.
func EnvOptions() (Options, error) { return OptionsFromEnv(os.LookupEnv) }

// OptionsFromEnv is EnvOptions reading variables through lookup (os.LookupEnv
// for the process's own environment), so that a launcher can check an
// environment it is about to hand to a worker.
func OptionsFromEnv(lookup func(key string) (string, bool)) (Options, error) {
	get := func(k string) (string, bool) {
		v, ok := lookup(k)
		v = strings.TrimSpace(v)
		return v, ok && v != ""
	}
	o := Options{Rank: -1, LocalRank: -1}
	_, hasRank := get("RANK")
	_, hasWorld := get("WORLD_SIZE")
	_, hasProcID := get("SLURM_PROCID")
	_, hasNTasks := get("SLURM_NTASKS")
	var rankVar, worldVar, localVar string
	slurm := false
	switch {
	case hasRank || hasWorld:
		rankVar, worldVar, localVar = "RANK", "WORLD_SIZE", "LOCAL_RANK"
	case hasProcID || hasNTasks:
		rankVar, worldVar, localVar = "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"
		slurm = true
	default:
		return o, ErrNoLaunchEnv
	}
	intVar := func(name string, min int) (int, error) {
		v, ok := get(name)
		if !ok {
			return 0, &EnvError{Var: name, Msg: "is not set"}
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, &EnvError{Var: name, Value: v, Msg: "is not an integer"}
		}
		if n < min {
			return 0, &EnvError{Var: name, Value: v, Msg: fmt.Sprintf("must be at least %d", min)}
		}
		return n, nil
	}
	var err error
	if o.WorldSize, err = intVar(worldVar, 1); err != nil {
		return o, err
	}
	if o.Rank, err = intVar(rankVar, 0); err != nil {
		return o, err
	}
	if o.Rank >= o.WorldSize {
		v, _ := get(rankVar)
		return o, &EnvError{Var: rankVar, Value: v, Msg: fmt.Sprintf("is not below %s=%d", worldVar, o.WorldSize)}
	}
	o.LocalRank = o.Rank
	if _, ok := get(localVar); ok {
		if o.LocalRank, err = intVar(localVar, 0); err != nil {
			return o, err
		}
	}
	if o.MasterAddr, _ = get("MASTER_ADDR"); o.MasterAddr == "" {
		switch {
		case slurm:
			var list, name string
			for _, name = range []string{"SLURM_STEP_NODELIST", "SLURM_NODELIST", "SLURM_JOB_NODELIST"} {
				if list, _ = get(name); list != "" {
					break
				}
			}
			if list == "" {
				return o, &EnvError{Var: "MASTER_ADDR", Msg: "is not set, nor is SLURM_NODELIST to take the first host from"}
			}
			hosts, err := ExpandNodeList(list)
			if err != nil {
				return o, &EnvError{Var: name, Value: list, Msg: err.Error()}
			}
			o.MasterAddr = hosts[0]
		case o.WorldSize == 1:
			o.MasterAddr = "127.0.0.1"
		default:
			return o, &EnvError{Var: "MASTER_ADDR", Msg: "is not set (the address of the machine running rank 0)"}
		}
	}
	if o.MasterPort, err = envPort(get); err != nil {
		return o, err
	}
	if o.Timeout, err = envTimeout(get); err != nil {
		return o, err
	}
	return o, nil
}

func envPort(get func(string) (string, bool)) (int, error) {
	v, ok := get("MASTER_PORT")
	if !ok {
		return DefaultMasterPort, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 1 || p > 65535 {
		return 0, &EnvError{Var: "MASTER_PORT", Value: v, Msg: "is not a port number (1-65535)"}
	}
	return p, nil
}

func envTimeout(get func(string) (string, bool)) (time.Duration, error) {
	v, ok := get("EMBER_DIST_TIMEOUT")
	if !ok {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, &EnvError{Var: "EMBER_DIST_TIMEOUT", Value: v, Msg: `is not a positive Go duration (e.g. "90s", "10m")`}
	}
	return d, nil
}

// maxHosts bounds ExpandNodeList, so a typo such as node[1-99999999] fails
// instead of exhausting memory.
const maxHosts = 1 << 16

// ExpandNodeList expands SLURM's compressed host list, e.g.
// "node[01-03,07],gpu5" → node01 node02 node03 node07 gpu5. Ranges keep the
// zero padding of their lower bound; several bracket groups in one name
// ("rack[1-2]-n[1-2]") expand to every combination, in order.
func ExpandNodeList(s string) ([]string, error) {
	var out []string
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("is an empty host list")
	}
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '[':
				depth++
				if depth > 1 {
					return nil, fmt.Errorf("has a nested '[' at offset %d", i)
				}
				continue
			case ']':
				depth--
				if depth < 0 {
					return nil, fmt.Errorf("has an unmatched ']' at offset %d", i)
				}
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		} else if depth != 0 {
			return nil, errors.New("has an unclosed '['")
		}
		hosts, err := expandHost(strings.TrimSpace(s[start:i]), maxHosts-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, hosts...)
		start = i + 1
	}
	return out, nil
}

// expandHost expands one name with bracket groups (no top-level commas).
func expandHost(h string, limit int) ([]string, error) {
	if h == "" {
		return nil, errors.New("has an empty host name")
	}
	out := []string{""}
	for h != "" {
		i := strings.IndexByte(h, '[')
		if i < 0 {
			for k := range out {
				out[k] += h
			}
			break
		}
		j := strings.IndexByte(h, ']')
		lit, set := h[:i], h[i+1:j]
		h = h[j+1:]
		var parts []string
		for _, r := range strings.Split(set, ",") {
			nums, err := expandRange(r, limit)
			if err != nil {
				return nil, err
			}
			parts = append(parts, nums...)
			if len(parts) > limit {
				return nil, fmt.Errorf("expands to more than %d hosts", maxHosts)
			}
		}
		if len(out)*len(parts) > limit {
			return nil, fmt.Errorf("expands to more than %d hosts", maxHosts)
		}
		next := make([]string, 0, len(out)*len(parts))
		for _, o := range out {
			for _, p := range parts {
				next = append(next, o+lit+p)
			}
		}
		out = next
	}
	return out, nil
}

// expandRange expands "7" or "01-03".
func expandRange(r string, limit int) ([]string, error) {
	r = strings.TrimSpace(r)
	lo, hi, isRange := strings.Cut(r, "-")
	digits := func(s string) bool {
		if s == "" || len(s) > 9 {
			return false
		}
		for _, c := range s {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	if !digits(lo) || isRange && !digits(hi) {
		return nil, fmt.Errorf("has a malformed range %q in brackets (want N or N-M)", r)
	}
	a, _ := strconv.Atoi(lo)
	b := a
	if isRange {
		b, _ = strconv.Atoi(hi)
	}
	if b < a {
		return nil, fmt.Errorf("has a decreasing range %q", r)
	}
	if b-a+1 > limit {
		return nil, fmt.Errorf("expands to more than %d hosts", maxHosts)
	}
	out := make([]string, 0, b-a+1)
	for n := a; n <= b; n++ {
		out = append(out, fmt.Sprintf("%0*d", len(lo), n))
	}
	return out, nil
}
