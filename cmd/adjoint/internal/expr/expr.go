// Package expr parses arithmetic expressions over named variables, such as
// "x*y + sin(x^2) - log(y)", and evaluates them on the variables of package
// scalar, so that their derivatives can be taken; Build walks them, to
// evaluate them on anything else. It is the front end of the "adjoint grad"
// and "adjoint graph" commands.
//
// Syntax, loosest binding first: + and − (binary); * and /; unary − and +;
// ^ or ** (power, right-associative, so 2^3^2 = 2^9 and −x^2 = −(x^2));
// then numbers (1, 2.5, 1e-3), variables, parentheses and function calls.
// The names pi and e are the constants π and e. The functions are those of
// package scalar: sin cos tan asin acos atan sinh cosh tanh exp expm1 log
// (also ln) log1p log2 log10 sqrt cbrt abs sigmoid softplus (also log1pexp)
// erf with one argument; atan2 pow hypot with two; min max sum logsumexp
// with one or more.
//
// Stan's special functions and log densities are there by their Stan names
// (see stan.go): lgamma digamma trigamma erfc Phi inv_Phi logit inv_logit
// log_inv_logit log1m_inv_logit log1m log1m_exp log1p_exp asinh acosh atanh
// floor ceil round trunc with one argument; lbeta lchoose
// (binomial_coefficient_log) gamma_p gamma_q log_diff_exp fmin fmax
// modified_bessel_first_kind modified_bessel_second_kind (orders 0 and 1)
// with two; inc_beta fma with three; log_sum_exp with one or more; and
// NAME_lpdf, NAME_lupdf (continuous) and NAME_lpmf, NAME_lupmf (discrete) for
// NAME normal student_t cauchy logistic lognormal exponential gamma
// inv_gamma beta weibull uniform, and poisson poisson_log bernoulli_logit
// binomial binomial_logit neg_binomial_2 categorical_logit, whose arguments
// are Stan's, the variate separated by "|" or ",": normal_lpdf(y | mu,
// sigma). The counts of a mass function must have integer values (their
// derivative is not taken). Where package scalar would panic with
// scalar.ErrDomain (a scale ≤ 0, a probability outside [0, 1], a count that
// is negative or not an integer), a density evaluates to NaN here, with NaN
// partials.
package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/adjointgo/adjoint/scalar"
)

// SyntaxError is a parse error at a column of the expression.
type SyntaxError struct {
	Col int    // 1-based column, in characters
	Msg string // what is wrong
}

// Error returns "column N: msg".
func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// Expr is a parsed expression.
type Expr struct {
	src  string
	root node
	vars []string
}

// Vars returns the names of the variables of the expression, in the order of
// their first appearance.
func (e *Expr) Vars() []string { return e.vars }

// String returns the source text of the expression.
func (e *Expr) String() string { return e.src }

// Eval evaluates the expression with x[k] as the value of Vars()[k]. It
// panics if len(x) differs from len(Vars()).
func (e *Expr) Eval(x []scalar.Var) scalar.Var {
	if len(x) != len(e.vars) {
		panic(fmt.Sprintf("expr: eval: %d values for %d variables", len(x), len(e.vars)))
	}
	return e.root.eval(x)
}

// EvalFloat evaluates the expression on plain float64 values.
func (e *Expr) EvalFloat(x []float64) float64 {
	v := make([]scalar.Var, len(x))
	for k, f := range x {
		v[k] = scalar.Const(f)
	}
	return e.Eval(v).Value()
}

type node interface {
	eval(x []scalar.Var) scalar.Var
}

type num float64

func (n num) eval([]scalar.Var) scalar.Var { return scalar.Const(float64(n)) }

type variable int

func (v variable) eval(x []scalar.Var) scalar.Var { return x[v] }

type neg struct{ a node }

func (n neg) eval(x []scalar.Var) scalar.Var { return n.a.eval(x).Neg() }

type binary struct {
	name string // "add", "sub", "mul", "div", "pow", or the function called
	f    func(a, b scalar.Var) scalar.Var
	a, b node
}

func (n binary) eval(x []scalar.Var) scalar.Var { return n.f(n.a.eval(x), n.b.eval(x)) }

type call1 struct {
	name string // the function called, as written
	f    func(scalar.Var) scalar.Var
	a    node
}

func (n call1) eval(x []scalar.Var) scalar.Var { return n.f(n.a.eval(x)) }

type callN struct {
	name string // the function called
	f    func([]scalar.Var) scalar.Var
	args []node
}

func (n callN) eval(x []scalar.Var) scalar.Var {
	v := make([]scalar.Var, len(n.args))
	for k, a := range n.args {
		v[k] = a.eval(x)
	}
	return n.f(v)
}

