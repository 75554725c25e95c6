package nn

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
)

// MaxPool2d takes the maximum over windows of its input [N C H W]
// (PyTorch's nn.MaxPool2d). It has no parameters.
type MaxPool2d struct{ Opts ad.Pool2dOptions }

// AvgPool2d takes the mean over windows of its input [N C H W], the
// padding counting as zeros (PyTorch's nn.AvgPool2d). It has no parameters.
type AvgPool2d struct{ Opts ad.Pool2dOptions }

// NewMaxPool2d returns a max pool over kernel[0]×kernel[1] windows moved by
// stride (zero: the kernel) with the given zero-or-more padding, which may
// not exceed half the kernel. Bad sizes panic with an *Error wrapping
// ErrConfig.
func NewMaxPool2d(kernel, stride, padding [2]int) *MaxPool2d {
	checkPool("max_pool2d", kernel, stride, padding)
	return &MaxPool2d{ad.Pool2dOptions{Kernel: kernel, Stride: stride, Padding: padding}}
}

// NewAvgPool2d is NewMaxPool2d for a mean pool.
func NewAvgPool2d(kernel, stride, padding [2]int) *AvgPool2d {
	checkPool("avg_pool2d", kernel, stride, padding)
	return &AvgPool2d{ad.Pool2dOptions{Kernel: kernel, Stride: stride, Padding: padding}}
}

func checkPool(op string, kernel, stride, padding [2]int) {
	for i := range 2 {
		if kernel[i] < 1 || stride[i] < 0 || padding[i] < 0 || 2*padding[i] > kernel[i] {
			panic(&Error{Op: op, Err: ErrConfig, Msg: fmt.Sprintf("kernel %v, stride %v, padding %v: want a positive kernel, stride ≥ 0 (0: the kernel) and padding in [0, kernel/2]",
				kernel, stride, padding)})
		}
	}
}

// Forward returns the pooled x: [N C H' W'].
func (p *MaxPool2d) Forward(x *ad.Value) *ad.Value { return ad.MaxPool2d(x, p.Opts) }

// Params returns nothing: pools have no parameters.
func (p *MaxPool2d) Params() []Param { return nil }

// Forward returns the pooled x: [N C H' W'].
func (p *AvgPool2d) Forward(x *ad.Value) *ad.Value { return ad.AvgPool2d(x, p.Opts) }

// Params returns nothing: pools have no parameters.
func (p *AvgPool2d) Params() []Param { return nil }
