package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/adjointgo/adjoint/cmd/adjoint/internal/expr"
	"github.com/adjointgo/adjoint/scalar"
)

func init() {
	register(command{
		name:    "grad",
		summary: "value and gradient (and Hessian) of an expression at a point",
		run:     runGrad,
	})
}

const gradUsage = `usage: adjoint grad [--json] [--hessian] EXPRESSION NAME=VALUE...

Evaluates EXPRESSION at the given values with the scalar tape and prints its
value, its partial derivative with respect to each variable, and a check of
the gradient against central differences (the worst error relative to
max(1, |∂f/∂x|); of 64 evenly spaced partials when there are more).

Expressions: + - * / with the usual precedence, unary minus, ^ or ** for
powers (right-associative), parentheses, numbers, the constants pi and e,
and the functions sin cos tan asin acos atan sinh cosh tanh exp expm1 log
(ln) log1p log2 log10 sqrt cbrt abs sigmoid softplus erf (one argument),
atan2 pow hypot (two), min max sum logsumexp (one or more).

Flags:
  --json     print {"value": …, "grad": {…}, "fd_max_rel_err": …,
             "fd_checked": N} (and
             "hessian": [[…]…] with --hessian); non-finite numbers are null
  --hessian  also print the Hessian (forward-over-reverse)

Example:
  adjoint grad 'x*y + sin(x*x) - log(y)' x=0.5 y=4
`

// maxFDChecks is the number of partial derivatives adjoint grad checks
// against central differences when there are more variables.
const maxFDChecks = 64

// gradResult is what adjoint grad computes.
type gradResult struct {
	names     []string // in the order of the assignments
	value     float64
	grad      []float64
	maxRel    float64     // the worst relative error of the checked partials
	fdChecked int         // how many partials were checked (all, up to maxFDChecks)
	evals     int         // evaluations of the expression (for the tests of linearity)
	hessian   [][]float64 // nil unless asked
}

func runGrad(args []string, stdout, stderr io.Writer) int {
	var asJSON, hessian bool
	src, assigns, code, ok := exprArgs("grad", gradUsage, args, map[string]*bool{"json": &asJSON, "hessian": &hessian}, stdout, stderr)
	if !ok {
		return code
	}
	res, err := grad(src, assigns, hessian)
	if err != nil {
		return exprError("grad", src, err, stderr)
	}
	if asJSON {
		writeJSON(stdout, res)
	} else {
		writeText(stdout, src, res)
	}
	return exitOK
}

// exprArgs reads the arguments of a command taking an expression and
// NAME=VALUE assignments (grad, graph): the boolean flags named in flags
// (as --name or -name, before the expression or "--"), -h, the expression
// and the assignments. ok is false when the command is done (help printed,
// or a usage error) with exit status code.
func exprArgs(cmd, usage string, args []string, flags map[string]*bool, stdout, stderr io.Writer) (src string, assigns []string, code int, ok bool) {
	haveSrc, flagsDone := false, false
	for _, a := range args {
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		switch {
		case !flagsDone && a == "--":
			flagsDone = true
		case !flagsDone && a != name && flags[name] != nil:
			*flags[name] = true
		case !flagsDone && (a == "-h" || a == "--help" || a == "-help"):
			fmt.Fprint(stdout, usage)
			return "", nil, exitOK, false
		case !haveSrc:
			if !flagsDone && strings.HasPrefix(a, "--") {
				fmt.Fprintf(stderr, "adjoint %s: unknown flag %s (adjoint %s -h lists the flags; -- before an expression that starts with -)\n", cmd, a, cmd)
				return "", nil, exitUsage, false
			}
			src, haveSrc = a, true
		default:
			assigns = append(assigns, a)
		}
	}
	if !haveSrc {
		fmt.Fprintf(stderr, "adjoint %s: no expression given (adjoint %s -h shows the syntax and an example)\n", cmd, cmd)
		return "", nil, exitUsage, false
	}
	return src, assigns, 0, true
}

// exprError reports a bad expression or assignment, pointing at the column
// of a syntax error, and returns the usage exit status.
func exprError(cmd, src string, err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "adjoint %s: %v\n", cmd, err)
	var se *expr.SyntaxError
	if errors.As(err, &se) {
		fmt.Fprintf(stderr, "  %s\n  %s^\n", src, strings.Repeat(" ", se.Col-1))
	}
	return exitUsage
}

