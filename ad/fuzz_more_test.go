package ad_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// fuzzTyped fails t unless err is an *ad.Error wrapping ErrShape or
// ErrArgument (the typed errors of a misfit shape, axis, index or option).
func fuzzTyped(t *testing.T, what string, err error) {
	t.Helper()
	var e *ad.Error
	if !errors.As(err, &e) || !(errors.Is(err, ad.ErrShape) || errors.Is(err, ad.ErrArgument)) {
		t.Fatalf("%s: %T %v, want an *ad.Error wrapping ErrShape or ErrArgument", what, err, err)
	}
}

// fuzzDerivatives takes the gradient and the JVP of Σf(x) where f
// succeeded: neither may fail.
func fuzzDerivatives(t *testing.T, what string, x *ad.Value, f func(*ad.Value) *ad.Value) {
	t.Helper()
	if _, err := ad.Grad(ad.Sum(f(x)), x); err != nil && !errors.Is(err, ad.ErrNoGrad) {
		t.Fatalf("%s: gradient: %v", what, err)
	}
	fn := func(xs []*ad.Value) *ad.Value { return ad.Sum(f(xs[0])) }
	xt := x.Tensor()
	if _, _, err := ad.JVP(fn, []*tensor.Tensor{xt}, []*tensor.Tensor{tensor.Full(xt.DType(), 1, xt.Shape()...)}); err != nil {
		t.Fatalf("%s: JVP: %v", what, err)
	}
}

// FuzzIndexShapeOps calls the indexing and shape ops of issue 10 (Gather,
// TakeAlongAxis, ScatterAdd, IndexAdd, Stack, Split, Chunk, Flip, Tile,
// RepeatInterleave, Pad, Squeeze, Unsqueeze, Expand, Einsum) with arbitrary
// shapes, axes, sizes and indices: each call fails with a typed error or
// succeeds with the result shape the op defines, and then its gradient
// and JVP can be taken.
func FuzzIndexShapeOps(f *testing.F) {
	f.Add(uint8(0), uint16(0x3123), int8(1), int8(0), int8(2))
	f.Add(uint8(7), uint16(0x2202), int8(-1), int8(3), int8(1))
	f.Add(uint8(9), uint16(0x2321), int8(1), int8(2), int8(0))
	f.Fuzz(func(t *testing.T, op uint8, code uint16, p, q, r int8) {
		shape := make([]int, int(code>>12)%4)
		for i := range shape {
			shape[i] = int(code>>(4*i)) % 4 // sizes 0..3
		}
		x := ad.Var(tensor.Full(tensor.Float64, 0.5, shape...))
		idxShape := slices.Clone(shape)
		if len(idxShape) > 0 {
			idxShape[0] = int(q) & 3
		}
		idx := tensor.New(tensor.Float64, idxShape...)
		for i := range idx.Len() {
			idx.SetFlat(i, float64((int(r)+i)%5-1)) // −1 … 3: some out of range
		}
		ic := ad.Const(idx)
		var want []int // the result shape, where the op defines it simply
		apply := func(x *ad.Value) *ad.Value {
			switch op % 15 {
			case 0:
				want = idxShape
				return ad.Gather(x, int(p), ic)
			case 1:
				return ad.TakeAlongAxis(x, ic, int(p))
			case 2:
				want = shape
				return ad.ScatterAdd(x, int(p), ic, ad.Const(tensor.Full(tensor.Float64, 1, idxShape...)))
			case 3:
				want = shape
				n := int(q) & 3
				src := slices.Clone(shape)
				if a := int(p); a >= -len(shape) && a < len(shape) {
					src[(a+len(shape))%len(shape)] = n
				}
				ids := make([]int, n)
				for i := range ids {
					ids[i] = (int(r) + i) % 4
				}
				return ad.IndexAdd(x, int(p), ids, ad.Const(tensor.Full(tensor.Float64, 1, src...)))
			case 4:
				return ad.Stack(int(p), x, x)
			case 5:
				parts := ad.Split(x, int(p), int(q)&3, int(r)&3)
				return ad.Concat(tensor.NormAxis("split", shape, int(p)), parts...)
			case 6:
				parts := ad.Chunk(x, int(p), int(q))
				return ad.Concat(tensor.NormAxis("chunk", shape, int(p)), parts...)
			case 7:
				want = shape
				return ad.Flip(x, int(p))
			case 8:
				return ad.Tile(x, int(p)&3, int(q))
			case 9:
				return ad.RepeatInterleave(x, int(p), int(q))
			case 10:
				mode := ad.PadConstant
				if r&1 == 1 {
					mode = ad.PadReflect
				}
				return ad.Pad(x, [][2]int{{int(p), int(q)}}, mode, float64(r&2))
			case 11:
				return ad.Squeeze(x, int(p))
			case 12:
				return ad.Unsqueeze(x, int(p))
			case 13:
				return ad.Expand(x, int(p), int(q)&3, -1)
			default:
				specs := []string{"ij,jk->ik", "ij->ji", "ii->i", "ijk,ikl->ijl", "ij,ij->", "i,j->ij", "ab", "i->", "ij,jk", "->"}
				return ad.Einsum(specs[int(q)&7+int(r)&1], x, x)
			}
		}
		var y *ad.Value
		if err := ad.Try(func() { y = apply(x) }); err != nil {
			fuzzTyped(t, "op "+string(rune('0'+op%15)), err)
			return
		}
		if want != nil && !tensor.EqualShape(y.Shape(), want) {
			t.Fatalf("op %d on %v: shape %v, want %v", op%15, shape, y.Shape(), want)
		}
		fuzzDerivatives(t, "index/shape op", x, apply)
	})
}

