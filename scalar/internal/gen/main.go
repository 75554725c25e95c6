// Command gen writes scalar/forms_gen.go: the forward-mode number types of
// package scalar (Dual, and the local numbers Local2, Local3 and Local4 of
// statement-level preaccumulation) with every operation of Var, from the one
// template below and the one list of operations in ops. Each operation's
// derivatives are not written here: the generated methods call the shared
// derivative functions of package scalar (dSin, dPow, …) and of
// internal/special, which Var uses too.
//
// Run it with go generate ./scalar.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"strings"
	"text/template"
)

// A form is one generated number type: a value V and n partials.
type form struct {
	Name   string   // type name
	Fields []string // names of the partials
	Doc    string   // doc comment of the type, without the leading "// "
	Preacc bool     // with an Expr type and a Preacc function
}

// N returns the number of partials.
func (f form) N() int { return len(f.Fields) }

// An op is one operation with its derivative function.
type op struct {
	Name  string // method name
	Deriv string // derivative function: returns (v, d) for unary, (v, dx, dy) for binary
	Doc   string // doc comment after the method name
}

var forms = []form{
	{Name: "Dual", Fields: []string{"D"}, Doc: `Dual is a forward-mode dual number: a value V and a tangent D, the
derivative of V along one direction. Evaluating a function on duals whose
tangents are a direction u gives the function's value and its directional
derivative ∇f·u in one pass, with no tape.

Dual has the operations of [Var], with the same conventions at non-smooth
and undefined points: they share one implementation of each derivative.`},
	{Name: "Local2", Fields: []string{"D0", "D1"}, Preacc: true},
	{Name: "Local3", Fields: []string{"D0", "D1", "D2"}, Preacc: true},
	{Name: "Local4", Fields: []string{"D0", "D1", "D2", "D3"}, Preacc: true},
}

// Unary operations whose derivative function returns (v, d).
var unary = []op{
	{"Sin", "dSin", "returns sin x."},
	{"Cos", "dCos", "returns cos x."},
	{"Tan", "dTan", "returns tan x."},
	{"Asin", "dAsin", "returns asin x. Its derivative is +Inf at ±1 and NaN outside [−1, 1]."},
	{"Acos", "dAcos", "returns acos x. Its derivative is −Inf at ±1 and NaN outside [−1, 1]."},
	{"Atan", "dAtan", "returns atan x."},
	{"Sinh", "dSinh", "returns sinh x."},
	{"Cosh", "dCosh", "returns cosh x."},
	{"Tanh", "dTanh", "returns tanh x."},
	{"Exp", "dExp", "returns eˣ."},
	{"Expm1", "dExpm1", "returns eˣ − 1, accurate near 0."},
	{"Log", "dLog", "returns ln x. At 0 the value is −Inf and the derivative +Inf; for x < 0 both are NaN, as math.Log's value."},
	{"Log1p", "dLog1p", "returns ln(1 + x), accurate near 0. For x < −1 the value and the derivative are NaN."},
	{"Log2", "dLog2", "returns log₂ x, with the conventions of [Var.Log]."},
	{"Log10", "dLog10", "returns log₁₀ x, with the conventions of [Var.Log]."},
	{"Sqrt", "dSqrt", "returns √x. Its derivative at 0 is +Inf (the one-sided limit), so a gradient through sqrt(0) is ±Inf or NaN: add a small constant inside the root if the model can reach 0. For x < 0 the value and the derivative are NaN."},
	{"Cbrt", "dCbrt", "returns ∛x. Its derivative at 0 is +Inf."},
	{"Abs", "dAbs", "returns |x|. Its derivative at 0 is taken to be 0."},
	{"Sigmoid", "dSigmoid", "returns the logistic function 1/(1 + e⁻ˣ), computed without overflow for any x."},
	{"Softplus", "dSoftplus", "returns ln(1 + eˣ) (log1p-exp), computed without overflow or loss of precision for any x. Its derivative is the sigmoid."},
	{"Erf", "dErf", "returns the error function of x."},
}

