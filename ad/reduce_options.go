package ad

import "fmt"

// ReduceOption is an option of a reduction: [Sum], [Mean], [Max], [Min],
// [Prod], [Variance], [Std], [Norm] and [LogSumExp] take them after their
// operands, in any order. There are two, and only this package makes them:
// [Axes], the axes to reduce over (every axis without it), and [KeepDims],
// to keep the reduced axes with length 1. So
//
//	Sum(x)                           // a 0-d value: the sum of every element
//	Sum(x, Axes(1))                  // [a b c] → [a c]
//	Mean(x, Axes(0, 2), KeepDims)    // [a b c] → [1 b 1]
//	Variance(x, 1, Axes(-1))         // over the last axis
//
// A misused option panics with an [*Error] naming the op (recovered by [Try]):
// wrapping [ErrArgument] for Axes given twice or a nil option, and the shape
// error (tensor.ErrShape) for an axis out of range or repeated.
type ReduceOption interface {
	reduceOption() // unexported: the options are this package's
}

// axesOption is Axes' option: the axes as given (not yet normalised).
type axesOption []int

func (axesOption) reduceOption() {}

// keepDimsOption is KeepDims' option.
type keepDimsOption struct{}

func (keepDimsOption) reduceOption() {}

// Axes returns the option that reduces over axes (a negative axis counts
// from the end: −1 is the last). With no axes, as without the option, every
// axis is reduced. Each axis may be named once, and Axes given once per
// call. The option holds axes itself, not a copy (a copy would cost an
// allocation per call): make it where it is used, as in Sum(x, Axes(a...)),
// or do not write to the slice while an option made from it is in use. The
// reduction reads the axes and keeps none of them.
func Axes(axes ...int) ReduceOption { return axesOption(axes) }

// KeepDims is the option that keeps the reduced axes with length 1, so that
// the result broadcasts against the operand (NumPy's keepdims=True,
// PyTorch's keepdim=True): Sub(x, Mean(x, Axes(-1), KeepDims)) centres the
// rows of x.
var KeepDims ReduceOption = keepDimsOption{}

// reduceOptions reads the options of reduction op: the axes as given (nil
// for every axis) and whether the reduced axes are kept. The options are
// only type-switched on, never called or stored, so that an Axes option
// made in the caller's frame stays there (no allocation).
func reduceOptions(op string, opts []ReduceOption) (axes []int, keep bool) {
	given := false
	for i, o := range opts {
		switch o := o.(type) {
		case axesOption:
			if given {
				panic(optionErr(op, i, "gives Axes a second time: name every axis in one Axes(…)"))
			}
			given, axes = true, o
		case keepDimsOption:
			keep = true
		default:
			if o == nil {
				panic(optionErr(op, i, "is nil: pass Axes(…) or KeepDims, or no option to reduce every axis"))
			}
			panic(optionErr(op, i, "is not Axes(…) or KeepDims: pass only this package's options"))
		}
	}
	return axes, keep
}

// optionErr is the error of a reduction's option i. It takes no option, so
// that formatting the message does not move the options to the heap.
func optionErr(op string, i int, msg string) *Error {
	return &Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("option %d %s", i, msg)}
}