// grad parses src and the NAME=VALUE assignments and computes the result.
func grad(src string, assigns []string, hessian bool) (*gradResult, error) {
	e, err := expr.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("bad expression: %w", err)
	}
	given := map[string]float64{}
	var names []string
	for _, a := range assigns {
		name, val, ok := strings.Cut(a, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("expected NAME=VALUE, got %q", a)
		}
		if _, dup := given[name]; dup {
			return nil, fmt.Errorf("variable %s is given twice", name)
		}
		val = strings.TrimSpace(val)
		if val == "" {
			return nil, fmt.Errorf("missing value for variable %s (write %s=NUMBER)", name, name)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("value of variable %s: %q is not a number", name, val)
		}
		if !isFinite(v) {
			return nil, fmt.Errorf("value of variable %s: %s is not finite (want a finite number)", name, val)
		}
		given[name] = v
		names = append(names, name)
	}
	used := map[string]bool{}
	var missing []string
	for _, n := range e.Vars() {
		used[n] = true
		if _, ok := given[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no value for variable %s: pass %s=NUMBER", strings.Join(missing, ", "), missing[0])
	}
	for _, n := range names {
		if !used[n] {
			return nil, fmt.Errorf("unknown variable %s: it does not appear in the expression (its variables: %s)", n, strings.Join(e.Vars(), ", "))
		}
	}

	// f takes the variables in the order of the assignments.
	index := make(map[string]int, len(names))
	for j, n := range names {
		index[n] = j
	}
	perm := make([]int, len(e.Vars())) // expression var k is assignment perm[k]
	for k, n := range e.Vars() {
		perm[k] = index[n]
	}
	res := &gradResult{names: names}
	f := func(x []scalar.Var) scalar.Var {
		res.evals++
		v := make([]scalar.Var, len(perm))
		for k, j := range perm {
			v[k] = x[j]
		}
		return e.Eval(v)
	}
	x := make([]float64, len(names))
	for j, n := range names {
		x[j] = given[n]
	}
	res.grad, res.value = scalar.Gradient(nil, f, x)

	// Central differences with the step that balances truncation and
	// rounding error, ε^(1/3)·max(1, |x|), for every partial up to
	// maxFDChecks variables and for maxFDChecks evenly spaced ones beyond:
	// each check evaluates the whole expression twice, so checking all of
	// n variables made the command quadratic (10⁴ variables: 41 s), while
	// the parse and the gradient are linear in the expression's size.
	plain := func(x []float64) float64 {
		v := make([]scalar.Var, len(x))
		for k, f := range x {
			v[k] = scalar.Const(f)
		}
		return f(v).Value()
	}
	xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
	checks := min(len(x), maxFDChecks)
	for c := range checks {
		j := c * len(x) / checks
		h := 6e-6 * math.Max(1, math.Abs(x[j]))
		xp[j] += h
		xm[j] -= h
		fd := (plain(xp) - plain(xm)) / (xp[j] - xm[j])
		xp[j], xm[j] = x[j], x[j]
		res.fdChecked++
		rel := math.Abs(res.grad[j]-fd) / math.Max(1, math.Abs(res.grad[j]))
		if rel > res.maxRel || rel != rel {
			res.maxRel = rel
		}
	}
	if hessian && len(x) > 0 {
		h := scalar.Hessian(nil, f, x)
		res.hessian = make([][]float64, len(x))
		for i := range x {
			res.hessian[i] = make([]float64, len(x))
			for j := range x {
				res.hessian[i][j] = h.At(i, j)
			}
		}
	}
	return res, nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func writeText(w io.Writer, src string, r *gradResult) {
	// A label "∂f/∂x" takes 4 + len(name) columns (∂ is one column).
	width := len("value")
	for _, n := range r.names {
		width = max(width, 4+len(n))
	}
	fmt.Fprintf(w, "f = %s\n", src)
	fmt.Fprintf(w, "%-*s  %s\n", width, "value", fmtFloat(r.value))
	for j, n := range r.names {
		label := "∂f/∂" + n
		fmt.Fprintf(w, "%s%s  %s\n", label, strings.Repeat(" ", width-4-len(n)), fmtFloat(r.grad[j]))
	}
	fmt.Fprintf(w, "central differences: worst relative error %.2g", r.maxRel)
	if r.fdChecked < len(r.names) {
		fmt.Fprintf(w, " (%d of the %d partials checked, evenly spaced)", r.fdChecked, len(r.names))
	}
	fmt.Fprintln(w)
	if r.hessian != nil {
		fmt.Fprintf(w, "Hessian (rows and columns %s):\n", strings.Join(r.names, ", "))
		for _, row := range r.hessian {
			s := make([]string, len(row))
			for j, v := range row {
				s[j] = fmt.Sprintf("%14.8g", v)
			}
			fmt.Fprintf(w, "  %s\n", strings.Join(s, " "))
		}
	}
}

// jsonNum formats v as a JSON number, or null if it is not finite.
func jsonNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "null"
	}
	return fmtFloat(v)
}

func writeJSON(w io.Writer, r *gradResult) {
	var b strings.Builder
	fmt.Fprintf(&b, `{"value": %s, "grad": {`, jsonNum(r.value))
	for j, n := range r.names {
		if j > 0 {
			b.WriteString(", ")
		}
		key, _ := json.Marshal(n)
		fmt.Fprintf(&b, "%s: %s", key, jsonNum(r.grad[j]))
	}
	fmt.Fprintf(&b, `}, "fd_max_rel_err": %s, "fd_checked": %d`, jsonNum(r.maxRel), r.fdChecked)
	if r.hessian != nil {
		b.WriteString(`, "hessian": [`)
		for i, row := range r.hessian {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("[")
			for j, v := range row {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(jsonNum(v))
			}
			b.WriteString("]")
		}
		b.WriteString("]")
	}
	b.WriteString("}\n")
	io.WriteString(w, b.String())
}
