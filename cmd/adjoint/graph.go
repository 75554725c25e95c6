package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/cmd/adjoint/internal/expr"
	"github.com/adjointgo/adjoint/tensor"
)

func init() {
	register(command{
		name:    "graph",
		summary: "the recorded graph of an expression, for Graphviz (DOT)",
		run:     runGraph,
	})
}

const graphUsage = `usage: adjoint graph EXPRESSION NAME=VALUE...

Builds EXPRESSION on the tensor autograd engine (package ad), each variable
a float64 scalar that requires a gradient, and prints the recorded graph in
the DOT language of Graphviz: one box per op with its output's dtype, shape
and the bytes it saves for the backward pass; the variables (Vars) filled
and named, constants not.
Render it with, for example,

  adjoint graph 'x*y + sin(x*x) - log(y)' x=0.5 y=4 | dot -Tsvg > f.svg

The syntax is that of "adjoint grad". The functions are those package ad
has an op for: sin cos tanh exp log (ln) sqrt abs sigmoid softplus
(log1pexp) and pow; log2 and log10 (as a scaled log); sum, max, min and
logsumexp of one or more arguments (as a reduction over their
concatenation).
`

func runGraph(args []string, stdout, stderr io.Writer) int {
	src, assigns, code, ok := exprArgs("graph", graphUsage, args, nil, stdout, stderr)
	if !ok {
		return code
	}
	y, names, err := graphOf(src, assigns)
	if err != nil {
		return exprError("graph", src, err, stderr)
	}
	if err := ad.WriteDOTOpts(stdout, y, ad.DOTOptions{Names: names}); err != nil {
		fmt.Fprintf(stderr, "adjoint graph: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// graphOf parses src and the NAME=VALUE assignments and builds the
// expression on ad scalar values; names are the variables' names.
func graphOf(src string, assigns []string) (y *ad.Value, names map[*ad.Value]string, err error) {
	e, err := expr.Parse(src)
	if err != nil {
		return nil, nil, fmt.Errorf("bad expression: %w", err)
	}
	if missing := missingOps(e); len(missing) > 0 {
		var have []string
		for _, f := range expr.Functions() {
			if graphOps[f] != nil {
				have = append(have, f)
			}
		}
		slices.Sort(have)
		return nil, nil, fmt.Errorf("package ad has no op for %s (the graph can show the functions %s)",
			strings.Join(missing, ", "), strings.Join(have, " "))
	}
	given := map[string]float64{}
	for _, a := range assigns {
		name, val, ok := strings.Cut(a, "=")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !ok || name == "" {
			return nil, nil, fmt.Errorf("expected NAME=VALUE, got %q", a)
		}
		if _, dup := given[name]; dup {
			return nil, nil, fmt.Errorf("variable %s is given twice", name)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || !isFinite(v) {
			return nil, nil, fmt.Errorf("value of variable %s: %q is not a finite number", name, val)
		}
		if !slices.Contains(e.Vars(), name) {
			return nil, nil, fmt.Errorf("unknown variable %s: it does not appear in the expression (its variables: %s)", name, strings.Join(e.Vars(), ", "))
		}
		given[name] = v
	}
	vars := make([]*ad.Value, len(e.Vars()))
	var missing []string
	for k, n := range e.Vars() {
		v, ok := given[n]
		if !ok {
			missing = append(missing, n)
		}
		vars[k] = ad.Var(tensor.Scalar(tensor.Float64, v))
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("no value for variable %s: pass %s=NUMBER", strings.Join(missing, ", "), missing[0])
	}
	// Every op is in graphOps (missingOps said so); an op refusing its
	// operands would panic with an *ad.Error, which Try returns.
	var buildErr error
	err = ad.Try(func() {
		y, buildErr = expr.Build(e, expr.Builder[*ad.Value]{
			Num: ad.Scalar,
			Var: func(k int) *ad.Value { return vars[k] },
			Op: func(name string, args []*ad.Value) (*ad.Value, error) {
				return graphOps[name](args), nil
			},
		})
	})
	if err == nil {
		err = buildErr
	}
	if err != nil {
		return nil, nil, err
	}
	names = map[*ad.Value]string{}
	for k, n := range e.Vars() {
		names[vars[k]] = n
	}
	return y, names, nil
}

// missingOps returns the functions src calls that graphOps lacks, sorted,
// each once.
func missingOps(e *expr.Expr) []string {
	var missing []string
	expr.Build(e, expr.Builder[struct{}]{
		Num: func(float64) struct{} { return struct{}{} },
		Var: func(int) struct{} { return struct{}{} },
		Op: func(name string, _ []struct{}) (struct{}, error) {
			if graphOps[name] == nil && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			return struct{}{}, nil
		},
	})
	slices.Sort(missing)
	return missing
}

// graphOps builds each operation of an expression with the ops of package
// ad: one op where ad has it, a short composition of ops otherwise.
var graphOps = map[string]func(a []*ad.Value) *ad.Value{
	"neg": func(a []*ad.Value) *ad.Value { return ad.Neg(a[0]) },
	"add": func(a []*ad.Value) *ad.Value { return ad.Add(a[0], a[1]) },
	"sub": func(a []*ad.Value) *ad.Value { return ad.Sub(a[0], a[1]) },
	"mul": func(a []*ad.Value) *ad.Value { return ad.Mul(a[0], a[1]) },
	"div": func(a []*ad.Value) *ad.Value { return ad.Div(a[0], a[1]) },
	"pow": func(a []*ad.Value) *ad.Value { return ad.Pow(a[0], a[1]) },

	"sin":      unaryOp(ad.Sin),
	"cos":      unaryOp(ad.Cos),
	"tanh":     unaryOp(ad.Tanh),
	"exp":      unaryOp(ad.Exp),
	"log":      unaryOp(ad.Log),
	"ln":       unaryOp(ad.Log),
	"sqrt":     unaryOp(ad.Sqrt),
	"abs":      unaryOp(ad.Abs),
	"sigmoid":  unaryOp(ad.Sigmoid),
	"softplus": unaryOp(ad.Softplus),
	"log1pexp": unaryOp(ad.Softplus),
	"log2":     func(a []*ad.Value) *ad.Value { return ad.MulScalar(ad.Log(a[0]), 1/math.Ln2) },
	"log10":    func(a []*ad.Value) *ad.Value { return ad.MulScalar(ad.Log(a[0]), 1/math.Ln10) },

	"sum": func(a []*ad.Value) *ad.Value {
		s := a[0]
		for _, x := range a[1:] {
			s = ad.Add(s, x)
		}
		return s
	},
	"max":       func(a []*ad.Value) *ad.Value { return ad.Max(stacked(a)) },
	"min":       func(a []*ad.Value) *ad.Value { return ad.Neg(ad.Max(ad.Neg(stacked(a)))) },
	"logsumexp": func(a []*ad.Value) *ad.Value { return ad.LogSumExp(stacked(a), ad.Axes(0)) },
}

func unaryOp(f func(*ad.Value) *ad.Value) func([]*ad.Value) *ad.Value {
	return func(a []*ad.Value) *ad.Value { return f(a[0]) }
}

// stacked returns the scalars a as one vector.
func stacked(a []*ad.Value) *ad.Value {
	vs := make([]*ad.Value, len(a))
	for i, x := range a {
		vs[i] = ad.Reshape(x, 1)
	}
	return ad.Concat(0, vs...)
}
