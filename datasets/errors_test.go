package datasets

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// catch runs f and returns the error it panicked with, or nil.
var catch = errs.Catch

func TestErrors(t *testing.T) {
	src := tensor.New(tensor.Float32, 3, 2)
	_, digitsErr := parseDigits([]byte("not gzip"))
	_, cancerErr := parseBreastCancer(gz("1,30,a,b\n1,2\n"))
	cases := []struct {
		name     string
		err      error
		sentinel error
		op, says string
	}{
		{"split", catch(func() { SplitIndices(10, 1.5, 0) }), ErrArgument, "split", "test fraction 1.5"},
		{"split NaN", catch(func() { SplitIndices(10, math.NaN(), 0) }), ErrArgument, "split", "NaN"},
		{"batcher", catch(func() { NewBatcher(10, 0, false, 0) }), ErrArgument, "batcher", "batch size 0"},
		{"gather rank", catch(func() { GatherRows(nil, tensor.New(tensor.Float32, 6), []int{0}) }), ErrShape, "gather rows", "[6]"},
		{"gather row", catch(func() { GatherRows(nil, src, []int{0, 3}) }), ErrShape, "gather rows", "row 3 out of range 0..2"},
		{"digits", digitsErr, ErrFormat, "digits", "decompressing"},
		{"breast cancer", cancerErr, ErrFormat, "breast cancer", "line 2: 2 fields, want 31"},
	}
	for _, c := range cases {
		var e *Error
		switch {
		case c.err == nil:
			t.Errorf("%s: no error", c.name)
		case !errors.Is(c.err, c.sentinel) || !errors.As(c.err, &e) || !errs.Module(c.err):
			t.Errorf("%s: %v (%T) is not a *datasets.Error wrapping %v", c.name, c.err, c.err, c.sentinel)
		case !strings.HasPrefix(c.err.Error(), "datasets: "+c.op+": ") || !strings.Contains(c.err.Error(), c.says):
			t.Errorf("%s: %q does not name %q and say %q", c.name, c.err, c.op, c.says)
		}
	}
	if !errors.Is(ErrShape, tensor.ErrShape) {
		t.Error("datasets.ErrShape is not tensor.ErrShape")
	}
}
