package expr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// printer builds the prefix form of an expression: "sub(add(mul(x,y),…))".
func printer(e *Expr) Builder[string] {
	return Builder[string]{
		Num: func(x float64) string { return fmt.Sprint(x) },
		Var: func(k int) string { return e.Vars()[k] },
		Op: func(name string, args []string) (string, error) {
			return name + "(" + strings.Join(args, ",") + ")", nil
		},
	}
}

// Build visits operands before their operation, left to right, with the
// operators' names, functions as written, and pi as a number.
func TestBuild(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"x*y + sin(x^2) - -3", "sub(add(mul(x,y),sin(pow(x,2))),neg(3))"},
		{"2^3^x / ln(y)", "div(pow(2,pow(3,x)),ln(y))"},
		{"max(a, b, 1) + pow(a, pi) + logsumexp(b)", "add(add(max(a,b,1),pow(a,3.141592653589793)),logsumexp(b))"},
		{"x", "x"},
		{"4", "4"},
	} {
		e, err := Parse(c.src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Build(e, printer(e))
		if err != nil || got != c.want {
			t.Errorf("Build(%q) = %q, %v; want %q", c.src, got, err, c.want)
		}
	}
}

// The first error of Op ends the build and is returned.
func TestBuildError(t *testing.T) {
	e, err := Parse("sin(x) + cos(tan(x))")
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	var seen []string
	b := printer(e)
	b.Op = func(name string, args []string) (string, error) {
		seen = append(seen, name)
		if name == "tan" {
			return "", stop
		}
		return name, nil
	}
	if _, err := Build(e, b); err != stop || strings.Join(seen, " ") != "sin tan" {
		t.Fatalf("err %v after %v, want stop after sin tan", err, seen)
	}
}
