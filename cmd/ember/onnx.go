package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emberml/ember"
	"github.com/emberml/ember/npy"
	"github.com/emberml/ember/onnx"
)

func init() { rootCmd.AddCommand(newONNXCmd()) }

func newONNXCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "onnx",
		Short: "Inspect and run ONNX models; run ONNX backend test cases",
		// a misspelt subcommand is an error (exit 1), not the help and 0
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newONNXInfoCmd(), newONNXRunCmd(), newONNXTestCmd())
	return cmd
}

func newONNXInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info MODEL",
		Short: "Print a model's opset, inputs, outputs, op histogram and the ops ember lacks",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := onnx.Inspect(args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "model:    %s\n", args[0])
			fmt.Fprintf(w, "opset:    %d (IR version %d)\n", m.Opset, m.IRVersion)
			if m.Producer != "" {
				fmt.Fprintf(w, "producer: %s\n", m.Producer)
			}
			fmt.Fprintln(w, "inputs:")
			for _, v := range m.Inputs {
				fmt.Fprintf(w, "  %s\n", v)
			}
			fmt.Fprintln(w, "outputs:")
			for _, v := range m.Outputs {
				fmt.Fprintf(w, "  %s\n", v)
			}
			ops := m.Ops()
			names := m.OpTypes()
			sort.SliceStable(names, func(i, j int) bool { return ops[names[i]] > ops[names[j]] })
			total := 0
			for _, k := range names {
				total += ops[k]
			}
			fmt.Fprintf(w, "ops (%d nodes):\n", total)
			for _, k := range names {
				fmt.Fprintf(w, "  %6d  %s\n", ops[k], k)
			}
			lack := map[string]bool{}
			for _, u := range m.Unsupported() {
				lack[u.OpType] = true
			}
			if len(lack) == 0 && (m.Opset < onnx.MinOpset || m.Opset > onnx.MaxOpset) {
				fmt.Fprintf(w, "ember lacks: opset %d (ember runs %d to %d)\n", m.Opset, onnx.MinOpset, onnx.MaxOpset)
				return nil
			}
			if len(lack) == 0 {
				fmt.Fprintln(w, "ember lacks: nothing (every op is supported)")
				return nil
			}
			var l []string
			for k := range lack {
				l = append(l, k)
			}
			sort.Strings(l)
			fmt.Fprintf(w, "ember lacks: %s\n", strings.Join(l, ", "))
			return nil
		},
	}
}

