package scalar

//go:generate go run ./internal/gen

// Statement-level preaccumulation: Preacc2, Preacc3 and Preacc4 and the
// local numbers Local2, Local3 and Local4 are generated into forms_gen.go,
// with Dual, from the one template of internal/gen.

// mul0 returns d·t, or 0 if t is 0.
func mul0(d, t float64) float64 {
	if t == 0 {
		return 0
	}
	return d * t
}

// preaccErr returns the error of a Preacc2 call on t whose operands are in
// tangent mode or of different recordings.
func preaccErr(t *recording) *Error {
	if t.tangent {
		return errPreaccTangent
	}
	return mixed[opFn]
}

// errPreaccTangent is the error of preaccumulation in tangent mode.
var errPreaccTangent = &Error{Op: "preacc", Err: ErrNoSecondOrder, Msg: "a preaccumulated expression has no second derivatives, so it cannot be recorded in tangent mode (HessVec, Hessian, Objective.Hess): write it with Var operations"}

// checkPreacc panics unless the variables among xs belong to one recording
// that is not in tangent mode, and returns it (nil if all are constants).
func checkPreacc(xs []Var) *recording {
	t := tapeOf(opFn, xs)
	if t != nil && t.tangent {
		panic(errPreaccTangent)
	}
	return t
}

// recordN records a preaccumulated node of value v over the operands at
// nodes is of t, with partials d (Preacc3, Preacc4): a reduction-style node
// whose parents (the variable operands; a constant's node is the sink, 0)
// are in the side arrays.
func recordN(t *recording, is []int32, v float64, d []float64) Var {
	if t == nil {
		return Var{v: v}
	}
	par, part, e := t.reserve(len(is))
	m := 0
	for j, i := range is {
		if i != 0 {
			par[m], part[m] = i, d[j]
			m++
		}
	}
	return Var{t: t, v: v, i: t.commit(e, m)}
}
