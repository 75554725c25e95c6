package expr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/scalar"
)

// FuzzParse: any input either fails with a *SyntaxError or parses into an
// expression that evaluates, on plain floats and on a tape, without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"x*y + sin(x*x) - log(y)", "x^2**3", "-(-x)", "atan2(x, y) + hypot(x,y)", "max(x,", "2e", "((x)", "x y", "pi*e", "normal_lpdf(x | y, -1)", "categorical_logit_lpmf(x, y)", "inc_beta(x, y, x) + log_sum_exp(x)", "poisson_lpmf(x | y) + modified_bessel_first_kind(x, y)"} {
		f.Add(s)
	}
	// a long sum of many variables, the shape that made adjoint grad
	// quadratic on the old code
	var long strings.Builder
	for i := range 300 {
		if i > 0 {
			long.WriteString(" + ")
		}
		fmt.Fprintf(&long, "x%d*x%d", i, i)
	}
	f.Add(long.String())
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("Parse(%q): error %T %v, want *SyntaxError", src, err, err)
			}
			return
		}
		n := len(e.Vars())
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 0.5 + float64(i)
		}
		e.EvalFloat(xs)
		var tp scalar.Tape
		y := e.Eval(tp.Inputs(xs).Vars(nil))
		if y.Tape() == &tp {
			tp.Backward(y)
		}
	})
}
