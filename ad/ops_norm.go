package ad

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/internal/rownorm"
	"github.com/adjointgo/adjoint/tensor"
)

// LayerNorm normalises x over its last axis and applies the affine map
// gamma, beta (each of shape [C], C the last axis's size; either may be
// nil for none): y = (x − mean)/√(var + eps)·gamma + beta, with the biased
// variance, as PyTorch's layer_norm.
//
// It is one fused row: the forward pass makes one pass per row and keeps x,
// gamma and two numbers per row (the mean and 1/√(var + eps)); the
// backward pass computes dx, dgamma and dbeta in one pass per row from
// them. Its JVP and, when the backward sweep is recorded (CreateGraph, HVP,
// Hessian), its VJP are written with this package's ops, so derivatives of
// every order are exact. A gamma or beta of the wrong shape gives an error
// wrapping ErrShape; mixed dtypes ErrDType; a negative or NaN eps
// ErrArgument.
func LayerNorm(x, gamma, beta *Value, eps float64) *Value {
	return applyNorm("layer_norm", x, gamma, beta, eps, false)
}

// RMSNorm normalises x over its last axis by its root mean square and
// scales it by gamma (shape [C], or nil for none):
// y = x/√(mean(x²) + eps)·gamma, as PyTorch's rms_norm. Like LayerNorm it
// is one fused row that keeps x, gamma and one number per row, with
// derivatives of every order.
func RMSNorm(x, gamma *Value, eps float64) *Value {
	return applyNorm("rms_norm", x, gamma, nil, eps, true)
}

func applyNorm(op string, x, gamma, beta *Value, eps float64, rms bool) *Value {
	defer rethrow()
	if !(eps >= 0) || math.IsInf(eps, 1) {
		panic(&Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("eps %v must be finite and ≥ 0", eps)})
	}
	xs := x.Shape()
	if len(xs) == 0 {
		panic(shapeErr(op, [][]int{xs}, "needs at least 1 dimension (normalised over the last)"))
	}
	c := xs[len(xs)-1]
	for _, p := range [2]*Value{gamma, beta} {
		if p == nil {
			continue
		}
		if ps := p.Shape(); len(ps) != 1 || ps[0] != c {
			panic(shapeErr(op, [][]int{xs, ps}, "gamma and beta must have shape [%d] (the last axis of x)", c))
		}
		if p.DType() != x.DType() {
			panic(&Error{Op: op, Err: &tensor.ShapeError{Op: op, Shapes: [][]int{xs, p.Shape()}, DType: true,
				Msg: fmt.Sprintf("mixed dtypes %s and %s; convert explicitly with ad.Astype", x.DType(), p.DType())}})
		}
	}
	row := &lnRow
	if rms {
		row = &rmsRow
	}
	at := newAttrs[normAttrs](x, gamma)
	at.Eps, at.RMS, at.C = eps, rms, c
	at.Rows = 0
	if c > 0 {
		at.Rows = x.t.Len() / c
	}
	at.ops[0] = x
	n := 1
	if gamma != nil {
		at.ops[n] = gamma
		at.gamma = n
		n++
	}
	if beta != nil {
		at.ops[n] = beta
		at.beta = n
		n++
	}
	out := applyN(row, at, at.ops[:n])
	at.ops = [3]*Value{}
	return out
}

// normKeep saves x and gamma, which the VJP reads (not beta).
func normKeep(_ allocator, n *node, at attrs, _ *Value) {
	a := at.(*normAttrs)
	xs := a.ops[:]
	n.save(0, xs[0])
	settleRelu(xs[0], true)
	shareReluOutput(xs[0])
	if a.gamma > 0 {
		n.save(1, xs[a.gamma])
		settleRelu(xs[a.gamma], true)
	}
	if a.beta > 0 {
		settleRelu(xs[a.beta], false)
	}
}

// normAttrs: layer_norm's and rms_norm's eps, which operands they have
// (gamma and beta: their operand index, 0 for none), their operand edges
// (variadic rows), and the statistics of each row the forward pass kept:
// mean and 1/√(var + eps) (layer_norm), 1/√(mean(x²) + eps) (rms_norm).
type normAttrs struct {
	rownorm.Params // the kernels' eps, rms flag, rows and row length
	gamma, beta    int
	edges          []edge
	ops            [3]*Value
	stats          []float64
	acc            []float64 // scratch: dgamma and dbeta summed in float64
	// perEx is the batching level whose rule recorded the row with a batch
	// of inputs against one gamma and beta: a per-example sweep of that
	// level gives their gradients per example (see GradPerExample).
	perEx *batchLevel
}

func (a *normAttrs) reset() {
	clear(a.edges)
	*a = normAttrs{edges: a.edges[:0], stats: a.stats[:0], acc: a.acc[:0]}
}

func (a *normAttrs) edgeList() []edge { return a.edges }
func (a *normAttrs) addEdge(e edge)   { a.edges = append(a.edges, e) }

func (a *normAttrs) eachKept(_ *node, _ func(t *tensor.Tensor, param bool)) int64 {
	return int64(len(a.stats) * 8)
}
func (a *normAttrs) checkKept(*node) error { return nil }
func (a *normAttrs) releaseKept(*node)     {}

var (
	lnRow  = normRule("layer_norm")
	rmsRow = normRule("rms_norm")
)

