package bench

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// TestBothSidesHaveTheCases: every case of Cases has a twin in
// torch_bench.py's CASES with the same unit, and the other way round,
// but for the Go-only reference rows, so that compare.sh's table has no
// hole on either side.
func TestBothSidesHaveTheCases(t *testing.T) {
	src, err := os.ReadFile("torch_bench.py")
	if err != nil {
		t.Fatal(err)
	}
	py := map[string]string{}
	for _, m := range regexp.MustCompile(`\("([A-Za-z0-9_]+)", "(FLOP|B)"`).FindAllStringSubmatch(string(src), -1) {
		py[m[1]] = m[2]
	}
	if !regexp.MustCompile(`\(f"sgemm_\{n\}", "FLOP", sgemm\(n\)\) for n in \(256, 512, 1024, 2048\)`).Match(src) {
		t.Fatal("torch_bench.py's sgemm cases are not the expected comprehension; update this test")
	}
	for _, n := range []string{"256", "512", "1024", "2048"} {
		py["sgemm_"+n] = "FLOP"
	}
	goOnly := []string{"gonum_sgemm_1024", "hgemm_1024"}
	seen := map[string]bool{}
	for _, c := range Cases() {
		seen[c.Name] = true
		unit, ok := py[c.Name]
		switch {
		case slices.Contains(goOnly, c.Name):
			if ok {
				t.Errorf("%s is listed as Go-only but torch_bench.py has it", c.Name)
			}
		case !ok:
			t.Errorf("%s has no case in torch_bench.py", c.Name)
		case unit != string(c.Unit):
			t.Errorf("%s: unit %q here, %q in torch_bench.py", c.Name, c.Unit, unit)
		}
	}
	for name := range py {
		if !seen[name] {
			t.Errorf("torch_bench.py's %s has no ember case", name)
		}
	}
}