// Binary operations whose derivative function returns (v, dx, dy).
var binary = []op{
	{"Div", "dDiv", "returns x ÷ y. Division by zero follows IEEE 754, as in Go."},
	{"Pow", "dPow", "returns xʸ. A constant y gives xᶜ (see [Var.PowC]) and a constant x gives cʸ, whose derivative cʸ·ln c is taken to be 0 where cʸ = 0. With both variable, ∂/∂y = xʸ·ln x is taken to be 0 at x = 0, y > 0, and is NaN for x < 0."},
	{"Atan2", "dAtan2", "returns atan2(x, y) for x the receiver, as math.Atan2(x, y). Both partials are taken to be 0 at the origin."},
	{"Hypot", "dHypot", "returns √(x² + y²) without overflow. Both partials are taken to be 0 at the origin."},
	{"Min", "dMin", "returns the smaller of x and y. At a tie each operand gets half of the derivative (the mean of the one-sided derivatives)."},
	{"Max", "dMax", "returns the larger of x and y. At a tie each operand gets half of the derivative."},
}

// The special functions of internal/special: (v, d, dd), (v, g, h) and
// (v, g, h) with three arguments.
var special1 = []op{
	{"Lgamma", "Lgamma", "returns ln|Γ(x)|. At the poles 0, −1, −2, … the value is +Inf and the derivatives are NaN."},
	{"Digamma", "Digamma", "returns ψ(x) = Γ′(x)/Γ(x)."},
	{"Trigamma", "Trigamma", "returns ψ′(x)."},
	{"Erfc", "Erfc", "returns the complementary error function 1 − erf x, accurate in the upper tail."},
	{"Phi", "Phi", "returns the standard normal distribution function Φ(x), accurate in the lower tail."},
	{"InvPhi", "InvPhi", "returns Φ⁻¹(p), the standard normal quantile, for p in [0, 1] (−Inf at 0, +Inf at 1, NaN outside)."},
	{"Logit", "Logit", "returns ln(u/(1 − u)) for u in [0, 1]."},
	{"InvLogit", "InvLogit", "returns 1/(1 + e⁻ˣ), the same function as [Var.Sigmoid] under its Stan name."},
	{"LogInvLogit", "LogInvLogit", "returns ln(1/(1 + e⁻ˣ)) without overflow or cancellation."},
	{"Log1mInvLogit", "Log1mInvLogit", "returns ln(1 − 1/(1 + e⁻ˣ)) = −ln(1 + eˣ) stably."},
	{"Log1m", "Log1m", "returns ln(1 − x) for x ≤ 1, accurate near 0."},
	{"Log1mExp", "Log1mExp", "returns ln(1 − eˣ) for x ≤ 0, accurate at both ends."},
	{"Log1pExp", "Log1pExp", "returns ln(1 + eˣ), the same function as [Var.Softplus] under its Stan name."},
	{"Asinh", "Asinh", "returns the inverse hyperbolic sine of x."},
	{"Acosh", "Acosh", "returns the inverse hyperbolic cosine of x ≥ 1."},
	{"Atanh", "Atanh", "returns the inverse hyperbolic tangent of x in [−1, 1]."},
	{"Floor", "Floor", "returns ⌊x⌋. Its derivative is taken to be 0 everywhere, also at the jumps, as in Stan: a gradient does not flow through it."},
	{"Ceil", "Ceil", "returns ⌈x⌉, with derivative 0 everywhere; see [Var.Floor]."},
	{"Round", "Round", "returns x rounded half away from zero, with derivative 0 everywhere; see [Var.Floor]."},
	{"Trunc", "Trunc", "returns x rounded toward zero, with derivative 0 everywhere; see [Var.Floor]."},
	{"BesselI0", "BesselI0", "returns I₀(x), the modified Bessel function of the first kind of order 0."},
	{"BesselI1", "BesselI1", "returns I₁(x), the modified Bessel function of the first kind of order 1."},
	{"BesselK0", "BesselK0", "returns K₀(x) for x ≥ 0, the modified Bessel function of the second kind of order 0 (+Inf at 0)."},
	{"BesselK1", "BesselK1", "returns K₁(x) for x ≥ 0, the modified Bessel function of the second kind of order 1 (+Inf at 0)."},
}

