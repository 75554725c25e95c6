package niltest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/datasets"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/mcmc"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/scalar"
	"github.com/adjointgo/adjoint/tensor"
)

// TestNilAndZeroArguments calls each constructor or entry point with nil
// or zero-value arguments. A call may succeed or fail, with a returned
// error or a panic, but every failure must be a typed error of the module
// (errs.Module, what ad.Try recovers): a runtime error such as a nil
// dereference fails the test.
func TestNilAndZeroArguments(t *testing.T) {
	rng := nn.NewRNG(1)
	model := mcmc.FromTape(1, func(t *scalar.Tape, q []scalar.Var) scalar.Var { return q[0].Square().MulC(-0.5) })
	cases := map[string]func() error{
		"ad.Var(nil)":                 func() error { ad.Var(nil); return nil },
		"ad.Const(nil)":               func() error { ad.Const(nil); return nil },
		"ad.At(nil)":                  func() error { ad.At(nil); return nil },
		"ad.Slices(nil)":              func() error { ad.Slices(nil, ad.All()); return nil },
		"ad.Zeros()":                  func() error { ad.Zeros(tensor.Float64); return nil },
		"(*ad.Value)(nil).String":     func() error { _ = (*ad.Value)(nil).String(); return nil },
		"fmt of a nil Value":          func() error { _ = fmt.Sprintf("%v %.2f", (*ad.Value)(nil), (*ad.Value)(nil)); return nil },
		"tensor.ZerosLike(nil)":       func() error { tensor.ZerosLike(nil); return nil },
		"tensor.Randn(nil)":           func() error { tensor.Randn(nil, tensor.Float32, 2); return nil },
		"tensor.Rand(zero RNG)":       func() error { tensor.Rand(new(tensor.RNG), tensor.Float64, 2); return nil },
		"tensor.Eye(0)":               func() error { tensor.Eye(tensor.Float64, 0); return nil },
		"tensor.Linspace(0)":          func() error { tensor.Linspace(tensor.Float64, 0, 1, 0); return nil },
		"fmt of a nil Tensor":         func() error { _ = fmt.Sprint((*tensor.Tensor)(nil)); return nil },
		"nn.NewLinear(nil rng)":       func() error { nn.NewLinear(1, 1, nil, nil); return nil },
		"nn.NewLinear(nil config)":    func() error { nn.NewLinear(1, 1, rng, nil); return nil },
		"nn.NewMLP(nil rng)":          func() error { nn.NewMLP([]int{2, 1}, nil, nil); return nil },
		"nn.NewMLP(nil sizes)":        func() error { nn.NewMLP(nil, rng, nil); return nil },
		"nn.NewEmbedding(nil rng)":    func() error { nn.NewEmbedding(3, 2, 0, nil); return nil },
		"nn.NewConv2d(nil)":           func() error { nn.NewConv2d(1, 1, [2]int{1, 1}, nil, nil); return nil },
		"nn.NewGPT(zero, nil)":        func() error { nn.NewGPT(nn.GPTConfig{}, nil); return nil },
		"nn.NewTransformerBlock(nil)": func() error { nn.NewTransformerBlock(4, 2, nil, nil); return nil },
		"nn.NewMultiHeadAttention":    func() error { nn.NewMultiHeadAttention(4, 2, nil, nil); return nil },
		"nn.NewDropout(0, 0)":         func() error { nn.NewDropout(0, 0); return nil },
		"optim.NewAdam(nil, zero)":    func() error { optim.NewAdam(nil, optim.AdamConfig{}); return nil },
		"optim.NewSGD(nil, zero)":     func() error { optim.NewSGD(nil, optim.SGDConfig{}); return nil },
		"datasets.NewBatcher(0, 0)":   func() error { datasets.NewBatcher(0, 0, true, 0); return nil },
		"Batcher.SetState(zero)":      func() error { return datasets.NewBatcher(2, 1, true, 0).SetState(datasets.BatcherState{}) },
		"datasets.GatherRows(nil)":    func() error { datasets.GatherRows(nil, nil, nil); return nil },
		"datasets.NewCharVocab(\"\")": func() error { datasets.NewCharVocab(""); return nil },
		"mcmc.Sample(nil, nil)":       func() error { _, err := mcmc.Sample(nil, nil); return err },
		"mcmc.Sample(m, nil options)": func() error {
			_, err := mcmc.Sample(model, &mcmc.Options{Samples: 10, Warmup: 10, Chains: 1})
			return err
		},
		"gradcheck.Check(nil)":       func() error { _, err := gradcheck.Check(nil, nil, nil); return err },
		"gradcheck.CheckSecond(nil)": func() error { _, err := gradcheck.CheckSecond(nil, nil, nil); return err },
		"gradcheck.Check(nil input)": func() error {
			_, err := gradcheck.Check(func(xs []*ad.Value) *ad.Value { return xs[0] }, []*tensor.Tensor{nil}, nil)
			return err
		},
		"fn.Grad(nil)()":               func() error { fn.Grad(nil)(); return nil },
		"var scalar.Tape (zero value)": func() error { var tp scalar.Tape; tp.Var(1); return nil },
	}
	for name, f := range cases {
		err := call(f)
		var rt runtimeError
		if errors.As(err, &rt) {
			t.Errorf("%s: runtime panic: %v", name, rt.v)
			continue
		}
		if err != nil && !errs.Module(err) {
			t.Errorf("%s: error %v is not a typed error of the module", name, err)
		}
	}
}

// runtimeError is a panic that ad.Try passes on (not the module's).
type runtimeError struct{ v any }

func (e runtimeError) Error() string { return fmt.Sprint(e.v) }

// call runs f under ad.Try and returns its error, its panic as an error,
// or a runtimeError for a panic ad.Try does not recover.
func call(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = runtimeError{r}
		}
	}()
	var ret error
	if perr := ad.Try(func() { ret = f() }); perr != nil {
		return perr
	}
	return ret
}
