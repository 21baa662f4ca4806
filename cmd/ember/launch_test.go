package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&errOut)
	defer rootCmd.SetOut(nil)
	defer rootCmd.SetErr(nil)
	if c, _, ferr := rootCmd.Find(args); ferr == nil {
		resetFlags(t, c)
		defer resetFlags(t, c) // for the tests that follow
	}
	rootCmd.SetArgs(args)
	err = rootCmd.Execute()
	return out.String(), errOut.String(), err
}

func TestLaunchCommand(t *testing.T) {
	// Flags after the program's name are the program's (sh's -c here).
	// Rank 1 fails only after rank 0 has printed (rank 1's failure stops
	// rank 0, which could otherwise be killed before its echo).
	done := filepath.Join(t.TempDir(), "rank0-printed")
	out, errOut, err := runCLI(t, "launch", "--nproc-per-node", "2", "sh", "-c",
		`echo "$RANK/$WORLD_SIZE local $LOCAL_RANK/$LOCAL_WORLD_SIZE at $MASTER_ADDR"; [ "$RANK" = 0 ] && touch `+done+`; [ "$RANK" = 1 ] && { while [ ! -e `+done+` ]; do sleep 0.01; done; echo "rank 1 gives up" >&2; exit 5; }; exit 0`)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 5 {
		t.Fatalf("error %v, want exit status 5\nstderr:\n%s", err, errOut)
	}
	for _, s := range []string{"rank 1 (local rank 1", "exited with code 5", "rank 1 gives up"} {
		if !strings.Contains(ee.msg, s) {
			t.Errorf("message %q lacks %q", ee.msg, s)
		}
	}
	for _, s := range []string{"[rank0]: 0/2 local 0/2 at 127.0.0.1\n", "[rank1]: 1/2 local 1/2 at 127.0.0.1\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	if !strings.Contains(errOut, "[rank1]: rank 1 gives up\n") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if _, _, err := runCLI(t, "launch", "--nproc-per-node", "2", "--", "true"); err != nil {
		t.Errorf("two workers that succeed: %v", err)
	}
	// torchrun's PET_ variables stand in for flags not given (Kubeflow sets them).
	t.Setenv("PET_NPROC_PER_NODE", "3")
	t.Setenv("PET_MASTER_PORT", "29517")
	if out, _, err := runCLI(t, "launch", "--master-port", "29518", "--", "sh", "-c", `echo "$WORLD_SIZE $MASTER_PORT"`); err != nil || strings.Count(out, "3 29518\n") != 3 {
		t.Errorf("with PET_NPROC_PER_NODE=3 and --master-port: %v\n%s", err, out)
	}
	t.Setenv("PET_NNODES", "1:4")
	if _, _, err := runCLI(t, "launch", "--", "true"); err == nil || !strings.Contains(err.Error(), `PET_NNODES="1:4"`) {
		t.Errorf("PET_NNODES=1:4: %v", err)
	}
	t.Setenv("PET_NNODES", "1")
	for _, bad := range [][]string{
		{"launch", "--nproc-per-node", "two", "--", "true"},
		{"launch", "--nnodes", "2", "--", "true"},
		{"launch", "--nproc-per-node", "2"},
		{"launch", "--nnodes", "0", "--", "true"},
		{"launch", "--grace", "-1s", "--", "true"},
	} {
		if _, _, err := runCLI(t, bad...); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
