package embertest

import (
	"fmt"
	"testing"

	"github.com/emberml/ember/backend"
)

// testTableFixtures checks that testdata/fixtures/table.json is fresh: every
// op-table row that names a Fixture has PyTorch's cases for each of its
// parameter sets, and a gradient case when it names a grad_fn (run
// testdata/gen_fixtures.py after changing the table).
func testTableFixtures(t *testing.T) {
	cases, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, c := range cases {
		if c.File == "table.json" {
			have[c.Name] = true
		}
	}
	need := func(name string) {
		if !have[name] {
			t.Errorf("table.json has no case %s: run /usr/bin/python3 testdata/gen_fixtures.py", name)
		}
	}
	for op := range backend.NumUnaryOps {
		r := op.Row()
		if r.Fixture == "" {
			continue
		}
		n := max(len(r.Args), 1)
		for k := 0; k < n; k++ {
			sfx := ""
			if n > 1 {
				sfx = fmt.Sprintf("_p%d", k)
			}
			need(r.Name + sfx + "_special")
			if r.GradFn != "" {
				need(r.Name + sfx + "_grad")
			}
		}
	}
	for op := range backend.NumBinaryOps {
		if r := op.Row(); r.Fixture != "" {
			need(r.Name + "_float_neg")
			if r.GradFn != "" {
				need(r.Name + "_grad")
			}
		}
	}
}