// normRule is the row of layer_norm or rms_norm. Like attention's it is
// kept outside the rule table of rules.go.
func normRule(name string) rule {
	return rule{name: name, broadcasts: true, keepN: normKeep,
		forwardN: func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) {
			a := at.(*normAttrs)
			x := xs[0]
			resizeTo(dst, x.DType(), x.Shape())
			a.stats = fusedGrow(a.stats, a.StatsLen())
			var g, b *tensor.Tensor
			if a.gamma > 0 {
				g = xs[a.gamma]
			}
			if a.beta > 0 {
				b = xs[a.beta]
			}
			if x.DType() == tensor.Float32 {
				rownorm.Forward[float32](a.Params, a.stats, x, g, b, dst)
			} else {
				rownorm.Forward[float64](a.Params, a.stats, x, g, b, dst)
			}
		},
		vjp: normVJP,
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			a := c.at.(*normAttrs)
			xh, rstd := normOps(c.in(0), a)
			var out *Value
			if t := ts[0]; t != nil {
				dot := Mean(Mul(xh, t), Axes(-1), KeepDims)
				if !a.RMS {
					t = Sub(t, Mean(t, Axes(-1), KeepDims))
				}
				out = Mul(rstd, Sub(t, Mul(xh, dot)))
				if a.gamma > 0 {
					out = Mul(out, c.in(a.gamma))
				}
			}
			if a.gamma > 0 && ts[a.gamma] != nil {
				out = addT(out, Mul(ts[a.gamma], xh))
			}
			if a.beta > 0 && ts[a.beta] != nil {
				out = addT(out, ts[a.beta])
			}
			return out
		}}
}

// normOps returns x̂ and 1/√(var + eps) (or 1/√(mean(x²) + eps)) with this
// package's ops: differentiable, for the JVP and the recorded VJP.
func normOps(x *Value, a *normAttrs) (xh, rstd *Value) {
	xc := x
	if !a.RMS {
		xc = Sub(x, Mean(x, Axes(-1), KeepDims))
	}
	rstd = PowScalar(AddScalar(Mean(Square(xc), Axes(-1), KeepDims), a.Eps), -0.5)
	return Mul(xc, rstd), rstd
}

// normVJP: with x̂ the normalised x, r = 1/√(var + eps) and u = g⊙gamma:
// dx = r·(u − mean(u) − x̂·mean(u⊙x̂)) (layer_norm; rms_norm without the
// mean(u) term), dgamma = Σ g⊙x̂ and dbeta = Σ g over the rows.
// Unrecorded, one fused pass per row computes them from the saved
// statistics; recorded (or carrying tangents), the same formulas are
// written with this package's ops.
func normVJP(c *vjpCtx, g *Value) []*Value {
	a := c.n.at.(*normAttrs)
	x := c.in(0)
	var gamma *Value
	if a.gamma > 0 {
		gamma = c.in(1)
	}
	out := c.gN(len(c.n.ins()))
	needG := a.gamma > 0 && c.need[a.gamma]
	needB := a.beta > 0 && c.need[a.beta]
	if l := a.perEx; l != nil && l == c.perEx && (needG || needB) {
		// Per example: dx as usual, gamma's and beta's gradients summed
		// over each example's rows alone, as values of the level.
		var dx *Value
		if c.need[0] { // the rule itself, asked for dx only
			saved := c.need
			c.need = make([]bool, len(saved))
			c.need[0] = true
			dx = normVJP(c, g)[0]
			c.need = saved
		}
		out = c.gN(len(c.n.ins()))
		out[0] = dx
		b, r := l.size, a.Rows/max(l.size, 1)
		if needG {
			xh, _ := normOps(x, a)
			out[a.gamma] = batchOf(Sum(Reshape(Mul(g, xh), b, r, a.C), Axes(1)), l)
		}
		if needB {
			out[a.beta] = batchOf(Sum(Reshape(g, b, r, a.C), Axes(1)), l)
		}
		return out
	}
	if c.create || fusedTangents(g, x, gamma) {
		xh, rstd := normOps(x, a)
		if c.need[0] {
			u := g
			if gamma != nil {
				u = Mul(g, gamma)
			}
			dot := Mean(Mul(u, xh), Axes(-1), KeepDims)
			if !a.RMS {
				u = Sub(u, Mean(u, Axes(-1), KeepDims))
			}
			out[0] = Mul(rstd, Sub(u, Mul(xh, dot)))
		}
		if needG {
			out[a.gamma] = Mul(g, xh)
		}
		if needB {
			out[a.beta] = g
		}
		return out
	}
	d := g.DType()
	var dx, dg, db *Value
	var tx, tg, tb *tensor.Tensor
	if c.need[0] {
		dx = c.fusedOut(d, x.t.Shape())
		tx = &dx.t
	}
	if needG {
		dg = c.fusedOut(d, gamma.t.Shape())
		tg = &dg.t
	}
	if needB {
		db = c.fusedOut(d, c.inShape(a.beta))
		tb = &db.t
	}
	if d == tensor.Float32 {
		a.acc = rownorm.Backward[float32](a.Params, a.stats, a.acc, &x.t, fusedOpt(gamma), &g.t, tx, tg, tb)
	} else {
		a.acc = rownorm.Backward[float64](a.Params, a.stats, a.acc, &x.t, fusedOpt(gamma), &g.t, tx, tg, tb)
	}
	if dx != nil {
		out[0] = c.fusedDone(dx)
	}
	if dg != nil {
		out[a.gamma] = c.fusedDone(dg)
	}
	if db != nil {
		out[a.beta] = c.fusedDone(db)
	}
	return out
}

func fusedOpt(v *Value) *tensor.Tensor {
	if v == nil {
		return nil
	}
	return &v.t
}
