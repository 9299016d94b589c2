package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// withTable runs f with table replaced, restoring it afterwards.
func withTable(t *testing.T, tbl []Pass, f func()) {
	t.Helper()
	saved := table
	table = tbl
	defer func() { table = saved }()
	f()
}

func TestRunReportsNonConvergence(t *testing.T) {
	runs := 0
	always := Pass{Name: "always", Doc: "claims a change every time", Run: func(*ir.Graph) (bool, error) { runs++; return true, nil }}
	withTable(t, []Pass{always}, func() {
		st, err := Run(ir.NewGraph("g"), Options{MaxIterations: 3})
		if err != nil {
			t.Fatal(err)
		}
		if st.Converged || st.Iterations != 3 || runs != 3 || st.Changed["always"] != 3 {
			t.Errorf("stats %+v after %d runs; want not converged after 3 iterations", st, runs)
		}
	})
}

func TestRunConvergesAndSelects(t *testing.T) {
	var order []string
	once := func(name string) Pass {
		done := false
		return Pass{Name: name, Run: func(*ir.Graph) (bool, error) {
			order = append(order, name)
			changed := !done
			done = true
			return changed, nil
		}}
	}
	withTable(t, []Pass{once("a"), once("b"), once("c")}, func() {
		st, err := Run(ir.NewGraph("g"), Options{Disable: []string{"b"}})
		if err != nil {
			t.Fatal(err)
		}
		// Iteration 1 runs a and c (both change), iteration 2 finds nothing to do.
		if !st.Converged || st.Iterations != 2 || len(order) != 4 || order[0] != "a" || order[1] != "c" {
			t.Errorf("stats %+v order %v", st, order)
		}
		if _, err := Run(ir.NewGraph("g"), Options{Only: []string{"nope"}}); err == nil {
			t.Error("unknown pass accepted")
		}
	})
}
