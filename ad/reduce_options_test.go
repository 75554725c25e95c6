package ad_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// reductions are every reduction taking ReduceOption values, by the op name
// its errors carry.
var reductions = []struct {
	op string
	f  func(x *ad.Value, opts ...ad.ReduceOption) *ad.Value
}{
	{"sum", ad.Sum},
	{"mean", ad.Mean},
	{"max", ad.Max},
	{"min", ad.Min},
	{"prod", ad.Prod},
	{"var", func(x *ad.Value, opts ...ad.ReduceOption) *ad.Value { return ad.Variance(x, 1, opts...) }},
	{"std", func(x *ad.Value, opts ...ad.ReduceOption) *ad.Value { return ad.Std(x, 0, opts...) }},
	{"norm", func(x *ad.Value, opts ...ad.ReduceOption) *ad.Value { return ad.Norm(x, 2, opts...) }},
	{"norm", func(x *ad.Value, opts ...ad.ReduceOption) *ad.Value { return ad.Norm(x, 3, opts...) }},
	{"logsumexp", ad.LogSumExp},
}

// foreignOption satisfies ReduceOption by embedding it: not an option of
// package ad, and refused as one.
type foreignOption struct{ ad.ReduceOption }

// Every misuse of a reduction's options is an *ad.Error naming the op and
// saying how to fix the call: Axes given twice, a nil option, an option not
// made by package ad (ErrArgument), and a repeated or out-of-range axis
// (the shape error of every op).
func TestReduceOptionMisuse(t *testing.T) {
	x := ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	cases := []struct {
		name string
		opts []ad.ReduceOption
		is   error
		msg  string
	}{
		{"Axes twice", []ad.ReduceOption{ad.Axes(0), ad.KeepDims, ad.Axes(1)}, ad.ErrArgument, "option 2 gives Axes a second time: name every axis in one Axes(…)"},
		{"Axes twice, empty", []ad.ReduceOption{ad.Axes(), ad.Axes()}, ad.ErrArgument, "option 1 gives Axes a second time"},
		{"nil option", []ad.ReduceOption{ad.Axes(1), nil}, ad.ErrArgument, "option 1 is nil: pass Axes(…) or KeepDims"},
		{"nil only", []ad.ReduceOption{nil}, ad.ErrArgument, "option 0 is nil"},
		{"foreign option", []ad.ReduceOption{foreignOption{ad.KeepDims}}, ad.ErrArgument, "option 0 is not Axes(…) or KeepDims"},
		{"repeated axis", []ad.ReduceOption{ad.Axes(1, -2, -1)}, tensor.ErrShape, "axis 1 repeated: name each axis once"},
		{"repeated axis, keepdims", []ad.ReduceOption{ad.KeepDims, ad.Axes(0, 0)}, tensor.ErrShape, "axis 0 repeated"},
		{"axis out of range", []ad.ReduceOption{ad.Axes(2)}, tensor.ErrShape, "axis 2 out of range for 2 dimensions (use 0..1 or -2..-1)"},
		{"negative axis out of range", []ad.ReduceOption{ad.Axes(-3), ad.KeepDims}, tensor.ErrShape, "axis -3 out of range"},
	}
	for _, r := range reductions {
		for _, c := range cases {
			err := ad.Try(func() { r.f(x, c.opts...) })
			var e *ad.Error
			if !errors.As(err, &e) || !errors.Is(err, c.is) {
				t.Errorf("%s, %s: %v, want an *ad.Error wrapping %v", r.op, c.name, err, c.is)
				continue
			}
			if e.Op != r.op || !strings.Contains(err.Error(), "ad: "+r.op+": ") || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%s, %s: op %q, %q: want op %q and a message with %q", r.op, c.name, e.Op, err, r.op, c.msg)
			}
		}
	}
}

// The options are well-formed in any order: KeepDims before or after Axes,
// KeepDims twice, Axes() meaning every axis.
func TestReduceOptionOrder(t *testing.T) {
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	for _, r := range reductions {
		a := r.f(x, ad.Axes(-1), ad.KeepDims)
		b := r.f(x, ad.KeepDims, ad.Axes(1), ad.KeepDims)
		if !tensor.EqualShape(a.Shape(), []int{2, 1}) || !tensor.EqualShape(b.Shape(), []int{2, 1}) {
			t.Errorf("%s: keepdims shapes %v %v, want [2 1]", r.op, a.Shape(), b.Shape())
		}
		wantExact(t, r.op+" options in either order", b.Data(), a.Data())
		all, none := r.f(x, ad.Axes()), r.f(x)
		if len(all.Shape()) != 0 || len(none.Shape()) != 0 {
			t.Errorf("%s: Axes() gives shape %v, no option %v: want a 0-d value", r.op, all.Shape(), none.Shape())
		}
		wantExact(t, r.op+" Axes() is every axis", all.Data(), none.Data())
		if k := r.f(x, ad.KeepDims); !tensor.EqualShape(k.Shape(), []int{1, 1}) {
			t.Errorf("%s: KeepDims alone gives shape %v, want [1 1]", r.op, k.Shape())
		}
	}
}

func ExampleSum() {
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	fmt.Println(ad.Sum(x).Item())                            // every axis
	fmt.Println(ad.Sum(x, ad.Axes(1)).Data())                // each row: the axis is removed
	fmt.Println(ad.Sum(x, ad.Axes(-2), ad.KeepDims).Shape()) // each column, kept with length 1
	fmt.Println(ad.Mean(x, ad.Axes(0, 1), ad.KeepDims).Data())

	// KeepDims gives a result that broadcasts against x: its rows centred.
	fmt.Println(ad.Sub(x, ad.Mean(x, ad.Axes(-1), ad.KeepDims)).Data())

	fmt.Println(ad.Try(func() { ad.Sum(x, ad.Axes(0), ad.Axes(1)) }))
	fmt.Println(ad.Try(func() { ad.Sum(x, ad.Axes(1, -1)) }))
	// Output:
	// 21
	// [6 15]
	// [1 3]
	// [3.5]
	// [-1 0 1 -1 0 1]
	// ad: sum: option 1 gives Axes a second time: name every axis in one Axes(…)
	// ad: sum: [2 3]: axis 1 repeated: name each axis once
}