var unary = map[string]func(scalar.Var) scalar.Var{
	"sin": scalar.Var.Sin, "cos": scalar.Var.Cos, "tan": scalar.Var.Tan,
	"asin": scalar.Var.Asin, "acos": scalar.Var.Acos, "atan": scalar.Var.Atan,
	"sinh": scalar.Var.Sinh, "cosh": scalar.Var.Cosh, "tanh": scalar.Var.Tanh,
	"exp": scalar.Var.Exp, "expm1": scalar.Var.Expm1,
	"log": scalar.Var.Log, "ln": scalar.Var.Log, "log1p": scalar.Var.Log1p,
	"log2": scalar.Var.Log2, "log10": scalar.Var.Log10,
	"sqrt": scalar.Var.Sqrt, "cbrt": scalar.Var.Cbrt, "abs": scalar.Var.Abs,
	"sigmoid": scalar.Var.Sigmoid, "softplus": scalar.Var.Softplus,
	"log1pexp": scalar.Var.Softplus, "erf": scalar.Var.Erf,
}

var binaryFuncs = map[string]func(a, b scalar.Var) scalar.Var{
	"atan2": scalar.Var.Atan2, "pow": scalar.Var.Pow, "hypot": scalar.Var.Hypot,
}

func fold(f func(a, b scalar.Var) scalar.Var) func([]scalar.Var) scalar.Var {
	return func(v []scalar.Var) scalar.Var {
		r := v[0]
		for _, w := range v[1:] {
			r = f(r, w)
		}
		return r
	}
}

// sum adds v up with one scalar.Sum.
func sum(v []scalar.Var) scalar.Var {
	var s scalar.Sum
	s.AddAll(v)
	return s.Result()
}

var variadic = map[string]func([]scalar.Var) scalar.Var{
	"min": fold(scalar.Var.Min), "max": fold(scalar.Var.Max),
	"sum": sum, "logsumexp": scalar.LogSumExp,
}

// fixed holds the functions of a fixed number of arguments other than 1
// and 2, and the log densities; see stan.go.
var fixed = map[string]fixedFunc{}

// variadicMin holds the least number of arguments of a variadic function
// that needs more than 1.
var variadicMin = map[string]int{}

var constants = map[string]float64{"pi": math.Pi, "e": math.E}

// Functions returns the names of the functions an expression may call.
func Functions() []string {
	var names []string
	for n := range unary {
		names = append(names, n)
	}
	for n := range binaryFuncs {
		names = append(names, n)
	}
	for n := range variadic {
		names = append(names, n)
	}
	for n := range fixed {
		names = append(names, n)
	}
	return names
}

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tIdent
	tOp // + - * / ^ ** ( ) ,
)

type token struct {
	kind tokKind
	text string
	num  float64
	col  int
}

func (t token) String() string {
	if t.kind == tEOF {
		return "end of expression"
	}
	return strconv.Quote(t.text)
}

func lex(src string) ([]token, error) {
	var toks []token
	col := 1
	for i := 0; i < len(src); {
		r, w := utf8.DecodeRuneInString(src[i:])
		start := col
		switch {
		case r == utf8.RuneError && w == 1:
			return nil, &SyntaxError{col, "invalid UTF-8"}
		case unicode.IsSpace(r):
			i += w
			col++
			continue
		case r >= '0' && r <= '9' || r == '.':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && src[k] >= '0' && src[k] <= '9' {
					for k < len(src) && src[k] >= '0' && src[k] <= '9' {
						k++
					}
					j = k
				}
			}
			v, err := strconv.ParseFloat(src[i:j], 64)
			if err != nil {
				return nil, &SyntaxError{start, fmt.Sprintf("bad number %q", src[i:j])}
			}
			toks = append(toks, token{tNum, src[i:j], v, start})
			col += j - i
			i = j
		case unicode.IsLetter(r) || r == '_':
			j := i
			for j < len(src) {
				r, w := utf8.DecodeRuneInString(src[j:])
				if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
					break
				}
				j += w
				col++
			}
			toks = append(toks, token{tIdent, src[i:j], 0, start})
			i = j
		case strings.HasPrefix(src[i:], "**"):
			toks = append(toks, token{tOp, "^", 0, start})
			i += 2
			col += 2
		case strings.ContainsRune("+-*/^(),|", r):
			toks = append(toks, token{tOp, string(r), 0, start})
			i += w
			col++
		default:
			return nil, &SyntaxError{start, fmt.Sprintf("unexpected character %q", r)}
		}
	}
	toks = append(toks, token{kind: tEOF, col: col})
	return toks, nil
}

type parser struct {
	toks []token
	pos  int
	vars map[string]int
	expr *Expr
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) isOp(s string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == s
}

