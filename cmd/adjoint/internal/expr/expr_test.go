package expr

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestEval(t *testing.T) {
	x, y := 0.5, 4.0
	for _, c := range []struct {
		src  string
		want float64
	}{
		{"x*y + sin(x*x) - log(y)", x*y + math.Sin(x*x) - math.Log(y)},
		{"1 + 2*3", 7},
		{"(1 + 2)*3", 9},
		{"2^3^2", 512},
		{"2**3**2", 512},
		{"-x^2", -0.25},
		{"-2^-1", -0.5},
		{"--x", 0.5},
		{"+x", 0.5},
		{"x/y/2", x / y / 2},
		{"10 - 4 - 3", 3},
		{"2.5e-1 + 1E1 + .5", 10.75},
		{"pi + e", math.Pi + math.E},
		{"atan2(y, x) + pow(x, 2) + hypot(3, 4)", math.Atan2(y, x) + 0.25 + 5},
		{"min(x, y, -1) + max(x, y)", -1 + 4},
		{"sum(x, y, 1) + logsumexp(x, y)", 5.5 + math.Log(math.Exp(x)+math.Exp(y))},
		{"sqrt(y) + cbrt(8) + abs(-x) + exp(0) + ln(1) + log2(8) + log10(100)", 2 + 2 + 0.5 + 1 + 0 + 3 + 2},
		{"sigmoid(0) + softplus(0) + log1pexp(0) + erf(0) + expm1(0) + log1p(0)", 0.5 + 2*math.Ln2},
		{"tanh(0) + sinh(0) + cosh(0) + asin(0) + acos(1) + atan(0) + tan(0) + cos(0)", 2},
	} {
		e, err := Parse(c.src)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		vals := map[string]float64{"x": x, "y": y}
		in := make([]float64, len(e.Vars()))
		for k, n := range e.Vars() {
			in[k] = vals[n]
		}
		if got := e.EvalFloat(in); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%q = %g, want %g", c.src, got, c.want)
		}
	}
	e, _ := Parse("y*x + y + z")
	if v := strings.Join(e.Vars(), ","); v != "y,x,z" || e.String() != "y*x + y + z" {
		t.Errorf("Vars = %s, String = %q", v, e.String())
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, c := range []struct {
		src  string
		col  int
		frag string
	}{
		{"", 1, "empty expression"},
		{"x +", 4, "unexpected end of expression"},
		{"x + )", 5, `unexpected ")"`},
		{"(x + y", 7, `expected ")" to close the "(" at column 1`},
		{"x y", 3, `unexpected "y" after a complete expression`},
		{"foo(x)", 1, `unknown function "foo"`},
		{"sin(x, y)", 1, "sin takes 1 argument, got 2"},
		{"atan2(x)", 1, "atan2 takes 2 arguments, got 1"},
		{"max()", 1, "max takes at least 1 argument, got 0"},
		{"sin x", 1, "function sin needs parentheses"},
		{"x $ y", 3, `unexpected character '$'`},
		{"1..2", 1, `bad number "1..2"`},
		{"pow(x; 2)", 6, `unexpected character ';'`},
		{"hypot(x y)", 9, `expected "," or ")" in the call of hypot`},
		{"αβ * ) 1", 6, `unexpected ")"`},
	} {
		_, err := Parse(c.src)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want a *SyntaxError", c.src, err)
			continue
		}
		if se.Col != c.col || !strings.Contains(se.Msg, c.frag) {
			t.Errorf("%q: %v; want column %d and %q", c.src, err, c.col, c.frag)
		}
	}
}

func TestFunctionsListed(t *testing.T) {
	if n := len(Functions()); n != 99 {
		t.Errorf("%d functions, want 99", n)
	}
}
