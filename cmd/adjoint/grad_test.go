package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func runGradArgs(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = dispatch(append([]string{"grad"}, args...), &o, &e)
	return o.String(), e.String(), code
}

func TestGradText(t *testing.T) {
	out, errOut, code := runGradArgs("x*y + sin(x*x) - log(y)", "x=0.5", "y=4")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"f = x*y + sin(x*x) - log(y)\n",
		"value  0.8611095981346322\n",
		"∂f/∂x  4.968912421710645\n", // 4 + cos 0.25
		"∂f/∂y  0.25\n",
		"central differences: worst relative error ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := 4 + math.Cos(0.25); got != 4.968912421710645 {
		t.Errorf("closed form %v differs from the printed value", got)
	}
}

func TestGradJSON(t *testing.T) {
	out, errOut, code := runGradArgs("--json", "--hessian", "x*y + x", "x=3", "y=4")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var r struct {
		Value   float64            `json:"value"`
		Grad    map[string]float64 `json:"grad"`
		FD      float64            `json:"fd_max_rel_err"`
		Hessian [][]float64        `json:"hessian"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if r.Value != 15 || r.Grad["x"] != 5 || r.Grad["y"] != 3 || len(r.Grad) != 2 {
		t.Errorf("got %+v, want value 15, grad x 5, y 3", r)
	}
	if r.FD < 0 || r.FD > 1e-8 {
		t.Errorf("fd_max_rel_err = %g", r.FD)
	}
	if len(r.Hessian) != 2 || r.Hessian[0][0] != 0 || r.Hessian[0][1] != 1 || r.Hessian[1][0] != 1 || r.Hessian[1][1] != 0 {
		t.Errorf("hessian %v, want [[0 1] [1 0]]", r.Hessian)
	}
	if !strings.HasPrefix(out, `{"value": 15, "grad": {"x": 5, "y": 3}, "fd_max_rel_err": `) {
		t.Errorf("key order or format: %s", out)
	}
	// Non-finite numbers are null, keeping the output valid JSON.
	out, _, _ = runGradArgs("--json", "sqrt(x)", "x=0")
	if !strings.Contains(out, `"grad": {"x": null}`) || json.Unmarshal([]byte(out), &r) != nil {
		t.Errorf("sqrt at 0: %s", out)
	}
}

func TestGradHessianText(t *testing.T) {
	// Rosenbrock at (1, 1): [[802, -400], [-400, 200]].
	out, _, code := runGradArgs("--hessian", "100*(y - x^2)**2 + (1 - x)^2", "x=1", "y=1")
	if code != 0 || !strings.Contains(out, "Hessian (rows and columns x, y):") ||
		!strings.Contains(out, "802") || !strings.Contains(out, "-400") || !strings.Contains(out, "200") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

func TestGradErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"x*y + sin(x*x) - log(y", "x=0.5", "y=4"}, []string{"column 23", "\n  x*y + sin(x*x) - log(y\n                        ^\n"}},
		{[]string{"x + * y", "x=1", "y=2"}, []string{"column 5", `unexpected "*"`, "\n      ^\n"}},
		{[]string{"x*z", "x=1"}, []string{"no value for variable z"}},
		{[]string{"x", "x="}, []string{"missing value for variable x"}},
		{[]string{"x", "x=abc"}, []string{`value of variable x: "abc" is not a number`}},
		{[]string{"x", "x=1", "w=2"}, []string{"unknown variable w"}},
		{[]string{"x", "x=1", "x=2"}, []string{"variable x is given twice"}},
		{[]string{"x", "1"}, []string{`expected NAME=VALUE, got "1"`}},
		{[]string{"foo(x)", "x=1"}, []string{`unknown function "foo"`, "column 1"}},
		{[]string{}, []string{"no expression given", "adjoint grad -h"}},
		{[]string{"--jsn", "x"}, []string{"unknown flag --jsn"}},
	} {
		out, errOut, code := runGradArgs(c.args...)
		if code != 2 || out != "" {
			t.Errorf("%q: exit %d, stdout %q", c.args, code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%q: stderr %q lacks %q", c.args, errOut, w)
			}
		}
	}
	out, _, code := runGradArgs("-h")
	if code != 0 || !strings.Contains(out, "usage: adjoint grad") {
		t.Errorf("-h: exit %d, %q", code, out)
	}
	// An expression may start with a minus sign, and "--" ends the flags.
	out, _, code = runGradArgs("-x", "x=2")
	if code != 0 || !strings.Contains(out, "∂f/∂x  -1\n") {
		t.Errorf("-x: exit %d, %q", code, out)
	}
	out, _, code = runGradArgs("--", "--x", "x=2")
	if code != 0 || !strings.Contains(out, "value  2\n") {
		t.Errorf("-- --x: exit %d, %q", code, out)
	}
}

// TestGradLinear: adjoint grad evaluates the expression a bounded number
// of times whatever the number of variables (the gradient once, the
// central-difference check on at most maxFDChecks partials), so its time
// is linear in the expression's size. On the old code every partial was
// checked, two evaluations each, and the variables' order was matched in
// a double loop: 2,000 variables took 1.2 s and 10,000 took 41 s.
func TestGradLinear(t *testing.T) {
	for _, n := range []int{3, 2000, 10_000} {
		var src strings.Builder
		assigns := make([]string, n)
		for i := range n {
			if i > 0 {
				src.WriteString(" + ")
			}
			name := "x" + strconv.Itoa(i)
			src.WriteString(name + "*" + name)
			assigns[n-1-i] = name + "=" + strconv.Itoa(i%7+1) // reversed: the order must be matched
		}
		start := time.Now()
		res, err := grad(src.String(), assigns, false)
		el := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d variables: %d evaluations, %v", n, res.evals, el)
		if want := 1 + 2*min(n, maxFDChecks); res.evals != want {
			t.Errorf("%d variables: %d evaluations of the expression, want %d", n, res.evals, want)
		}
		if want := min(n, maxFDChecks); res.fdChecked != want {
			t.Errorf("%d variables: %d partials checked, want %d", n, res.fdChecked, want)
		}
		for j, name := range res.names {
			i, _ := strconv.Atoi(name[1:])
			if res.grad[j] != 2*float64(i%7+1) {
				t.Fatalf("%d variables: ∂f/∂%s = %v, want %v", n, name, res.grad[j], 2*float64(i%7+1))
			}
		}
		if res.maxRel > 1e-6 {
			t.Errorf("%d variables: central differences disagree by %g", n, res.maxRel)
		}
		if el > 20*time.Second {
			t.Errorf("%d variables took %v (a generous bound on a shared machine; linear time is well under a second)", n, el)
		}
	}
}
