// Package bench measures ember's CPU speed on a fixed set of cases (GEMM,
// convolution, reductions, elementwise ops, ResNet-18 inference and a small
// CNN's training step) that bench/torch_bench.py repeats with PyTorch under
// the same names, so bench/compare.sh can join the two.
//
// Each case is set up once (inputs allocated outside the timing), warmed up
// (up to three runs, stopping once a second has passed), then timed over N
// runs; the reported time is the median. N adapts so a case takes about two
// seconds (Options.Quick: one warm-up and one timed run).
package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Unit says what a case's work count measures.
type Unit string

const (
	// FLOP cases report GFLOP/s (a multiply-add is two FLOPs).
	FLOP Unit = "FLOP"
	// Bytes cases report GB/s (10^9 bytes) of memory the ops read and write.
	Bytes Unit = "B"
)

// RateName is the unit of a rate: "GFLOP/s" or "GB/s".
func (u Unit) RateName() string {
	if u == Bytes {
		return "GB/s"
	}
	return "GFLOP/s"
}

// Case is one benchmark.
type Case struct {
	// Name is the case's name, shared with bench/torch_bench.py.
	Name string
	// Desc says what is measured.
	Desc string
	// Unit is what the run function's count measures.
	Unit Unit
	// Setup allocates the inputs and returns a function that runs the case
	// once and returns its FLOP or byte count. An error means the case
	// cannot run in this build (its Result is then Missing).
	Setup func() (run func() float64, err error)
}

// ErrNotAvailable wraps the reason a case cannot run in this build.
var ErrNotAvailable = errors.New("not available")

// notAvailable returns an error reading "not available: <why>".
func notAvailable(why string) error { return fmt.Errorf("%w: %s", ErrNotAvailable, why) }

// Result is one case's measurement.
type Result struct {
	Name string `json:"name"`
	Desc string `json:"desc,omitempty"`
	Unit Unit   `json:"unit"`
	// Seconds is the median time of one run.
	Seconds float64 `json:"seconds"`
	// Runs is how many timed runs the median is over (after the warm-up).
	Runs int `json:"runs"`
	// Work is the FLOP or byte count of one run.
	Work float64 `json:"work"`
	// Rate is Work/Seconds in GFLOP/s or GB/s.
	Rate float64 `json:"rate"`
	// Min and Max are the fastest and slowest timed runs.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Missing, when set, says why the case did not run ("not available: ...").
	Missing string `json:"missing,omitempty"`
}

// Options controls a run.
type Options struct {
	// Quick times one run per case after the warm-up.
	Quick bool
	// Target is the time each case aims to spend in timed runs (default 2s).
	Target time.Duration
	// MaxRuns caps N (default 1000).
	MaxRuns int
	// Progress, when set, receives one line per case as it finishes.
	Progress io.Writer
}

// Select returns the named cases, in the order given; an empty list selects
// every case. An unknown name is an error listing the known ones.
func Select(names []string) ([]Case, error) {
	all := Cases()
	if len(names) == 0 {
		return all, nil
	}
	byName := map[string]Case{}
	known := make([]string, len(all))
	for i, c := range all {
		byName[c.Name] = c
		known[i] = c.Name
	}
	var out []Case
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		c, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("bench: unknown case %q (known: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, c)
	}
	return out, nil
}

// warmRuns and warmFor bound a case's warm-up: up to warmRuns runs,
// stopping once warmFor has passed (bench/torch_bench.py does the same).
const (
	warmRuns = 3
	warmFor  = time.Second
)

// Runs returns N, the number of timed runs for a case whose last warm-up run
// took warm: enough to fill target, at least 1 and at most maxRuns.
func Runs(warm, target time.Duration, maxRuns int) int {
	if warm <= 0 {
		return maxRuns
	}
	n := int(math.Round(float64(target) / float64(warm)))
	return max(1, min(n, maxRuns))
}

// Measure sets up and times one case.
func Measure(c Case, o Options) Result {
	if o.Target <= 0 {
		o.Target = 2 * time.Second
	}
	if o.MaxRuns <= 0 {
		o.MaxRuns = 1000
	}
	r := Result{Name: c.Name, Desc: c.Desc, Unit: c.Unit}
	run, err := c.Setup()
	if err != nil {
		r.Missing = err.Error()
		return r
	}
	if err := catch(func() {
		// Warm up: up to warmRuns runs, stopping once warmFor has passed
		// (one with Quick). Steady state needs more than one: the first
		// runs of a training step fill the buffer cache and grow the heap.
		var warm time.Duration
		start := time.Now()
		for i := 0; i < warmRuns; i++ {
			t0 := time.Now()
			r.Work = run()
			warm = time.Since(t0)
			if o.Quick || time.Since(start) >= warmFor {
				break
			}
		}
		n := 1
		if !o.Quick {
			n = Runs(warm, o.Target, o.MaxRuns)
		}
		// One collection before the timed runs, none between them: the
		// runs pay for their own garbage as PyTorch's pay for their frees
		// (the CPU backend paces collections by its own allocations), and a
		// collection between runs let the GEMM's pool workers park, so
		// each short product paid for waking a thread.
		runtime.GC()
		times := make([]float64, n)
		for i := range times {
			t := time.Now()
			run()
			times[i] = time.Since(t).Seconds()
		}
		sort.Float64s(times)
		r.Runs = n
		r.Seconds = median(times)
		r.Min, r.Max = times[0], times[n-1]
		if r.Seconds > 0 {
			r.Rate = r.Work / r.Seconds / 1e9
		}
	}); err != nil {
		r.Missing = "failed: " + err.Error()
	}
	return r
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// catch runs f, turning a panic into an error (ember panics on misuse).
func catch(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", p)
			}
		}
	}()
	f()
	return nil
}

// RunAll measures the cases in order.
func RunAll(cases []Case, o Options) []Result {
	out := make([]Result, 0, len(cases))
	for _, c := range cases {
		r := Measure(c, o)
		if o.Progress != nil {
			fmt.Fprintln(o.Progress, FormatLine(r))
		}
		out = append(out, r)
	}
	return out
}

// FormatDuration prints seconds with a unit that keeps 3–4 significant
// digits: 812µs, 12.3ms, 1.234s.
func FormatDuration(s float64) string {
	switch {
	case s < 1e-3:
		return fmt.Sprintf("%.1fµs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.2fms", s*1e3)
	default:
		return fmt.Sprintf("%.3fs", s)
	}
}

// FormatLine is one result as "name  time  rate unit (N runs)".
func FormatLine(r Result) string {
	if r.Missing != "" {
		return fmt.Sprintf("%-20s %s", r.Name, r.Missing)
	}
	return fmt.Sprintf("%-20s %10s %9.2f %-7s (%d runs)", r.Name, FormatDuration(r.Seconds), r.Rate, r.Unit.RateName(), r.Runs)
}

// WriteTable prints the results as an aligned table; a case that did not
// run shows its reason in the last column.
func WriteTable(w io.Writer, rs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "case\ttime\trate\tunit\truns\tnote")
	for _, r := range rs {
		if r.Missing != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t\t\t%s\n", r.Name, r.Missing)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%d\t\n", r.Name, FormatDuration(r.Seconds), r.Rate, r.Unit.RateName(), r.Runs)
	}
	return tw.Flush()
}
