package dist

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestOptionsFromEnv(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want Options
		err  string // substring of the error; "" for none
	}{
		{name: "torchrun",
			env:  map[string]string{"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "MASTER_ADDR": "10.0.0.5", "MASTER_PORT": "1234"},
			want: Options{Rank: 3, WorldSize: 8, LocalRank: 1, MasterAddr: "10.0.0.5", MasterPort: 1234}},
		{name: "default port, local rank from rank, timeout",
			env:  map[string]string{"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "host", "EMBER_DIST_TIMEOUT": "90s"},
			want: Options{Rank: 1, WorldSize: 2, LocalRank: 1, MasterAddr: "host", MasterPort: 29500, Timeout: 90 * time.Second}},
		{name: "world of one needs no address",
			env:  map[string]string{"RANK": "0", "WORLD_SIZE": "1"},
			want: Options{Rank: 0, WorldSize: 1, LocalRank: 0, MasterAddr: "127.0.0.1", MasterPort: 29500}},
		{name: "slurm",
			env:  map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "16", "SLURM_LOCALID": "1", "SLURM_NODELIST": "node[01-03,07],gpu5"},
			want: Options{Rank: 5, WorldSize: 16, LocalRank: 1, MasterAddr: "node01", MasterPort: 29500}},
		{name: "slurm step node list first, MASTER_PORT kept",
			env:  map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_LOCALID": "0", "SLURM_NODELIST": "a[1-9]", "SLURM_STEP_NODELIST": "b[3-4]", "MASTER_PORT": "4000"},
			want: Options{Rank: 0, WorldSize: 4, LocalRank: 0, MasterAddr: "b3", MasterPort: 4000}},
		{name: "slurm with MASTER_ADDR set",
			env:  map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_JOB_NODELIST": "x1", "MASTER_ADDR": "10.1.1.1"},
			want: Options{Rank: 1, WorldSize: 2, LocalRank: 1, MasterAddr: "10.1.1.1", MasterPort: 29500}},
		{name: "torchrun wins over slurm",
			env:  map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "m", "SLURM_PROCID": "7", "SLURM_NTASKS": "9"},
			want: Options{Rank: 0, WorldSize: 2, LocalRank: 0, MasterAddr: "m", MasterPort: 29500}},
		{name: "nothing", env: map[string]string{}, err: "neither RANK and WORLD_SIZE"},
		{name: "rank without world", env: map[string]string{"RANK": "0"}, err: "WORLD_SIZE is not set"},
		{name: "world without rank", env: map[string]string{"WORLD_SIZE": "2", "MASTER_ADDR": "m"}, err: "RANK is not set"},
		{name: "rank not a number", env: map[string]string{"RANK": "one", "WORLD_SIZE": "2"}, err: `RANK="one" is not an integer`},
		{name: "rank too large", env: map[string]string{"RANK": "2", "WORLD_SIZE": "2", "MASTER_ADDR": "m"}, err: `RANK="2" is not below WORLD_SIZE=2`},
		{name: "negative rank", env: map[string]string{"RANK": "-1", "WORLD_SIZE": "2"}, err: `RANK="-1" must be at least 0`},
		{name: "world zero", env: map[string]string{"RANK": "0", "WORLD_SIZE": "0"}, err: `WORLD_SIZE="0" must be at least 1`},
		{name: "bad local rank", env: map[string]string{"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "x", "MASTER_ADDR": "m"}, err: `LOCAL_RANK="x"`},
		{name: "no master", env: map[string]string{"RANK": "0", "WORLD_SIZE": "2"}, err: "MASTER_ADDR is not set"},
		{name: "bad port", env: map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "m", "MASTER_PORT": "70000"}, err: `MASTER_PORT="70000" is not a port number`},
		{name: "bad timeout", env: map[string]string{"RANK": "0", "WORLD_SIZE": "1", "EMBER_DIST_TIMEOUT": "30"}, err: `EMBER_DIST_TIMEOUT="30"`},
		{name: "slurm without ntasks", env: map[string]string{"SLURM_PROCID": "0"}, err: "SLURM_NTASKS is not set"},
		{name: "slurm without node list", env: map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "2"}, err: "nor is SLURM_NODELIST"},
		{name: "slurm bad node list", env: map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_NODELIST": "n[3-1]"}, err: `SLURM_NODELIST="n[3-1]" has a decreasing range`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := OptionsFromEnv(lookupIn(c.env))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error = %v; want one containing %q", err, c.err)
				}
				var ee *EnvError
				if !errors.As(err, &ee) && !errors.Is(err, ErrNoLaunchEnv) {
					t.Errorf("error %v is neither an *EnvError nor ErrNoLaunchEnv", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestExpandNodeList(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "node1", want: []string{"node1"}},
		{in: "node[01-03,07],gpu5", want: []string{"node01", "node02", "node03", "node07", "gpu5"}},
		{in: "a,b , c", want: []string{"a", "b", "c"}},
		{in: "n[8-11]", want: []string{"n8", "n9", "n10", "n11"}},
		{in: "n[08-11]", want: []string{"n08", "n09", "n10", "n11"}},
		{in: "rack[1-2]-n[1,3]", want: []string{"rack1-n1", "rack1-n3", "rack2-n1", "rack2-n3"}},
		{in: "x[1]y", want: []string{"x1y"}},
		{in: "[1-2]", want: []string{"1", "2"}},
		{in: "", err: "empty host list"},
		{in: "a,,b", err: "empty host name"},
		{in: "n[1-2", err: "unclosed"},
		{in: "n1-2]", err: "unmatched ']'"},
		{in: "n[[1]]", err: "nested"},
		{in: "n[]", err: "malformed range"},
		{in: "n[a-b]", err: "malformed range"},
		{in: "n[1-]", err: "malformed range"},
		{in: "n[5-2]", err: "decreasing"},
		{in: "n[0-99999]", err: "more than 65536 hosts"},
		{in: "a[0-999]b[0-999]", err: "more than 65536 hosts"},
	}
	for _, c := range cases {
		got, err := ExpandNodeList(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ExpandNodeList(%q) = %v, %v; want an error containing %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ExpandNodeList(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// FuzzExpandNodeList: no input panics or expands beyond the limit, and a
// list that parses yields names without brackets or commas, which
// re-parse to themselves.
func FuzzExpandNodeList(f *testing.F) {
	for _, s := range []string{"node[01-03,07],gpu5", "a", "r[1-2]-n[08-10]", "n[", "]", "a,,b", "x[9-1]", "n[0000-0002]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hosts, err := ExpandNodeList(s)
		if err != nil {
			return
		}
		if len(hosts) == 0 || len(hosts) > maxHosts {
			t.Fatalf("%q expanded to %d hosts", s, len(hosts))
		}
		for _, h := range hosts {
			if h == "" || strings.ContainsAny(h, "[],") {
				t.Fatalf("%q expanded to host %q", s, h)
			}
			if strings.TrimSpace(h) != h {
				continue // inner spaces survive; a re-parse would trim them
			}
			again, err := ExpandNodeList(h)
			if err != nil || len(again) != 1 || again[0] != h {
				t.Fatalf("host %q from %q re-parses to %q, %v", h, s, again, err)
			}
		}
	})
}