var special2 = []op{
	{"Lbeta", "Lbeta", "returns ln B(x, y) for x the receiver, without cancellation when an argument is large."},
	{"Lchoose", "Lchoose", "returns ln C(x, y) for x the receiver, the log binomial coefficient continued to real arguments."},
	{"GammaP", "GammaP", "returns the regularised lower incomplete gamma function P(x, y) of shape x, the receiver; both partials are exact to second order."},
	{"GammaQ", "GammaQ", "returns the regularised upper incomplete gamma function Q(x, y) = 1 − P(x, y) for x the receiver."},
	{"LogDiffExp", "LogDiffExp", "returns ln(eˣ − eʸ) for x the receiver and y ≤ x, without overflow."},
	{"LogSumExp2", "LogSumExp", "returns ln(eˣ + eʸ) without overflow: the binary form of the reduction [LogSumExp], with the same value."},
}

var special3 = []op{
	{"IncBeta", "IncBeta", "returns the regularised incomplete beta function I_z(x, y) for x the receiver, differentiable in all three arguments."},
	{"Fma", "Fma", "returns x·y + z for x the receiver."},
}

const tmpl = `// Code generated by scalar/internal/gen; DO NOT EDIT.

package scalar

import "github.com/adjointgo/adjoint/internal/special"
{{range $f := .Forms}}{{$T := .Name}}
{{if .Doc}}{{comment .Doc}}{{else}}// {{$T}} is a local forward number of width {{.N}} for statement-level
// preaccumulation (see [Preacc{{.N}}]): a value V and its partial derivatives
// {{join .Fields ", "}} with respect to the {{.N}} operands of the enclosing
// Preacc{{.N}}. An expression evaluated on {{$T}} numbers yields its value and
// all {{.N}} local partials at once, with no tape, and [Expr{{.N}}.Record]
// records the result as one node.
//
// The literal {{$T}}{V: c} is the constant c. {{$T}} has the operations of
// [Var], with the same conventions at non-smooth and undefined points: they
// share one implementation of each derivative.{{end}}
type {{$T}} struct {
	V{{range .Fields}}, {{.}}{{end}} float64
}

// chain returns the {{$T}} with value v whose partials are d times x's. A zero
// partial stays zero even where d is infinite (as sqrt at 0), as on a tape.
func (x {{$T}}) chain(v, d float64) {{$T}} {
	return {{$T}}{v{{range .Fields}}, mul0(d, x.{{.}}){{end}}}
}

// chain3 is chain for a derivative function that also returns the second
// derivative, which forward mode does not need.
func (x {{$T}}) chain3(v, d, _ float64) {{$T}} { return x.chain(v, d) }

// comb returns the {{$T}} with value v and partials dx·x + dy·y, where a zero
// partial of x or y contributes nothing even if dx or dy is infinite.
func (x {{$T}}) comb(v, dx float64, y {{$T}}, dy float64) {{$T}} {
	return {{$T}}{v{{range .Fields}}, mul0(dx, x.{{.}}) + mul0(dy, y.{{.}}){{end}}}
}

// comb3 is comb for a special function of three arguments.
func (x {{$T}}) comb3(y, z {{$T}}, v float64, g [3]float64) {{$T}} {
	return {{$T}}{v{{range .Fields}}, mul0(g[0], x.{{.}}) + mul0(g[1], y.{{.}}) + mul0(g[2], z.{{.}}){{end}}}
}

// Add returns x + y.
func (x {{$T}}) Add(y {{$T}}) {{$T}} { return {{$T}}{x.V + y.V{{range .Fields}}, x.{{.}} + y.{{.}}{{end}}} }

// Sub returns x − y.
func (x {{$T}}) Sub(y {{$T}}) {{$T}} { return {{$T}}{x.V - y.V{{range .Fields}}, x.{{.}} - y.{{.}}{{end}}} }

// Mul returns x × y.
func (x {{$T}}) Mul(y {{$T}}) {{$T}} {
	return {{$T}}{x.V * y.V{{range .Fields}}, x.{{.}}*y.V + x.V*y.{{.}}{{end}}}
}

// AddC returns x + c.
func (x {{$T}}) AddC(c float64) {{$T}} { return {{$T}}{x.V + c{{range .Fields}}, x.{{.}}{{end}}} }

// SubC returns x − c.
func (x {{$T}}) SubC(c float64) {{$T}} { return {{$T}}{x.V - c{{range .Fields}}, x.{{.}}{{end}}} }

// RSubC returns c − x.
func (x {{$T}}) RSubC(c float64) {{$T}} { return {{$T}}{c - x.V{{range .Fields}}, -x.{{.}}{{end}}} }

// MulC returns x × c.
func (x {{$T}}) MulC(c float64) {{$T}} { return {{$T}}{x.V * c{{range .Fields}}, x.{{.}} * c{{end}}} }

// DivC returns x ÷ c.
func (x {{$T}}) DivC(c float64) {{$T}} { return x.MulC(1 / c) }

// Neg returns −x.
func (x {{$T}}) Neg() {{$T}} { return {{$T}}{-x.V{{range .Fields}}, -x.{{.}}{{end}}} }

// Square returns x².
func (x {{$T}}) Square() {{$T}} {
	d := 2 * x.V
	return {{$T}}{x.V * x.V{{range .Fields}}, d * x.{{.}}{{end}}}
}

// PowC returns xᶜ for a constant c; see [Var.PowC].
func (x {{$T}}) PowC(c float64) {{$T}} { return x.chain(dPowC(x.V, c)) }
{{range $.Unary}}
{{doc .Name .Doc}}
func (x {{$T}}) {{.Name}}() {{$T}} { return x.chain({{.Deriv}}(x.V)) }
{{end}}{{range $.Binary}}
{{doc .Name .Doc}}
func (x {{$T}}) {{.Name}}(y {{$T}}) {{$T}} {
	v, dx, dy := {{.Deriv}}(x.V, y.V)
	return x.comb(v, dx, y, dy)
}
{{end}}{{range $.Special1}}
{{doc .Name .Doc}}
func (x {{$T}}) {{.Name}}() {{$T}} { return x.chain3(special.{{.Deriv}}(x.V)) }
{{end}}{{range $.Special2}}
{{doc .Name .Doc}}
func (x {{$T}}) {{.Name}}(y {{$T}}) {{$T}} {
	v, g, _ := special.{{.Deriv}}(x.V, y.V)
	return x.comb(v, g[0], y, g[1])
}
{{end}}{{range $.Special3}}
{{doc .Name .Doc}}
func (x {{$T}}) {{.Name}}(y, z {{$T}}) {{$T}} {
	v, g, _ := special.{{.Deriv}}(x.V, y.V, z.V)
	return x.comb3(y, z, v, g)
}
{{end}}{{if .Preacc}}{{$N := .N}}
// Expr{{$N}} is an expression of {{$N}} operands being preaccumulated: it holds
// the operands given to [Preacc{{$N}}], so that [Expr{{$N}}.Record] records the
// result against exactly those operands, in that order.
type Expr{{$N}} struct {
	t *recording // the operands' recording; nil if all are constants
	{{range $i, $_ := .Fields}}{{if $i}}, {{end}}i{{$i}}{{end}} int32 // their nodes; 0 (the sink) for a constant
}

// Preacc{{$N}} starts the preaccumulation of an expression of the {{$N}} variables
// {{range $i, $_ := .Fields}}{{if $i}}, {{end}}x{{$i}}{{end}}: it returns their local numbers, seeded with unit partials
// ({{range $i, $_ := .Fields}}{{if $i}}, {{end}}x{{$i}} has {{index $f.Fields $i}} = 1{{end}}), and the [Expr{{$N}}] that records the
// result. Compute the expression from the local numbers with {{$T}} operations
// and record it with Expr{{$N}}.Record:
//
{{if eq $N 2}}//	e, a, b := scalar.Preacc2(x, y)
//	d := b.Sub(a.Square())
//	z := e.Record(d.Square().MulC(100).Add(a.RSubC(1).Square()))
//
// The whole of it inlines, so that the expression costs what it costs on
// float64 plus one 24-byte node. A constant operand gets no parent; all
// constants record nothing.
{{else}}//	e, a, b, c := scalar.Preacc3(x, y, z)
//	w := e.Record(a.Mul(b).Sin().Add(c.Exp()))
//
// The node holds its parents in side arrays, like a reduction: 24 bytes and
// 12 per variable operand. A constant operand gets no parent; all constants
// record nothing.
{{end}}//
// Preaccumulation computes first derivatives only: in tangent mode
// ([Tape.ResetTangent], used by [HessVec], [Hessian] and [Objective.Hess])
// Preacc{{$N}} panics with an *[Error] wrapping [ErrNoSecondOrder]. It also panics
// if the operands belong to different tapes or recordings.
func Preacc{{$N}}({{range $i, $_ := .Fields}}{{if $i}}, {{end}}x{{$i}}{{end}} Var) (Expr{{$N}}{{range .Fields}}, {{$T}}{{end}}) {
{{if eq $N 2}}	t := x0.t
	if t == nil {
		t = x1.t
	}
	if t != nil && (t.tangent || x0.t != t && x0.t != nil || x1.t != t && x1.t != nil) {
		panic(preaccErr(t))
	}
{{else}}	t := checkPreacc([]Var{ {{range $i, $_ := .Fields}}x{{$i}}, {{end}} })
{{end}}	return Expr{{$N}}{t{{range $i, $_ := .Fields}}, x{{$i}}.i{{end}}}{{range $i, $fd := .Fields}}, {{$T}}{V: x{{$i}}.v, {{$fd}}: 1}{{end}}
}

// Record records r, computed from the local numbers of the [Preacc{{$N}}] call
// that returned e, as one node whose parents are e's operands and whose
// partials are r's, and returns it.
func (e Expr{{$N}}) Record(r {{$T}}) Var {
{{if eq $N 2}}	t := e.t
	if t == nil {
		return Var{v: r.V}
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{e.i0 | preacc, e.i1, r.D0, r.D1})
	return Var{t, r.V, n}
{{else}}	return recordN(e.t, []int32{ {{range $i, $_ := .Fields}}e.i{{$i}}, {{end}} }, r.V, []float64{ {{range .Fields}}r.{{.}}, {{end}} })
{{end}}}
{{end}}{{end}}
// The operations of Var other than the inlined ones (ops.go), from the same
// list and the same derivative functions.
{{range .Unary}}
{{doc .Name .Doc}}
func (x Var) {{.Name}}() Var { v, d := {{.Deriv}}(x.v); return x.un(op{{.Name}}, v, d) }
{{end}}{{range .Binary}}{{if ne .Name "Pow"}}
{{doc .Name .Doc}}
func (x Var) {{.Name}}(y Var) Var {
	v, dx, dy := {{.Deriv}}(x.v, y.v)
	return binOp(op{{.Name}}, x, y, v, dx, dy)
}
{{end}}{{end}}{{range .Special1}}
{{doc .Name .Doc}}
func (x Var) {{.Name}}() Var { return x.spec1(special.{{.Deriv}}(x.v)) }
{{end}}{{range .Special2}}
{{doc .Name .Doc}}
func (x Var) {{.Name}}(y Var) Var {
	v, g, h := special.{{.Deriv}}(x.v, y.v)
	return spec2(op{{.Name}}, x, y, v, g, h)
}
{{end}}{{range .Special3}}
{{doc .Name .Doc}}
func (x Var) {{.Name}}(y, z Var) Var {
	v, g, h := special.{{.Deriv}}(x.v, y.v, z.v)
	return spec3(op{{.Name}}, x, y, z, v, g, h)
}
{{end}}`

