package ad_test

import (
	"errors"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// FuzzBroadcastGrad draws two shapes of up to three axes (each 1..3 long);
// for compatible shapes, the gradient of Σ(a·b) with respect to a must be b
// summed over the axes that a was broadcast along; for incompatible ones the
// op must fail with ErrShape, never panic otherwise.
func FuzzBroadcastGrad(f *testing.F) {
	f.Add(uint16(0x123), uint16(0x121), uint8(2), uint8(3))
	f.Add(uint16(0x311), uint16(0x003), uint8(3), uint8(1))
	f.Add(uint16(0x222), uint16(0x333), uint8(3), uint8(3))
	f.Fuzz(func(t *testing.T, sa, sb uint16, ra, rb uint8) {
		shape := func(code uint16, rank uint8) []int {
			s := make([]int, int(rank)%4)
			for i := range s {
				s[i] = int(code>>(4*i))%3 + 1
			}
			return s
		}
		as, bs := shape(sa, ra), shape(sb, rb)
		fill := func(s []int, off float64) *tensor.Tensor {
			t := tensor.New(tensor.Float64, s...)
			for i := 0; i < t.Len(); i++ {
				t.SetFlat(i, off+float64(i))
			}
			return t
		}
		a, b := ad.Var(fill(as, 1)), ad.Const(fill(bs, 10))
		var y *ad.Value
		err := ad.Try(func() { y = ad.Sum(ad.Mul(a, b)) })
		if err != nil {
			if !errors.Is(err, ad.ErrShape) {
				t.Fatalf("%v × %v: unexpected error %v", as, bs, err)
			}
			return
		}
		g, err := ad.Grad(y, a)
		if err != nil {
			t.Fatal(err)
		}
		// Reference: broadcast b to the output shape and sum it down to a's.
		out := tensor.BroadcastShapes("ref", as, bs)
		var bb, want tensor.Tensor
		bb.BroadcastTo(b.Tensor(), out)
		ones := tensor.Full(tensor.Float64, 1, out...)
		var prod tensor.Tensor
		prod.Mul(&bb, ones)
		want.SumTo(&prod, as)
		if !tensor.EqualShape(g[0].Shape(), as) {
			t.Fatalf("%v × %v: gradient shape %v", as, bs, g[0].Shape())
		}
		for i := 0; i < want.Len(); i++ {
			if math.Abs(want.AtFlat(i)-g[0].Tensor().AtFlat(i)) > 1e-9 {
				t.Fatalf("%v × %v: gradient %v, want %v", as, bs, g[0].Data(), want.Data())
			}
		}
		// Forward mode agrees: J·1 is the sum of the gradient, and the
		// batched Jacobian (one direction per element of a) is the gradient.
		f := func(xs []*ad.Value) *ad.Value { return ad.Sum(ad.Mul(xs[0], b)) }
		_, jv, err := ad.JVP(f, []*tensor.Tensor{a.Tensor()}, []*tensor.Tensor{tensor.Full(tensor.Float64, 1, as...)})
		if err != nil {
			t.Fatalf("%v × %v: JVP: %v", as, bs, err)
		}
		sum := 0.0
		for _, v := range want.Data() {
			sum += v
		}
		if math.Abs(jv.Item()-sum) > 1e-9 {
			t.Fatalf("%v × %v: J·1 = %v, want %v", as, bs, jv.Item(), sum)
		}
		for _, mode := range []ad.JacMode{ad.JacForward, ad.JacReverse} {
			J, err := ad.Jacobian(f, []*tensor.Tensor{a.Tensor()}, mode)
			if err != nil {
				t.Fatalf("%v × %v: Jacobian: %v", as, bs, err)
			}
			for i := 0; i < want.Len(); i++ {
				if math.Abs(want.AtFlat(i)-J[0].AtFlat(i)) > 1e-9 {
					t.Fatalf("%v × %v: Jacobian (mode %d) %v, want %v", as, bs, mode, J[0].Data(), want.Data())
				}
			}
		}
	})
}

// FuzzOpsBadInput calls shape-taking ops with arbitrary shapes, axes,
// ranges and indices: each call either succeeds (and then its gradient can
// be taken) or fails with an *ad.Error wrapping ErrShape — never another
// panic from inside a kernel.
func FuzzOpsBadInput(f *testing.F) {
	f.Add(uint8(0), uint16(0x123), int8(1), int8(0), int8(2), int8(-1))
	f.Add(uint8(5), uint16(0x222), int8(-3), int8(4), int8(1), int8(7))
	f.Fuzz(func(t *testing.T, op uint8, code uint16, p, q, r, s int8) {
		shape := make([]int, int(code>>12)%4)
		for i := range shape {
			shape[i] = int(code>>(4*i))%4 + 0 // sizes 0..3, empty axes included
		}
		x := ad.Var(tensor.Full(tensor.Float64, 0.5, shape...))
		var y *ad.Value
		apply := func(x *ad.Value) *ad.Value {
			switch op % 10 {
			case 0:
				y = ad.Sum(x, ad.Axes(int(p), int(q)))
			case 1:
				y = ad.Max(x, ad.Axes(int(p)), ad.KeepDims)
			case 2:
				y = ad.Slice(x, int(p), int(q), int(r))
			case 3:
				y = ad.IndexSelect(x, int(p), []int{int(q), int(r)})
			case 4:
				y = ad.Reshape(x, int(p), int(q))
			case 5:
				y = ad.Permute(x, int(p), int(q), int(r))
			case 6:
				y = ad.Concat(int(p), x, ad.Var(tensor.New(tensor.Float64, int(q)&3, int(r)&3)))
			case 7:
				y = ad.MatMulT(x, x, p&1 == 1, q&1 == 1)
			case 8:
				y = ad.Softmax(x, int(p))
			default:
				y = ad.BroadcastTo(x, int(p)&3, int(q)&3, int(r)&3)
			}
			return y
		}
		err := ad.Try(func() { apply(x) })
		if err != nil {
			var e *ad.Error
			if !errors.As(err, &e) || !errors.Is(err, ad.ErrShape) {
				t.Fatalf("op %d on %v (%d %d %d %d): %T %v", op%10, shape, p, q, r, s, err, err)
			}
			return
		}
		if _, err := ad.Grad(ad.Sum(y), x); err != nil && !errors.Is(err, ad.ErrNoGrad) {
			t.Fatalf("op %d on %v: gradient: %v", op%10, shape, err)
		}
		// Forward mode and both batched Jacobians run the op's JVP rule on
		// the same operands: no error and no panic where the op succeeded.
		f := func(xs []*ad.Value) *ad.Value { return ad.Sum(apply(xs[0])) }
		xt := x.Tensor()
		if _, _, err := ad.JVP(f, []*tensor.Tensor{xt}, []*tensor.Tensor{tensor.Full(tensor.Float64, 1, shape...)}); err != nil {
			t.Fatalf("op %d on %v: JVP: %v", op%10, shape, err)
		}
		for _, mode := range []ad.JacMode{ad.JacForward, ad.JacReverse} {
			if _, err := ad.Jacobian(f, []*tensor.Tensor{xt}, mode); err != nil {
				t.Fatalf("op %d on %v: Jacobian mode %d: %v", op%10, shape, mode, err)
			}
		}
	})
}
