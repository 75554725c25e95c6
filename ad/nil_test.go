package ad_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// A nil *Value or nil tensor given to the public API is an error naming
// the op (ad.Try returns it), never a nil-pointer panic from inside: every
// listed entry point is called with a nil in each *Value position in turn,
// the other operands valid. Optional operands (Linear's bias, the norms'
// gamma and beta: nil means none) are skipped.
func TestNilOperandsAreErrors(t *testing.T) {
	x := ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4}, 2, 2))
	fns := map[string]any{
		"Add": ad.Add, "Sub": ad.Sub, "Mul": ad.Mul, "Div": ad.Div, "Pow": ad.Pow, "Neg": ad.Neg, "Exp": ad.Exp, "Sum": ad.Sum, "Mean": ad.Mean,
		"MatMul": ad.MatMul, "Relu": ad.Relu, "Tanh": ad.Tanh, "Softmax": ad.Softmax, "Reshape": ad.Reshape, "Transpose": ad.Transpose,
		"Concat": ad.Concat, "Maximum": ad.Maximum, "Where": ad.Where, "Linear": ad.Linear, "LayerNorm": ad.LayerNorm, "CrossEntropy": ad.CrossEntropy,
		"Max": ad.Max, "Slice": ad.Slice, "Prod": ad.Prod, "Norm": ad.Norm, "Grad": ad.Grad, "BroadcastTo": ad.BroadcastTo, "Permute": ad.Permute,
		"Conv2d": ad.Conv2d, "Dropout": ad.Dropout, "Astype": ad.Astype, "MSE": ad.MSE, "LogSumExp": ad.LogSumExp, "Clamp": ad.Clamp,
		"Abs": ad.Abs, "Sqrt": ad.Sqrt, "Log": ad.Log, "Sigmoid": ad.Sigmoid, "LogSoftmax": ad.LogSoftmax, "Cumsum": ad.Cumsum,
		"IndexSelect": ad.IndexSelect, "Variance": ad.Variance, "Std": ad.Std, "Minimum": ad.Minimum, "Hypot": ad.Hypot,
		"LogAddExp": ad.LogAddExp, "AddScalar": ad.AddScalar, "MulScalar": ad.MulScalar, "Square": ad.Square, "MatMulT": ad.MatMulT,
		"RMSNorm": ad.RMSNorm, "Recompute": func(x *ad.Value) *ad.Value {
			return ad.Recompute{F: func(xs []*ad.Value) *ad.Value { return xs[0] }}.Apply(x)
		},
		"Backward": func(y *ad.Value) error { return y.Backward() },
		// issue 24's ops (ops_trig.go)
		"Tan": ad.Tan, "Atan": ad.Atan, "Asin": ad.Asin, "Acos": ad.Acos, "Sinh": ad.Sinh, "Cosh": ad.Cosh, "Asinh": ad.Asinh,
		"Acosh": ad.Acosh, "Atanh": ad.Atanh, "Floor": ad.Floor, "Round": ad.Round, "Trunc": ad.Trunc,
		"RSubScalar": ad.RSubScalar, "RDivScalar": ad.RDivScalar, "At": ad.At, "Slices": ad.Slices,
		"Ceil": ad.Ceil, "Log10": ad.Log10, "Exp2": ad.Exp2,
	}
	for name, mk := range map[string]func(){
		"Var": func() { ad.Var(nil) }, "Const": func() { ad.Const(nil) }, "Arena.Const": func() { new(ad.Arena).Const(nil) },
	} {
		if err := ad.Try(mk); !errors.Is(err, ad.ErrArgument) {
			t.Errorf("%s(nil): %v, want an error wrapping ErrArgument", name, err)
		}
	}
	optional := map[string]map[int]bool{ // nil means none: a bias, gamma or beta
		"Linear": {2: true}, "LayerNorm": {1: true, 2: true}, "RMSNorm": {1: true},
	}
	for name, f := range fns {
		fv := reflect.ValueOf(f)
		ft := fv.Type()
		for nilAt := 0; nilAt < ft.NumIn(); nilAt++ {
			args := make([]reflect.Value, ft.NumIn())
			ok := false
			for i := range args {
				pt := ft.In(i)
				if ft.IsVariadic() && i == ft.NumIn()-1 {
					args[i] = reflect.Zero(pt)
					if pt.Elem() == reflect.TypeOf(x) && i == nilAt {
						args[i] = reflect.ValueOf([]*ad.Value{nil})
						ok = true
					}
					continue
				}
				if pt == reflect.TypeOf(x) {
					if i == nilAt {
						args[i] = reflect.Zero(pt)
						ok = true
					} else {
						args[i] = reflect.ValueOf(x)
					}
				} else {
					args[i] = reflect.Zero(pt)
				}
			}
			if !ok {
				continue
			}
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panicked: %v", r)
					}
				}()
				err = ad.Try(func() {
					var out []reflect.Value
					if ft.IsVariadic() {
						out = fv.CallSlice(args)
					} else {
						out = fv.Call(args)
					}
					if e, ok := out[len(out)-1].Interface().(error); ok && e != nil {
						panic(e) // a returned error: Grad
					}
				})
			}()
			if optional[name][nilAt] {
				continue // checked with valid shapes by the row's own tests
			}
			if !errors.Is(err, ad.ErrArgument) {
				t.Errorf("%s with operand %d nil: %v, want an error wrapping ErrArgument", name, nilAt, err)
			}
		}
	}
}
