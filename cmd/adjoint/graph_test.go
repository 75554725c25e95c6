package main

import (
	"bytes"
	"strings"
	"testing"
)

func runGraphArgs(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = dispatch(append([]string{"graph"}, args...), &o, &e)
	return o.String(), e.String(), code
}

// adjoint graph prints the DOT of the recorded graph: the ops of the
// expression, the variables filled and named, constants not, saved bytes
// per op.
func TestGraph(t *testing.T) {
	out, errOut, code := runGraphArgs("x*y + sin(x) - 2", "x=0.5", "y=4")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := `digraph adjoint {
	node [fontname="Helvetica", fontsize=10];
	edge [fontname="Helvetica", fontsize=9];
	n0 [label="sub\nfloat64 []\nsaved 0 B", shape=box, peripheries=2];
	n1 [label="add\nfloat64 []\nsaved 0 B", shape=box];
	n2 [label="const\nfloat64 []", shape=ellipse];
	n3 [label="mul\nfloat64 []\nsaved 0 B", shape=box];
	n4 [label="sin\nfloat64 []\nsaved 0 B", shape=box];
	n5 [label="x\nfloat64 []", shape=ellipse, style=filled, fillcolor="#9ecae1"];
	n6 [label="y\nfloat64 []", shape=ellipse, style=filled, fillcolor="#9ecae1"];
	n1 -> n0 [label="0"];
	n2 -> n0 [label="1"];
	n3 -> n1 [label="0"];
	n4 -> n1 [label="1"];
	n5 -> n3 [label="0"];
	n6 -> n3 [label="1"];
	n5 -> n4;
}
`
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

// The functions ad has no single op for are built from ops it has.
func TestGraphComposite(t *testing.T) {
	out, errOut, code := runGraphArgs("max(x, y, 1) + min(x, y) + logsumexp(x, y) + sum(x, y, 3) + log10(x) + ln(y)^2", "x=1", "y=2")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, op := range []string{"max", "neg", "concat", "reshape", "exp", "log", "mul_scalar", "pow"} {
		if !strings.Contains(out, "label=\""+op+"\\n") {
			t.Errorf("no %s node in\n%s", op, out)
		}
	}
}

// Usage errors exit 2 with one message: an unknown function names every
// function of the expression that ad lacks; a syntax error points at its
// column; variables are checked as by adjoint grad.
func TestGraphErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tan(x) + erf(x) * tan(x)", "x=1"}, "package ad has no op for erf, tan (the graph can show the functions abs cos exp"},
		{[]string{"x +", "x=1"}, "column 4"},
		{[]string{"x*y", "x=1"}, "no value for variable y"},
		{[]string{"x", "x=1", "z=2"}, "unknown variable z"},
		{[]string{"x", "x=nan"}, "not a finite number"},
		{[]string{"x", "x=1", "x=2"}, "given twice"},
		{[]string{"x", "x"}, "expected NAME=VALUE"},
		{[]string{}, "no expression given"},
		{[]string{"--dot", "x"}, "unknown flag --dot"},
	} {
		out, errOut, code := runGraphArgs(c.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errOut, c.want)
		}
	}
	if out, _, code := runGraphArgs("-h"); code != 0 || !strings.HasPrefix(out, "usage: adjoint graph") {
		t.Errorf("-h: exit %d, %q", code, out)
	}
}
