package main

import (
	"bytes"
	"strings"
	"testing"

	"gonum.org/v1/gonum/optimize"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	rep, err := run(&out, 20)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if rep.Newton.Status != optimize.GradientThreshold && rep.Newton.Status != optimize.FunctionConvergence {
		t.Fatalf("Newton stopped with %v\n%s", rep.Newton.Status, out.String())
	}
	if rep.Newton.MajorIterations >= rep.BFGS.MajorIterations {
		t.Fatalf("Newton took %d iterations, BFGS %d\n%s", rep.Newton.MajorIterations, rep.BFGS.MajorIterations, out.String())
	}
	if rep.Newton.HessEvaluations == 0 {
		t.Fatalf("Newton evaluated no Hessian\n%s", out.String())
	}
	for _, s := range []string{"Newton", "BFGS", "scalar.Hessian"} {
		if !strings.Contains(out.String(), s) {
			t.Fatalf("no %q in the output:\n%s", s, out.String())
		}
	}
}

func TestRunRejectsOddN(t *testing.T) {
	if _, err := run(&bytes.Buffer{}, 3); err == nil {
		t.Fatal("run accepted n = 3")
	}
}
