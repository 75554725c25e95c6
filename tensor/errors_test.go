package tensor

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/internal/errs"
)

// catch runs f and returns the error it panicked with (nil if it did not
// panic); a panic with a non-error value fails the caller's test through the
// returned error's absence.
// catch runs f and returns the error it panicked with, or nil.
var catch = errs.Catch

// wantErr checks that err wraps sentinel, is a *ShapeError, is one of the
// module's errors and names op.
func wantErr(t *testing.T, name string, err, sentinel error, op string) {
	t.Helper()
	var se *ShapeError
	switch {
	case err == nil:
		t.Errorf("%s: no panic, want %v", name, sentinel)
	case !errors.Is(err, sentinel):
		t.Errorf("%s: %v does not wrap %v", name, err, sentinel)
	case !errors.As(err, &se):
		t.Errorf("%s: %T is not a *ShapeError", name, err)
	case !errs.Module(err):
		t.Errorf("%s: %v is not one of the module's errors", name, err)
	case !strings.HasPrefix(err.Error(), op+": "):
		t.Errorf("%s: %q does not name the op %q", name, err, op)
	}
}

func TestSentinels(t *testing.T) {
	a, b := New(Float64, 2, 3), New(Float64, 4, 5)
	wantErr(t, "shape", catch(func() { new(Tensor).MatMul(a, b, false, false) }), ErrShape, "matmul")
	wantErr(t, "dtype", catch(func() { new(Tensor).Add(a, New(Float32, 2, 3)) }), ErrDType, "add")
	wantErr(t, "alias", catch(func() { a.Permute(a, 1, 0) }), ErrAlias, "permute")
	wantErr(t, "unary", catch(func() { new(Tensor).Apply(UnaryOp(99), a) }), ErrUnknownOp, "apply")
	wantErr(t, "binary", catch(func() { new(Tensor).Binary(BinaryOp(99), a, a) }), ErrUnknownOp, "binary")
	wantErr(t, "binary empty", catch(func() { new(Tensor).Binary(BinaryOp(99), New(Float64, 0), New(Float64, 1)) }), ErrUnknownOp, "binary")
	for _, e := range []error{ErrShape, ErrDType, ErrAlias, ErrUnknownOp} {
		if !errs.Module(e) {
			t.Errorf("%v is not made by errs.New", e)
		}
	}
	err := catch(func() { a.Permute(a, 1, 0) })
	if msg := err.Error(); !strings.Contains(msg, "fresh destination") {
		t.Errorf("alias message %q does not say how to fix it", msg)
	}
}

// TestAliasDetected checks that every kernel that cannot run in place panics
// with ErrAlias, before it touches the destination (the operand keeps its
// shape and data), when the destination is an operand or shares its storage.
func TestAliasDetected(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, d := range []DType{Float32, Float64} {
		x := randT(r, d, 2, 3)
		row := randT(r, d, 3)
		sq := randT(r, d, 3, 3)
		mask := randT(r, d, 2, 3)
		logits := randT(r, d, 2, 3)
		cases := []struct {
			name, op string
			x        *Tensor // the operand that must stay intact
			f        func()
		}{
			{"permute", "permute", x, func() { x.Permute(x, 1, 0) }},
			{"permute into a view", "permute", x, func() { x.Reshape(3, 2).Permute(x, 1, 0) }},
			{"permute from a view", "permute", x, func() { x.Permute(x.Reshape(3, 2), 1, 0) }},
			{"matmul a", "matmul", sq, func() { sq.MatMul(sq, randT(r, d, 3, 3), false, false) }},
			{"matmul b", "matmul", sq, func() { sq.MatMul(randT(r, d, 3, 3), sq, false, true) }},
			{"matmul view", "matmul", sq, func() { sq.View().MatMul(sq, sq, true, false) }},
			{"concat", "concat", x, func() { x.Concat(0, New(d, 1, 3), x) }},
			{"concat view", "concat", x, func() { x.View().Concat(1, x, x) }},
			{"slice", "slice", x, func() { x.Slice(x, 1, 1, 3) }},
			{"slice whole", "slice", x, func() { x.Slice(x, 0, 0, 2) }},
			{"index_select", "index_select", x, func() { x.IndexSelect(x, 0, []int{1, 0}) }},
			{"index_add", "index_add", x, func() { x.IndexAdd(x, 0, []int{1, 0}) }},
			{"index_add view", "index_add", x, func() { x.IndexAdd(x.View(), 1, []int{2, 2, 0}) }},
			{"slice_add", "slice_add", x, func() { x.SliceAdd(sharing(x, 1, 3), 0, 1) }},
			{"sum", "sum", x, func() { x.Reduce(SumReduce, x, true) }},
			{"sum all axes kept", "sum", x, func() { x.Reduce(SumReduce, x.View(), true, 0) }},
			{"max", "max", x, func() { x.Reduce(MaxReduce, x, false, 1) }},
			{"sum_to", "sum_to", x, func() { x.SumTo(x, []int{3}) }},
			{"sum_to same shape", "sum_to", x, func() { x.SumTo(x, []int{2, 3}) }},
			{"broadcast_to", "broadcast_to", row, func() { row.BroadcastTo(row, []int{2, 3}) }},
			{"broadcast_to view", "broadcast_to", row, func() { row.View().BroadcastTo(row, []int{4, 3}) }},
			{"add broadcast b", "add", row, func() { row.Add(x, row) }},
			{"sub broadcast a", "sub", row, func() { row.Sub(row, x) }},
			{"mul into a view of the broadcast operand", "mul", row, func() { row.Reshape(1, 3).Mul(row, x) }},
			{"maximum rank", "maximum", row, func() { row.Binary(Maximum, row, New(d, 1, 3)) }},
			{"where a", "where", row, func() { row.Where(mask, row, x) }},
			{"where mask", "where", row, func() { row.Where(row, x, x) }},
			{"where b view", "where", row, func() { row.View().Where(mask, x, row) }},
			{"cross_entropy", "cross_entropy", logits, func() { CrossEntropy(logits, logits, []int{0, 2}) }},
			{"cross_entropy view", "cross_entropy", logits, func() { CrossEntropy(logits.Reshape(6), logits, []int{0, 2}) }},
		}
		for _, c := range cases {
			shape, data := slices.Clone(c.x.Shape()), c.x.Data()
			wantErr(t, d.String()+" "+c.name, catch(c.f), ErrAlias, c.op)
			if !EqualShape(c.x.Shape(), shape) || !slices.Equal(c.x.Data(), data) {
				t.Errorf("%s %s: the operand changed: %v", d, c.name, c.x)
			}
		}
	}
}