// doc returns the doc comment "// name text", wrapped at 76 columns.
func doc(name, text string) string {
	var b strings.Builder
	line := "// " + name
	for _, w := range strings.Fields(text) {
		if len([]rune(line))+1+len([]rune(w)) > 76 {
			b.WriteString(line + "\n")
			line = "//"
		}
		line += " " + w
	}
	b.WriteString(line)
	return b.String()
}

func main() {
	fm := template.FuncMap{
		"join": strings.Join,
		"doc":  doc,
		"comment": func(s string) string {
			lines := strings.Split(s, "\n")
			for i, l := range lines {
				if l == "" {
					lines[i] = "//"
				} else {
					lines[i] = "// " + l
				}
			}
			return strings.Join(lines, "\n")
		},
	}
	t := template.Must(template.New("forms").Funcs(fm).Parse(tmpl))
	var b bytes.Buffer
	err := t.Execute(&b, map[string]any{
		"Forms": forms, "Unary": unary, "Binary": binary,
		"Special1": special1, "Special2": special2, "Special3": special3,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		os.WriteFile("forms_gen.go", b.Bytes(), 0o644)
		fmt.Fprintln(os.Stderr, "gen: format:", err)
		os.Exit(1)
	}
	if err := os.WriteFile("forms_gen.go", src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
