package mcmc

import (
	"fmt"

	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/scalar"
)

// Model is an unnormalised log density on R^Dim. LogDensity returns
// log p(q) up to a constant and, if grad is not nil, stores ∇ log p(q) in
// grad. Both slices have length Dim. A model that cannot evaluate at q
// returns an error, which ends sampling; an infinite or NaN value is not an
// error but a point of zero density (the sampler rejects it).
type Model interface {
	Dim() int
	LogDensity(q, grad []float64) (float64, error)
}

// Cloner is implemented by models that can make an independent copy of
// themselves for another goroutine. Sample runs chains concurrently when the
// model is a Cloner, one clone per chain, and one after the other otherwise.
type Cloner interface {
	Clone() Model
}

// TapeFunc is a log density written on the scalar tape: it returns log p(q)
// computed from the variables q with the operations of package scalar. It
// may record more variables on t (t.Var) but must not keep q after it
// returns. Sample calls the functions of concurrent chains at the same time
// (the clones of a TapeModel share the function), so a TapeFunc must not
// write to shared memory; a model that keeps scratch space between calls
// implements [Model] and [Cloner] itself, with a TapeModel per clone.
type TapeFunc func(t *scalar.Tape, q []scalar.Var) scalar.Var

// TapeModel is a [Model] whose log density is a [TapeFunc]; its gradient is
// one reverse sweep of the tape. It reuses one tape, whose Reset keeps the
// memory, so that evaluations allocate nothing once the tape has grown. A
// TapeModel is not safe for concurrent use; Sample gives each chain a clone.
type TapeModel struct {
	dim  int
	f    TapeFunc
	tape scalar.Tape
	vars []scalar.Var
}

// FromTape returns a model of dimension dim with log density f.
func FromTape(dim int, f TapeFunc) *TapeModel {
	return &TapeModel{dim: dim, f: f}
}

// Dim returns the dimension of the model.
func (m *TapeModel) Dim() int { return m.dim }

// Clone returns a model with the same function and its own tape.
func (m *TapeModel) Clone() Model { return FromTape(m.dim, m.f) }

// LogDensity evaluates the function at q and, if grad is not nil, records
// it and stores its gradient in grad. With grad nil the function runs on
// constants and records nothing. A panic of package scalar (a misuse in the
// function) is returned as an error.
func (m *TapeModel) LogDensity(q, grad []float64) (lp float64, err error) {
	if len(q) != m.dim || (grad != nil && len(grad) != m.dim) {
		return 0, &Error{Op: "logdensity", Err: ErrDim,
			Msg: fmt.Sprintf("len(q) = %d, len(grad) = %d, want the model's dimension %d", len(q), len(grad), m.dim)}
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok || !errs.Module(e) {
				panic(r)
			}
			err = e
		}
	}()
	m.tape.Reset()
	if grad == nil {
		if cap(m.vars) < m.dim {
			m.vars = make([]scalar.Var, m.dim)
		}
		m.vars = m.vars[:m.dim]
		for i, v := range q {
			m.vars[i] = scalar.Const(v)
		}
		return m.f(&m.tape, m.vars).Value(), nil
	}
	in := m.tape.Inputs(q)
	m.vars = in.Vars(m.vars[:0])
	y := m.f(&m.tape, m.vars)
	if y.IsConst() {
		clear(grad)
		return y.Value(), nil
	}
	m.tape.Backward(y)
	in.Gradient(grad)
	return y.Value(), nil
}
