package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/emberml/ember/bench"
	"github.com/spf13/cobra"
)

var benchFlags struct {
	json, quick bool
	threads     int
	cases       string
	cpuprofile  string
}

var benchCmd = &cobra.Command{
	Use:   "bench",
	Short: "Time ember's CPU kernels and models (GEMM, conv, reductions, ResNet-18, a CNN training step)",
	Long: `bench times a fixed set of CPU cases: each is set up, warmed up (up to 3 runs,
stopping once 1 s has passed), then timed over N runs (N so that a case takes
about 2 s; --quick: one warm-up and one timed run); the
median is reported with its GFLOP/s or GB/s. bench/torch_bench.py times the
same cases with PyTorch and bench/compare.sh joins the two.

Cases: ` + caseNames(),
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		f := benchFlags
		var names []string
		if f.cases != "" {
			names = strings.Split(f.cases, ",")
		}
		cases, err := bench.Select(names)
		if err != nil {
			return err
		}
		if f.threads < 0 {
			return fmt.Errorf("--threads %d: want 0 (GOMAXPROCS) or more", f.threads)
		}
		threads := bench.SetThreads(f.threads)
		o := bench.Options{Quick: f.quick}
		var status *statusLine
		if !f.json {
			o.Progress = cmd.ErrOrStderr()
			if isTerminal(cmd.OutOrStdout()) && isTerminal(cmd.ErrOrStderr()) {
				// the table follows on the same screen: show each case's
				// line in place until then, not a first copy of the table
				status = &statusLine{w: cmd.ErrOrStderr()}
				o.Progress = status
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "ember bench: %d threads, %s/%s\n", threads, runtime.GOOS, runtime.GOARCH)
		}
		if f.cpuprofile != "" {
			pf, err := os.Create(f.cpuprofile)
			if err != nil {
				return err
			}
			defer pf.Close()
			if err := pprof.StartCPUProfile(pf); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		rs := bench.RunAll(cases, o)
		if f.json {
			host, _ := os.Hostname()
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(benchReport{Framework: "ember", Threads: threads, Quick: f.quick, Host: host,
				GoVersion: runtime.Version(), Date: time.Now().UTC().Format(time.RFC3339), Results: rs})
		}
		if status != nil {
			status.clear()
		}
		fmt.Fprintln(cmd.OutOrStdout())
		return bench.WriteTable(cmd.OutOrStdout(), rs)
	},
}

// benchReport is ember bench --json's output; torch_bench.py writes the same
// layout.
type benchReport struct {
	Framework string         `json:"framework"`
	Threads   int            `json:"threads"`
	Quick     bool           `json:"quick"`
	Host      string         `json:"host,omitempty"`
	GoVersion string         `json:"go_version"`
	Date      string         `json:"date"`
	Results   []bench.Result `json:"results"`
}

func caseNames() string {
	cs := bench.Cases()
	n := make([]string, len(cs))
	for i, c := range cs {
		n[i] = c.Name
	}
	return strings.Join(n, ", ")
}

func init() {
	fl := benchCmd.Flags()
	fl.BoolVar(&benchFlags.json, "json", false, "print JSON instead of a table")
	fl.BoolVar(&benchFlags.quick, "quick", false, "one timed run per case")
	fl.IntVar(&benchFlags.threads, "threads", 0, "threads for ember's kernels and GOMAXPROCS (0: GOMAXPROCS)")
	fl.StringVar(&benchFlags.cases, "cases", "", "comma-separated cases to run (default: all)")
	fl.StringVar(&benchFlags.cpuprofile, "cpuprofile", "", "write a CPU profile of the runs to this file (go tool pprof)")
	rootCmd.AddCommand(benchCmd)
}

// statusLine shows each line written to it in place of the previous one
// (a terminal's carriage return and erase-line).
type statusLine struct{ w io.Writer }

func (s *statusLine) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	if _, err := fmt.Fprint(s.w, "\r\x1b[K"+line); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *statusLine) clear() { fmt.Fprint(s.w, "\r\x1b[K") }