// Parse parses src. Errors are *SyntaxError values that give the column.
func Parse(src string) (*Expr, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, vars: map[string]int{}, expr: &Expr{src: src}}
	if p.peek().kind == tEOF {
		return nil, &SyntaxError{1, "empty expression"}
	}
	root, err := p.sum()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, &SyntaxError{t.col, fmt.Sprintf("unexpected %v after a complete expression", t)}
	}
	p.expr.root = root
	return p.expr, nil
}

func (p *parser) sum() (node, error) {
	a, err := p.product()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.next().text
		b, err := p.product()
		if err != nil {
			return nil, err
		}
		if op == "+" {
			a = binary{"add", scalar.Var.Add, a, b}
		} else {
			a = binary{"sub", scalar.Var.Sub, a, b}
		}
	}
	return a, nil
}

func (p *parser) product() (node, error) {
	a, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") {
		op := p.next().text
		b, err := p.unary()
		if err != nil {
			return nil, err
		}
		if op == "*" {
			a = binary{"mul", scalar.Var.Mul, a, b}
		} else {
			a = binary{"div", scalar.Var.Div, a, b}
		}
	}
	return a, nil
}

func (p *parser) unary() (node, error) {
	if p.isOp("-") {
		p.next()
		a, err := p.unary()
		if err != nil {
			return nil, err
		}
		return neg{a}, nil
	}
	if p.isOp("+") {
		p.next()
		return p.unary()
	}
	return p.power()
}

func (p *parser) power() (node, error) {
	a, err := p.primary()
	if err != nil {
		return nil, err
	}
	if p.isOp("^") {
		p.next()
		b, err := p.unary() // right-associative, and 2^-x is allowed
		if err != nil {
			return nil, err
		}
		return binary{"pow", scalar.Var.Pow, a, b}, nil
	}
	return a, nil
}

func (p *parser) primary() (node, error) {
	t := p.next()
	switch {
	case t.kind == tNum:
		return num(t.num), nil
	case t.kind == tOp && t.text == "(":
		a, err := p.sum()
		if err != nil {
			return nil, err
		}
		if c := p.next(); !(c.kind == tOp && c.text == ")") {
			return nil, &SyntaxError{c.col, fmt.Sprintf("expected \")\" to close the \"(\" at column %d, found %v", t.col, c)}
		}
		return a, nil
	case t.kind == tIdent && p.isOp("("):
		return p.call(t)
	case t.kind == tIdent:
		if _, ok := unary[t.text]; ok {
			return nil, &SyntaxError{t.col, fmt.Sprintf("function %s needs parentheses: %s(…)", t.text, t.text)}
		}
		if c, ok := constants[t.text]; ok {
			return num(c), nil
		}
		k, ok := p.vars[t.text]
		if !ok {
			k = len(p.expr.vars)
			p.vars[t.text] = k
			p.expr.vars = append(p.expr.vars, t.text)
		}
		return variable(k), nil
	}
	return nil, &SyntaxError{t.col, fmt.Sprintf("unexpected %v, expected a number, a variable, a function call or \"(\"", t)}
}

func (p *parser) call(name token) (node, error) {
	open := p.next()
	var args []node
	if p.isOp(")") {
		p.next()
	} else {
		for {
			a, err := p.sum()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			c := p.next()
			if c.kind == tOp && c.text == ")" {
				break
			}
			// Stan separates a density's variate from its parameters by
			// "|": normal_lpdf(y | mu, sigma).
			if c.kind == tOp && c.text == "|" && len(args) == 1 && isDensity(name.text) {
				continue
			}
			if !(c.kind == tOp && c.text == ",") {
				return nil, &SyntaxError{c.col, fmt.Sprintf("expected \",\" or \")\" in the call of %s at column %d, found %v", name.text, name.col, c)}
			}
		}
	}
	_ = open
	want := func(n string) error {
		return &SyntaxError{name.col, fmt.Sprintf("%s takes %s, got %d", name.text, n, len(args))}
	}
	if f, ok := unary[name.text]; ok {
		if len(args) != 1 {
			return nil, want("1 argument")
		}
		return call1{name.text, f, args[0]}, nil
	}
	if f, ok := binaryFuncs[name.text]; ok {
		if len(args) != 2 {
			return nil, want("2 arguments")
		}
		return binary{name.text, f, args[0], args[1]}, nil
	}
	if f, ok := fixed[name.text]; ok {
		if len(args) != f.n {
			return nil, want(fmt.Sprintf("%d arguments", f.n))
		}
		return callN{name.text, f.f, args}, nil
	}
	if f, ok := variadic[name.text]; ok {
		if m := max(variadicMin[name.text], 1); len(args) < m {
			if m == 1 {
				return nil, want("at least 1 argument")
			}
			return nil, want(fmt.Sprintf("at least %d arguments", m))
		}
		return callN{name.text, f, args}, nil
	}
	return nil, &SyntaxError{name.col, fmt.Sprintf("unknown function %q", name.text)}
}
