package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/emberml/ember/internal/smi"
)

// openSmiSource opens the machine ember smi reads; tests replace it.
var openSmiSource = func(fake bool) (smi.Source, error) {
	if fake {
		return smi.Fake{}, nil
	}
	return smi.OpenNVML()
}

func init() { rootCmd.AddCommand(newSmiCmd()) }

func newSmiCmd() *cobra.Command {
	var (
		asJSON    bool
		query     string
		format    string
		ids       string
		watch     time.Duration
		loopSecs  int
		fake      bool
		list      bool
		helpQuery bool
	)
	cmd := &cobra.Command{
		Use:   "smi",
		Short: "Show the NVIDIA GPUs and their processes, like nvidia-smi",
		Long: `smi reads the machine through NVML (libnvidia-ml.so.1, part of the NVIDIA
driver) and prints what nvidia-smi prints: the driver and CUDA versions, each
GPU's state and the processes using it. --json prints the same as JSON;
--query-gpu prints chosen fields as CSV with nvidia-smi's field names.

Without a driver it prints nvidia-smi's failure message and exits with
NVML's error code (9 for NVML_ERROR_DRIVER_NOT_LOADED).`,
		Example: `  ember smi
  ember smi -i 0,1
  ember smi --query-gpu=name,memory.used,memory.total,utilization.gpu --format=csv,noheader
  ember smi --json
  ember smi --watch 1s`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Check every argument before touching the library.
			var indices []int
			if ids != "" {
				var err error
				if indices, err = smi.ParseIndices(ids); err != nil {
					return err
				}
			}
			var fields []smi.Field
			var csvFormat smi.CSVFormat
			if query != "" {
				if asJSON {
					return errors.New("--json and --query-gpu cannot be used together")
				}
				var err error
				if fields, err = smi.ParseQuery(query); err != nil {
					return err
				}
				if csvFormat, err = smi.ParseFormat(format); err != nil {
					return err
				}
			} else if cmd.Flags().Changed("format") {
				return errors.New("--format applies only with --query-gpu")
			}
			if loopSecs < 0 || watch < 0 {
				return errors.New("--watch and --loop must not be negative")
			}
			if loopSecs > 0 {
				if watch > 0 {
					return errors.New("use --watch or --loop, not both")
				}
				watch = time.Duration(loopSecs) * time.Second
			}

			out := cmd.OutOrStdout()
			if helpQuery {
				for _, fl := range smi.Fields {
					names := fmt.Sprintf("%q", fl.Name)
					for _, a := range fl.Aliases {
						names += fmt.Sprintf(" or %q", a)
					}
					fmt.Fprintf(out, "%s\n%s\n\n", names, fl.Help)
				}
				return nil
			}
			fail := func(w io.Writer, err error) error {
				if asJSON {
					return smiJSONFailure(w, err)
				}
				return smiFailure(w, err)
			}
			src, err := openSmiSource(fake)
			if err != nil {
				return fail(out, err)
			}
			defer src.Close()

			frame := func(w io.Writer) error {
				s, err := src.Snapshot()
				if err != nil {
					return fail(w, err)
				}
				if s, err = s.Select(indices); err != nil {
					return err
				}
				switch {
				case list:
					for _, g := range s.GPUs {
						fmt.Fprintf(w, "GPU %d: %s", g.Index, g.Name)
						if g.UUID != "" {
							fmt.Fprintf(w, " (UUID: %s)", g.UUID)
						}
						fmt.Fprintln(w)
					}
					return nil
				case fields != nil:
					return smi.WriteCSV(w, s, fields, csvFormat)
				case asJSON:
					return smi.WriteJSON(w, s)
				}
				return smi.WriteTable(w, s)
			}
			if watch == 0 {
				return frame(out)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return smi.Watch(ctx, out, watch, smi.IsTerminal(out), frame)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the snapshot as JSON (a failure too: {\"error\": ..., \"exit_code\": ...})")
	f.BoolVarP(&list, "list-gpus", "L", false, "list the GPUs with their UUIDs, one a line")
	f.BoolVar(&helpQuery, "help-query-gpu", false, "list the --query-gpu fields and what they mean")
	f.StringVar(&query, "query-gpu", "", "comma-separated GPU fields to print as CSV (nvidia-smi names: name,memory.used,...)")
	f.StringVar(&format, "format", "csv", "output format for --query-gpu: csv[,noheader][,nounits]")
	f.StringVarP(&ids, "id", "i", "", "only these GPUs: an index or a comma-separated list (0,2)")
	f.DurationVar(&watch, "watch", 0, "redraw every interval (1s, 500ms) until Ctrl-C")
	f.IntVarP(&loopSecs, "loop", "l", 0, "like nvidia-smi -l: redraw every N seconds until Ctrl-C")
	f.BoolVar(&fake, "fake", false, "show a canned two-GPU machine instead of this one (for demos and tests)")
	_ = f.MarkHidden("fake")
	return cmd
}

// smiJSONFailure is smiFailure for --json: a JSON object with the message
// and the exit status, on stdout, so a script parsing the output can.
func smiJSONFailure(w io.Writer, err error) error {
	msg, code := smi.Diagnose(err)
	b, _ := json.Marshal(struct {
		Error    string `json:"error"`
		ExitCode int    `json:"exit_code"`
	}{strings.TrimSpace(msg), code})
	fmt.Fprintln(w, string(b))
	return &exitError{code: code}
}

// smiFailure prints NVML's failure as nvidia-smi would (on stdout) and
// returns the exit status that goes with it.
func smiFailure(w io.Writer, err error) error {
	msg, code := smi.Diagnose(err)
	fmt.Fprintln(w, msg)
	return &exitError{code: code}
}
