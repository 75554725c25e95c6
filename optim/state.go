package optim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// ErrState: a State given to SetState does not fit the optimizer (another
// kind, a tensor for a parameter it does not have, a shape or dtype that
// is not the parameter's).
var ErrState = errs.New("optimizer state does not fit")

// State is what an optimizer carries from one step to the next beyond the
// parameters themselves, for a checkpoint: restored with SetState into an
// optimizer over the same parameters, it makes a resumed run take exactly
// the steps, bit for bit, that the interrupted one would have taken.
type State struct {
	// Kind is "sgd", "adam" or "adamw".
	Kind string
	// Steps is the number of steps taken (Adam's bias correction reads
	// it; 0 for SGD, which does not count them).
	Steps int
	// LR is the learning rate last set.
	LR float64
	// Tensors holds the per-parameter buffers under "<name>.<i>", i the
	// parameter's index: "m" and "v" for Adam, "velocity" for SGD with
	// momentum. A parameter that no step has updated yet has none.
	Tensors map[string]*tensor.Tensor
}

// Names returns the keys of s.Tensors in a fixed order (by name, then by
// parameter index), for writing them out.
func (s State) Names() []string {
	names := make([]string, 0, len(s.Tensors))
	for k := range s.Tensors {
		names = append(names, k)
	}
	sort.Slice(names, func(a, b int) bool {
		na, ia := splitKey(names[a])
		nb, ib := splitKey(names[b])
		if na != nb {
			return na < nb
		}
		return ia < ib
	})
	return names
}

// Stateful is an Optimizer whose state a checkpoint can save and restore:
// SGD, Adam and AdamW.
type Stateful interface {
	Optimizer
	// State returns a copy of the optimizer's state.
	State() State
	// SetState replaces the optimizer's state by a copy of s, or returns an
	// *Error wrapping ErrState, leaving the state as it was, when s does not
	// fit.
	SetState(s State) error
}

var (
	_ Stateful = (*SGD)(nil)
	_ Stateful = (*Adam)(nil)
)

// State returns a copy of the momentum buffers and the learning rate.
func (o *SGD) State() State {
	return State{Kind: "sgd", LR: o.cfg.LR, Tensors: stateTensors(map[string][]*tensor.Tensor{"velocity": o.vel})}
}

// SetState restores a state from State.
func (o *SGD) SetState(s State) error {
	vel, err := restore("sgd", s, "sgd", map[string]int{"velocity": 0}, paramsOf(o.params))
	if err != nil {
		return err
	}
	o.vel = vel[0]
	o.cfg.LR = s.LR
	return nil
}

// State returns a copy of the moments, the step count and the learning
// rate.
func (o *Adam) State() State {
	return State{Kind: o.kind(), Steps: o.t, LR: o.cfg.LR, Tensors: stateTensors(map[string][]*tensor.Tensor{"m": o.m, "v": o.v})}
}

// SetState restores a state from State.
func (o *Adam) SetState(s State) error {
	if s.Steps < 0 {
		return &Error{Op: o.kind(), Err: ErrState, Msg: fmt.Sprintf("%d steps", s.Steps)}
	}
	mv, err := restore(o.kind(), s, o.kind(), map[string]int{"m": 0, "v": 1}, paramsOf(o.params))
	if err != nil {
		return err
	}
	for i := range o.params {
		if (mv[0][i] == nil) != (mv[1][i] == nil) {
			return &Error{Op: o.kind(), Err: ErrState, Msg: fmt.Sprintf("parameter %d has one of its two moments only", i)}
		}
	}
	o.m, o.v, o.t, o.cfg.LR = mv[0], mv[1], s.Steps, s.LR
	return nil
}

func (o *Adam) kind() string {
	if o.decoupled {
		return "adamw"
	}
	return "adam"
}

// param is what restore checks a tensor against.
type param struct {
	dtype tensor.DType
	shape []int
}

func paramsOf(ps []*ad.Value) []param {
	out := make([]param, len(ps))
	for i, p := range ps {
		out[i] = param{p.DType(), p.Shape()}
	}
	return out
}

// stateTensors copies the non-nil buffers of each named list into a map
// keyed "<name>.<i>".
func stateTensors(lists map[string][]*tensor.Tensor) map[string]*tensor.Tensor {
	out := map[string]*tensor.Tensor{}
	for name, l := range lists {
		for i, t := range l {
			if t != nil {
				out[name+"."+strconv.Itoa(i)] = t.Clone()
			}
		}
	}
	return out
}

// splitKey splits "<name>.<i>" (i = −1 when there is no valid index).
func splitKey(k string) (string, int) {
	j := strings.LastIndexByte(k, '.')
	if j < 0 {
		return k, -1
	}
	i, err := strconv.Atoi(k[j+1:])
	if err != nil || i < 0 {
		return k, -1
	}
	return k[:j], i
}

// restore checks s against the optimizer (kind, names, indices, shapes
// and dtypes) and returns copies of its buffers, one list per name in
// slots (name → position), nil where s has none.
func restore(op string, s State, kind string, slots map[string]int, ps []param) ([][]*tensor.Tensor, error) {
	if s.Kind != kind {
		return nil, &Error{Op: op, Err: ErrState, Msg: fmt.Sprintf("the state is of a %q optimizer, this one is %q", s.Kind, kind)}
	}
	if !(s.LR >= 0) {
		return nil, &Error{Op: op, Err: ErrState, Msg: fmt.Sprintf("learning rate %v", s.LR)}
	}
	out := make([][]*tensor.Tensor, len(slots))
	for k := range out {
		out[k] = make([]*tensor.Tensor, len(ps))
	}
	for key, t := range s.Tensors {
		name, i := splitKey(key)
		k, ok := slots[name]
		if !ok || i < 0 {
			return nil, &Error{Op: op, Err: ErrState, Msg: fmt.Sprintf("tensor %q is not one of this optimizer's", key)}
		}
		if i >= len(ps) {
			return nil, &Error{Op: op, Err: ErrState, Msg: fmt.Sprintf("tensor %q is for parameter %d, the optimizer has %d", key, i, len(ps))}
		}
		if t == nil || t.DType() != ps[i].dtype || !tensor.EqualShape(t.Shape(), ps[i].shape) {
			got := "nil"
			if t != nil {
				got = fmt.Sprintf("%v%v", t.DType(), t.Shape())
			}
			return nil, &Error{Op: op, Err: ErrState, Msg: fmt.Sprintf("tensor %q is %s, parameter %d is %v%v", key, got, i, ps[i].dtype, ps[i].shape)}
		}
		out[k][i] = t.Clone()
	}
	return out, nil
}