// FuzzConvPool calls Conv2d, Conv1d, MaxPool2d and AvgPool2d with
// arbitrary shapes and options (kernel, stride, padding, dilation,
// groups): each call fails with a typed error or succeeds with PyTorch's
// output shape, and then its gradient and JVP can be taken, and float32
// gives float64's numbers.
func FuzzConvPool(f *testing.F) {
	f.Add(uint8(0), uint32(0x23455), uint8(0x22), uint8(0x11), uint8(0x01), uint8(1))
	f.Add(uint8(2), uint32(0x14766), uint8(0x22), uint8(0x22), uint8(0x11), uint8(0))
	f.Add(uint8(1), uint32(0x42937), uint8(0x13), uint8(0x12), uint8(0x10), uint8(2))
	f.Add(uint8(']'), uint32(272590), uint8('"'), uint8(0x12), uint8(0xab), uint8(0x0f)) // a zero-width image, padded: im2col sliced out of range
	f.Add(uint8(0), uint32(144328), uint8(0x91), uint8(0x11), uint8(0x01), uint8(','))   // no images (N = 0): im2col's stride-1 block sliced past an empty dst
	f.Add(uint8(4), uint32(0x23455), uint8(0x22), uint8(0x11), uint8(0x01), uint8(1))    // the fused ReLU and 2×2 max pool
	f.Add(uint8(4), uint32(0x14766), uint8(0x33), uint8(0x11), uint8(0x11), uint8(0))    // the fused pool over odd output planes
	f.Fuzz(func(t *testing.T, op uint8, code uint32, kern, stride, pad, dil uint8) {
		n, c, h, w, o := int(code&3), int(code>>2&7), int(code>>5&7)+int(code>>16&3), int(code>>8&7), int(code>>11&7)
		kh, kw := int(kern&7), int(kern>>4&7)
		sh, sw := int(stride&3), int(stride>>4&3)
		ph, pw := int(pad&3), int(pad>>4&3)
		dh, dw := int(dil&3), int(dil>>2&3)
		g := int(dil >> 4 & 3)
		def := func(v, d int) int {
			if v == 0 {
				return d
			}
			return v
		}
		x := ad.Var(tensor.Full(tensor.Float64, 0.5, n, c, h, w))
		var want []int
		apply := func(x *ad.Value) *ad.Value {
			switch op % 4 {
			case 0:
				gg := def(g, 1)
				cw := 0
				if gg > 0 {
					cw = c / gg
				}
				wt := ad.Const(tensor.Full(x.DType(), 0.25, o, cw, kh, kw))
				s0, s1, d0, d1 := def(sh, 1), def(sw, 1), def(dh, 1), def(dw, 1)
				want = []int{n, o, (h+2*ph-d0*(kh-1)-1)/s0 + 1, (w+2*pw-d1*(kw-1)-1)/s1 + 1}
				opts := ad.Conv2dOptions{Stride: [2]int{sh, sw}, Padding: [2]int{ph, pw}, Dilation: [2]int{dh, dw}, Groups: g}
				if op&4 != 0 { // a ReLU and a 2×2 max pool after, fused into the row where they can be
					opts.Act, opts.MaxPool = ad.ActReLU, &ad.Pool2dOptions{Kernel: [2]int{2, 2}}
					want[2], want[3] = want[2]/2, want[3]/2
				}
				return ad.Conv2d(x, wt, opts)
			case 1:
				x1 := ad.Reshape(x, n, c, h*w)
				wt := ad.Const(tensor.Full(x.DType(), 0.25, o, c/def(g, 1), kw))
				s, d := def(sw, 1), def(dw, 1)
				want = []int{n, o, (h*w+2*pw-d*(kw-1)-1)/s + 1}
				return ad.Conv1d(x1, wt, ad.Conv1dOptions{Stride: sw, Padding: pw, Dilation: dw, Groups: g})
			default:
				opts := ad.Pool2dOptions{Kernel: [2]int{kh, kw}, Stride: [2]int{sh, sw}, Padding: [2]int{ph, pw}}
				s0, s1 := def(sh, kh), def(sw, kw)
				if s0 > 0 && s1 > 0 {
					want = []int{n, c, (h+2*ph-kh)/s0 + 1, (w+2*pw-kw)/s1 + 1}
				}
				if op%4 == 2 {
					return ad.MaxPool2d(x, opts)
				}
				return ad.AvgPool2d(x, opts)
			}
		}
		var y *ad.Value
		if err := ad.Try(func() { y = apply(x) }); err != nil {
			fuzzTyped(t, "conv/pool", err)
			return
		}
		if !tensor.EqualShape(y.Shape(), want) {
			t.Fatalf("op %d, x %v, kernel %dx%d stride %d,%d pad %d,%d dil %d,%d groups %d: shape %v, want %v",
				op%4, x.Shape(), kh, kw, sh, sw, ph, pw, dh, dw, g, y.Shape(), want)
		}
		if y.Tensor().Len() > 4096 {
			return
		}
		fuzzDerivatives(t, "conv/pool", x, apply)
		// The float32 kernels (the assembly rows, blocks and pools where
		// the CPU has them) give float64's numbers on inputs of a few bits,
		// whose sums are exact in both but for an average's division.
		vals := tensor.New(tensor.Float64, n, c, h, w)
		for i := range vals.Float64s() {
			vals.Float64s()[i] = float64(i%7-3) / 8
		}
		var res [2][2][]float64
		for i, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			xv := ad.Var(vals.Astype(dt))
			y := apply(xv)
			gs, err := ad.Grad(ad.Sum(ad.Square(y)), xv)
			if err != nil {
				if errors.Is(err, ad.ErrNoGrad) {
					return
				}
				t.Fatalf("conv/pool %v: gradient: %v", dt, err)
			}
			res[i] = [2][]float64{y.Data(), gs[0].Data()}
		}
		for k, what := range []string{"output", "gradient"} {
			for i, b := range res[0][k] {
				if a := res[1][k][i]; a != b && !(math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b))) {
					t.Fatalf("op %d, x %v, kernel %dx%d stride %d,%d pad %d,%d dil %d,%d groups %d: float32 %s[%d] = %v, float64 %v",
						op%4, x.Shape(), kh, kw, sh, sw, ph, pw, dh, dw, g, what, i, a, b)
				}
			}
		}
	})
}