// sharing returns a tensor of the given shape over the first elements of x's
// storage.
func sharing(x *Tensor, shape ...int) *Tensor {
	if x.DType() == Float32 {
		return FromFloat32(x.Float32s()[:Size(shape)], shape...)
	}
	return FromFloat64(x.Float64s()[:Size(shape)], shape...)
}

// TestInPlaceAllowed checks that the kernels that may write over an operand
// of the output's shape still do, and compute what a fresh destination gets.
func TestInPlaceAllowed(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, d := range []DType{Float32, Float64} {
		x := randT(r, d, 2, 3)
		g := randT(r, d, 2, 3)
		row := randT(r, d, 3)
		mask := New(d).Binary(Greater, x, g)
		cases := []struct {
			name  string
			fresh func(dst *Tensor) *Tensor // the op into dst
		}{
			{"add", func(dst *Tensor) *Tensor { return dst.Add(x, g) }},
			{"add broadcast", func(dst *Tensor) *Tensor { return dst.Add(x, row) }},
			{"mul self", func(dst *Tensor) *Tensor { return dst.Mul(x, x) }},
			{"maximum", func(dst *Tensor) *Tensor { return dst.Binary(Maximum, x, g) }},
			{"apply", func(dst *Tensor) *Tensor { return dst.Apply(Tanh, x) }},
			{"scale", func(dst *Tensor) *Tensor { return dst.Scale(x, 2, 1) }},
			{"pow scalar", func(dst *Tensor) *Tensor { return dst.PowScalar(x, 3) }},
			{"dropout", func(dst *Tensor) *Tensor { return dst.Dropout(x, 0.5, 1, 0) }},
			{"softmax", func(dst *Tensor) *Tensor { return dst.Softmax(x, 1, false) }},
			{"log softmax", func(dst *Tensor) *Tensor { return dst.Softmax(x, 0, true) }},
			{"where", func(dst *Tensor) *Tensor { return dst.Where(mask, x, row) }},
			{"broadcast_to", func(dst *Tensor) *Tensor { return dst.BroadcastTo(x, []int{2, 3}) }},
		}
		for _, c := range cases {
			want := c.fresh(new(Tensor)).Data()
			// The destination is x itself, then a view of x with x's shape,
			// then a view of another shape but the same storage.
			for i, dst := range []func(*Tensor) *Tensor{
				func(u *Tensor) *Tensor { return u },
				func(u *Tensor) *Tensor { return u.View() },
				func(u *Tensor) *Tensor { return u.Reshape(6) },
			} {
				saved := x.Clone()
				var got []float64
				if err := catch(func() { got = c.fresh(dst(x)).Data() }); err != nil {
					t.Errorf("%s %s (destination %d): %v", d, c.name, i, err)
				} else if !slices.Equal(got, want) {
					t.Errorf("%s %s (destination %d): %v, want %v", d, c.name, i, got, want)
				}
				x.CopyFrom(saved) // restore the operand for the next case
			}
		}
		// The elementwise accumulation that gradients use: t += g.
		acc := x.Clone()
		want := New(d).Add(acc, g).Data()
		if got := acc.Add(acc, g).Data(); !slices.Equal(got, want) {
			t.Errorf("%s: t.Add(t, g) = %v, want %v", d, got, want)
		}
		// SliceAdd of a tensor into itself (the whole block) doubles it.
		dbl := x.Clone()
		want = New(d).Scale(x, 2, 0).Data()
		if got := dbl.SliceAdd(dbl, 1, 0).Data(); !slices.Equal(got, want) {
			t.Errorf("%s: t.SliceAdd(t) = %v, want %v", d, got, want)
		}
	}
}