func newONNXRunCmd() *cobra.Command {
	var (
		inputs []string
		device string
		outDir string
	)
	cmd := &cobra.Command{
		Use:   "run MODEL --input NAME=FILE.npy ... [--device D] --output-dir DIR",
		Short: "Run a model on .npy inputs and write one .npy per output",
		Long: `run loads MODEL, feeds each --input NAME=FILE.npy (NumPy's format) to the
graph input NAME, runs it on --device (cpu, cuda, cuda:N) and writes every
output to DIR/NAME.npy (characters other than letters, digits, '.', '-' and
'_' in NAME become '_'). A sequence input takes one --input NAME=FILE.npy
per tensor, in order; a sequence output is written as DIR/NAME_0.npy,
DIR/NAME_1.npy, ..., and an empty optional output writes no file.
NumPy has no bfloat16: a floating .npy fed to a bfloat16 input is rounded
to it, and a bfloat16 output is written as float32 (exactly).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if outDir == "" {
				return fmt.Errorf("onnx run: --output-dir DIR is required")
			}
			dev, err := parseComputeDevice(device)
			if err != nil {
				return err
			}
			m, err := onnx.Load(args[0])
			if err != nil {
				return err
			}
			feed := map[string]*ember.Tensor{}
			seqs := map[string][]*ember.Tensor{}
			for _, in := range inputs {
				name, file, ok := strings.Cut(in, "=")
				if !ok || name == "" || file == "" {
					return fmt.Errorf("onnx run: --input %q is not NAME=FILE.npy", in)
				}
				if _, dup := feed[name]; dup {
					return fmt.Errorf("onnx run: --input %s given twice", name)
				}
				known, isSeq := false, false
				var names []string
				for _, v := range m.Inputs {
					known = known || v.Name == name
					isSeq = isSeq || v.Name == name && v.Kind == "sequence"
					names = append(names, v.Name)
				}
				if !known {
					return fmt.Errorf("onnx run: --input %s: the model has no input %q (its inputs: %s)", in, name, strings.Join(names, ", "))
				}
				t, err := npy.ReadFile(file)
				if err != nil {
					return fmt.Errorf("input %s: %w", name, err)
				}
				for _, v := range m.Inputs {
					if v.Name == name && v.DType == "bfloat16" && t.DType().IsFloat() {
						t = t.Cast(ember.BFloat16)
					}
				}
				if isSeq {
					seqs[name] = append(seqs[name], t.To(dev))
				} else {
					feed[name] = t.To(dev)
				}
			}
			var outs map[string]*ember.Tensor
			var outSeqs map[string][]*ember.Tensor
			var runErr error
			if err := ember.Try(func() { outs, outSeqs, runErr = m.RunSequences(feed, seqs) }); err != nil {
				return err
			}
			if runErr != nil {
				return runErr
			}
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				return err
			}
			write := func(name, file string, t *ember.Tensor) error {
				p := filepath.Join(outDir, file+".npy")
				w := t
				if w.DType() == ember.BFloat16 {
					w = w.Cast(ember.Float32)
				}
				if err := npy.WriteFile(p, w); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %v %v -> %s\n", name, t.DType(), t.Shape(), p)
				return nil
			}
			for _, o := range m.Outputs {
				if t, ok := outs[o.Name]; ok {
					if err := write(o.Name, safeName(o.Name), t); err != nil {
						return err
					}
					continue
				}
				ts, ok := outSeqs[o.Name]
				if !ok {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: an empty optional (no file)\n", o.Name)
					continue
				}
				if len(ts) == 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: an empty sequence (no file)\n", o.Name)
				}
				for i, t := range ts {
					if err := write(fmt.Sprintf("%s[%d]", o.Name, i), fmt.Sprintf("%s_%d", safeName(o.Name), i), t); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "NAME=FILE.npy (repeat for each input, and for each tensor of a sequence input)")
	cmd.Flags().StringVar(&device, "device", "cpu", "device to run on: cpu, cuda, cuda:N")
	cmd.Flags().StringVar(&outDir, "output-dir", "", "folder for the outputs (one NAME.npy each)")
	return cmd
}

func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		return "_" + string(b)
	}
	return string(b)
}

func newONNXTestCmd() *cobra.Command {
	var (
		device     string
		rtol, atol float64
	)
	cmd := &cobra.Command{
		Use:   "test DIR...",
		Short: "Run ONNX backend test cases (folders with model.onnx and test_data_set_*)",
		Long: `test runs each ONNX backend test case found in DIR... (a case folder, or a
folder of cases such as /usr/share/libonnx-testdata/data/node) and prints one
line per case — PASS, FAIL with the worst error, or UNSUPPORTED with the op —
then "N passed, M failed, K unsupported". It exits 1 when a case fails.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dev, err := parseComputeDevice(device)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			var all []onnx.CaseResult
			for _, d := range args {
				cases := onnx.TestCases(d)
				if len(cases) == 0 {
					return fmt.Errorf("onnx test: no test cases (model.onnx) in %s", d)
				}
				for _, c := range cases {
					r := onnx.RunTestCase(c, dev, rtol, atol)
					fmt.Fprintln(w, r)
					all = append(all, r)
				}
			}
			fmt.Fprintln(w, onnx.Summary(all))
			for _, r := range all {
				if r.Status == onnx.Fail {
					return &exitError{code: 1}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&device, "device", "cpu", "device to run on: cpu, cuda, cuda:N")
	cmd.Flags().Float64Var(&rtol, "rtol", onnx.DefaultRTol, "relative tolerance")
	cmd.Flags().Float64Var(&atol, "atol", onnx.DefaultATol, "absolute tolerance")
	return cmd
}
