package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/tensor"
)

// directCase is one convolution the direct kernels are checked on.
type directCase struct {
	n, c, o, h, w int
	g             Geometry
}

func directCases() []directCase {
	g := func(kh, kw, sh, sw, ph, pw, dh, dw int) Geometry {
		return Geometry{KH: kh, KW: kw, SH: sh, SW: sw, PH: ph, PW: pw, DH: dh, DW: dw}
	}
	return []directCase{
		{n: 3, c: 2, o: 3, h: 6, w: 5, g: g(3, 3, 1, 1, 0, 0, 1, 1)},
		{n: 5, c: 1, o: 4, h: 7, w: 7, g: g(3, 2, 2, 1, 1, 0, 1, 1)},     // stride, padding
		{n: 9, c: 3, o: 2, h: 9, w: 8, g: g(2, 3, 1, 2, 1, 1, 2, 1)},     // dilation
		{n: 40, c: 2, o: 5, h: 5, w: 5, g: g(3, 3, 1, 1, 1, 1, 1, 1)},    // many images a chunk, a short last chunk
		{n: 1, c: 4, o: 3, h: 20, w: 19, g: g(5, 5, 1, 1, 2, 2, 1, 1)},   // one image of more than a chunk's columns
		{n: 4, c: 2, o: 1, h: 2, w: 2, g: g(3, 3, 1, 1, 0, 0, 1, 1)},     // no output positions
		{n: 2, c: 2, o: 3, h: 19, w: 20, g: g(17, 18, 1, 1, 1, 0, 1, 1)}, // more kernel rows and columns than im2col's ranges table
		{n: 6, c: 3, o: 40, h: 4, w: 4, g: g(2, 2, 1, 1, 0, 0, 1, 1)},    // more kernels than weights per kernel: the gradient taken as [O K]
	}
}

// refConv is the convolution and its gradients by loops over every term,
// in float64.
func refConv(x, w, bias, g []float64, n, c, o int, a *Geometry) (y, dx, dw, db []float64) {
	oh, ow := a.OutSize()
	oh, ow = max(oh, 0), max(ow, 0)
	y = make([]float64, n*o*oh*ow)
	dx, dw, db = make([]float64, len(x)), make([]float64, len(w)), make([]float64, o)
	for b := range n {
		for j := range o {
			for yy := range oh {
				for xx := range ow {
					yi := ((b*o+j)*oh+yy)*ow + xx
					s := bias[j]
					db[j] += g[yi]
					for ch := range c {
						for i := range a.KH {
							for k := range a.KW {
								iy, ix := yy*a.SH-a.PH+i*a.DH, xx*a.SW-a.PW+k*a.DW
								if iy < 0 || iy >= a.H || ix < 0 || ix >= a.W {
									continue
								}
								xi := ((b*c+ch)*a.H+iy)*a.W + ix
								wi := ((j*c+ch)*a.KH+i)*a.KW + k
								s += w[wi] * x[xi]
								dx[xi] += w[wi] * g[yi]
								dw[wi] += x[xi] * g[yi]
							}
						}
					}
					y[yi] = s
				}
			}
		}
	}
	return y, dx, dw, db
}

func randSlice(r *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = r.NormFloat64()
	}
	return s
}

// Forward and Backward agree with the loops of every term in float64
// (to rounding), without an activation and with each of gemm's, over
// strides, padding, dilation, chunks of several images, a last chunk short
// of images, an image wider than a chunk and an output with no positions;
// at one thread and at three, the split backward taking ranges of chunks
// or waves of them, their results have the same bits.
func TestDirectMatchesLoops(t *testing.T) {
	defer gemm.SetThreads(gemm.Threads())
	defer func(f, e int) { splitFlops, slotElems = f, e }(splitFlops, slotElems)
	splitFlops = 1 // the chunks split across goroutines at 3 threads
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range directCases() {
		a := tc.g
		a.H, a.W = tc.h, tc.w
		for _, act := range []gemm.Act{gemm.ActNone, gemm.ActReLU, gemm.ActGELU, gemm.ActGELUTanh} {
			t.Run(fmt.Sprintf("n%d_c%d_o%d_%dx%d_act%d", tc.n, tc.c, tc.o, tc.h, tc.w, act), func(t *testing.T) {
				k := tc.c * a.KH * a.KW
				x, w, bias := randSlice(r, tc.n*tc.c*tc.h*tc.w), randSlice(r, tc.o*k), randSlice(r, tc.o)
				oh, ow := a.OutSize()
				oh, ow = max(oh, 0), max(ow, 0)
				g := randSlice(r, tc.n*tc.o*oh*ow)
				// The reference: the pre-activation, the activation, and the
				// gradients of the pre-activation's inputs for g ⊙ act′.
				pre, _, _, _ := refConv(x, w, bias, g, tc.n, tc.c, tc.o, &a)
				wy, gp := make([]float64, len(pre)), make([]float64, len(pre))
				gemm.ActForward(wy, pre, act)
				for i := range gp {
					s := pre[i]
					if act == gemm.ActReLU {
						s = wy[i]
					}
					gp[i] = g[i] * gemm.ActDeriv(s, act)
				}
				_, wdx, wdw, wdb := refConv(x, w, bias, gp, tc.n, tc.c, tc.o, &a)
				var first [5][]float64
				for _, run := range []struct{ threads, slots int }{{1, 1 << 20}, {3, 1 << 20}, {3, 0}} {
					threads := run.threads
					gemm.SetThreads(threads)
					slotElems = run.slots // 0: the chunks in waves, their sums added between
					y, yp := make([]float64, len(wy)), make([]float64, len(wy))
					dx, dw, db := randSlice(r, len(x)), randSlice(r, len(w)), randSlice(r, tc.o)
					Forward(y, yp, x, w, bias, tc.n, tc.c, tc.o, &a, act)
					sv := yp
					if act == gemm.ActReLU {
						sv = y
					}
					Backward(dx, dw, db, g, sv, x, w, tc.n, tc.c, tc.o, &a, act)
					for i, got := range [5][]float64{y, yp, dx, dw, db} {
						want := [5][]float64{wy, pre, wdx, wdw, wdb}[i]
						name := [5]string{"y", "pre", "dx", "dw", "db"}[i]
						for e := range want {
							if math.Abs(got[e]-want[e]) > 1e-12*(1+math.Abs(want[e])) {
								t.Fatalf("threads %d: %s[%d] = %v, want %v", threads, name, e, got[e], want[e])
							}
						}
						if threads == 1 {
							first[i] = append([]float64(nil), got...)
							continue
						}
						for e := range got {
							if math.Float64bits(got[e]) != math.Float64bits(first[i][e]) {
								t.Fatalf("%s[%d] has other bits at 3 threads than at 1: %v, %v", name, e, got[e], first[i][e])
							}
						}
					}
				}
			})
		}
	}
}

// The output and x's gradient have the bits of the batch-wide path
// (Im2col, one product, Swap with the bias; the product's transpose and
// Col2im), in float32, so the direct kernels change no forward value.
func TestDirectBitsOfBatchWide(t *testing.T) {
	defer gemm.SetThreads(gemm.Threads())
	defer func(f int) { splitFlops = f }(splitFlops)
	splitFlops = 1
	r := rand.New(rand.NewPCG(7, 8))
	f32 := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		return s
	}
	for _, tc := range directCases()[:5] {
		a := tc.g
		a.H, a.W = tc.h, tc.w
		n, c, o := tc.n, tc.c, tc.o
		k := c * a.KH * a.KW
		oh, ow := a.OutSize()
		l := oh * ow
		x, w, bias, g := f32(n*c*a.H*a.W), f32(o*k), f32(o), f32(n*o*l)
		cols, tmp := make([]float32, k*n*l), make([]float32, o*n*l)
		want := make([]float32, n*o*l)
		Im2col(cols, x, n, c, &a)
		gemm.Sgemm(false, false, o, n*l, k, 1, w, k, cols, n*l, 0, tmp, n*l)
		Swap(want, tmp, bias, 1, o, n, l)
		wantDx := make([]float32, len(x))
		Swap(tmp, g, nil, 1, n, o, l)
		gemm.Sgemm(true, false, k, n*l, o, 1, w, k, tmp, n*l, 0, cols, n*l)
		Col2im(wantDx, cols, n, c, &a)
		for _, threads := range []int{1, 2} {
			gemm.SetThreads(threads)
			y, dx := make([]float32, len(want)), make([]float32, len(x))
			Forward(y, nil, x, w, bias, n, c, o, &a, gemm.ActNone)
			Backward(dx, nil, nil, g, nil, x, w, n, c, o, &a, gemm.ActNone)
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v threads %d: y[%d] = %v, batch-wide %v", tc, threads, i, y[i], want[i])
				}
			}
			for i := range dx {
				if math.Float32bits(dx[i]) != math.Float32bits(wantDx[i]) {
					t.Fatalf("%+v threads %d: dx[%d] = %v, batch-wide %v", tc, threads, i, dx[i], wantDx[i])
				}
			}
		}
	}
}

// Forward and Backward called from four goroutines at once, each split
// across two threads, give every caller the bits it gets alone on one
// thread: the parts' scratch and the tasks are never shared between calls.
func TestDirectConcurrentCallers(t *testing.T) {
	defer gemm.SetThreads(gemm.Threads())
	defer func(f int) { splitFlops = f }(splitFlops)
	splitFlops = 1
	const callers = 4
	r := rand.New(rand.NewPCG(9, 10))
	a := Geometry{KH: 3, KW: 3, SH: 1, SW: 1, PH: 1, PW: 1, DH: 1, DW: 1, H: 9, W: 8}
	n, c, o := 12, 3, 5
	type job struct{ x, w, b, g, y, dx, dw, db []float32 }
	f32 := func(k int) []float32 {
		s := make([]float32, k)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		return s
	}
	run := func(j *job) {
		Forward(j.y, nil, j.x, j.w, j.b, n, c, o, &a, gemm.ActReLU)
		Backward(j.dx, j.dw, j.db, j.g, j.y, j.x, j.w, n, c, o, &a, gemm.ActReLU)
	}
	var want, got []*job
	for range callers {
		x, w, b, g := f32(n*c*a.H*a.W), f32(o*c*9), f32(o), f32(n*o*a.H*a.W)
		mk := func() *job {
			return &job{x: x, w: w, b: b, g: g, y: make([]float32, len(g)), dx: make([]float32, len(x)), dw: make([]float32, len(w)), db: make([]float32, o)}
		}
		want, got = append(want, mk()), append(got, mk())
	}
	gemm.SetThreads(1)
	for _, j := range want {
		run(j)
	}
	gemm.SetThreads(2)
	done := make(chan struct{})
	for _, j := range got {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 5 {
				run(j)
			}
		}()
	}
	for range callers {
		<-done
	}
	for k := range callers {
		for i, p := range [][2][]float32{{got[k].y, want[k].y}, {got[k].dx, want[k].dx}, {got[k].dw, want[k].dw}, {got[k].db, want[k].db}} {
			for e := range p[1] {
				if math.Float32bits(p[0][e]) != math.Float32bits(p[1][e]) {
					t.Fatalf("caller %d, result %d, element %d: %v, alone on one thread %v", k, i, e, p[0][e], p[1][e])
				}
			}
		}
	}
}

// ForwardPool and BackwardPool have the bits of Forward, MaxPool2d's
// kernels (forward, then backward from its gradient) and Backward, in
// float32 and float64, without an activation and with ReLU, over output
// planes of even and odd height and width (a last row or column no window
// covers), values with ties (small integers: windows of equal maxima, and
// all-zero windows after the ReLU) and a NaN, with and without the caller
// recording the windows' masks, at one thread and at three.
func TestPoolMatchesUnfused(t *testing.T) {
	defer gemm.SetThreads(gemm.Threads())
	defer func(f int) { splitFlops = f }(splitFlops)
	splitFlops = 1
	r := rand.New(rand.NewPCG(11, 12))
	g := func(kh, kw, sh, sw, ph, pw int) Geometry {
		return Geometry{KH: kh, KW: kw, SH: sh, SW: sw, PH: ph, PW: pw, DH: 1, DW: 1}
	}
	cases := []directCase{
		{n: 3, c: 2, o: 3, h: 7, w: 6, g: g(3, 3, 1, 1, 0, 0)},   // 5×4 outputs: an odd height
		{n: 40, c: 2, o: 5, h: 6, w: 6, g: g(3, 3, 1, 1, 1, 1)},  // 6×6, many images a chunk
		{n: 2, c: 1, o: 4, h: 26, w: 21, g: g(3, 2, 1, 1, 0, 0)}, // 24×20: an image of more than a chunk's columns
		{n: 5, c: 3, o: 2, h: 9, w: 10, g: g(2, 2, 2, 1, 0, 0)},  // 4×9: an odd width
	}
	for _, tc := range cases {
		a := tc.g
		a.H, a.W = tc.h, tc.w
		n, c, o := tc.n, tc.c, tc.o
		oh, ow := a.OutSize()
		pg := Geometry{KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, H: oh, W: ow}
		l, pl := oh*ow, (oh/2)*(ow/2)
		for _, act := range []gemm.Act{gemm.ActNone, gemm.ActReLU} {
			// Small integers: exact products, so windows tie often.
			ints := func(k int) []float64 {
				s := make([]float64, k)
				for i := range s {
					s[i] = float64(r.IntN(5) - 2)
				}
				return s
			}
			x, w, bias, gp := ints(n*c*a.H*a.W), ints(o*c*a.KH*a.KW), ints(o), randSlice(r, n*o*pl)
			x[len(x)/2] = math.NaN()
			// The unfused kernels.
			y, py := make([]float64, n*o*l), make([]float64, n*o*pl)
			Forward(y, nil, x, w, bias, n, c, o, &a, act)
			poolPlanes(MaxPool, &pg, py, y, nil, 0, n*o, n*o)
			gy := make([]float64, n*o*l)
			poolPlanes(MaxPoolBack, &pg, gy, gp, y, 0, n*o, n*o)
			wdx, wdw, wdb := make([]float64, len(x)), make([]float64, len(w)), make([]float64, o)
			Backward(wdx, wdw, wdb, gy, y, x, w, n, c, o, &a, act)
			for _, threads := range []int{1, 3} {
				for _, keep := range []bool{true, false} {
					gemm.SetThreads(threads)
					name := fmt.Sprintf("n%d_%dx%d_act%d_threads%d_keep%v", n, oh, ow, act, threads, keep)
					var wins []uint8
					if keep {
						wins = make([]uint8, n*o*pl)
					}
					p := make([]float64, n*o*pl)
					ForwardPool(p, wins, x, w, bias, n, c, o, &a, act)
					sameBits(t, name+" pooled", p, py)
					if !keep {
						continue
					}
					dx, dw, db := randSlice(r, len(x)), randSlice(r, len(w)), randSlice(r, o)
					BackwardPool(dx, dw, db, gp, wins, x, w, n, c, o, &a, act)
					sameBits(t, name+" dx", dx, wdx)
					sameBits(t, name+" dw", dw, wdw)
					sameBits(t, name+" db", db, wdb)
				}
			}
		}
	}
	// In float32 too (the pool's assembly kernels).
	a := Geometry{KH: 5, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, H: 28, W: 28}
	n, c, o := 6, 1, 4
	f32 := func(k int) []float32 {
		s := make([]float32, k)
		for i := range s {
			s[i] = float32(r.IntN(7) - 3)
		}
		return s
	}
	x, w, bias, gp := f32(n*c*28*28), f32(o*25), f32(o), f32(n*o*144)
	y, py, gy := make([]float32, n*o*576), make([]float32, n*o*144), make([]float32, n*o*576)
	pg := Geometry{KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, H: 24, W: 24}
	Forward(y, nil, x, w, bias, n, c, o, &a, gemm.ActReLU)
	poolPlanes(MaxPool, &pg, py, y, nil, 0, n*o, n*o)
	poolPlanes(MaxPoolBack, &pg, gy, gp, y, 0, n*o, n*o)
	wdx, wdw, wdb := make([]float32, len(x)), make([]float32, len(w)), make([]float32, o)
	Backward(wdx, wdw, wdb, gy, y, x, w, n, c, o, &a, gemm.ActReLU)
	wins, p := make([]uint8, len(py)), make([]float32, len(py))
	dx, dw, db := make([]float32, len(x)), make([]float32, len(w)), make([]float32, o)
	ForwardPool(p, wins, x, w, bias, n, c, o, &a, gemm.ActReLU)
	BackwardPool(dx, dw, db, gp, wins, x, w, n, c, o, &a, gemm.ActReLU)
	for i, pair := range [][2][]float32{{p, py}, {dx, wdx}, {dw, wdw}, {db, wdb}} {
		for e := range pair[1] {
			if math.Float32bits(pair[0][e]) != math.Float32bits(pair[1][e]) {
				t.Fatalf("float32 result %d, element %d: %v, unfused %v", i, e, pair[0][e], pair[1][e])
			}
		}
	}
}

// A pooled convolution refuses the GELUs (BackwardPool reads the output,
// not the pre-activation their derivatives need).
func TestPoolRefusesGELU(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("ForwardPool with GELU did not panic")
		}
	}()
	a := Geometry{KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, H: 2, W: 2}
	ForwardPool(make([]float32, 1), nil, make([]float32, 4), make([]float32, 1), nil, 1, 1, 1, &a, gemm.ActGELU)
}

// sameBits fails t unless got and want have the same bits, NaNs included.
func sameBits(t *testing.T, name string, got, want []float64) {
	t.Helper()
	for e := range want {
		if math.Float64bits(got[e]) != math.Float64bits(want[e]) {
			t.Fatalf("%s[%d] = %v, unfused %v", name, e, got[e], want[e])
		}
	}
}

// poolMask22 and unpool22 in float32, their assembly (four windows of a
// row at a time) against their Go loops (blockAVX2 off), and both against
// MaxPool2d's kernels followed by ReLU's derivative: planes of widths 2 to
// 27 and odd and even heights, with ties, ±0, ±Inf and NaNs of several
// payloads, every bit of the maxima, the masks and the gradients.
func TestPoolMaskAsm(t *testing.T) {
	defer func(b bool) { blockAVX2 = b }(blockAVX2)
	r := rand.New(rand.NewPCG(13, 14))
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, 1, 2, -1, float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00002)}
	for w := 2; w <= 27; w++ {
		for _, h := range []int{2, 3, 6, 7} {
			x := make([]float32, h*w)
			for i := range x {
				if r.IntN(4) == 0 {
					x[i] = vals[r.IntN(len(vals))]
				} else {
					x[i] = float32(r.IntN(5) - 2)
				}
			}
			ph, pw := h/2, w/2
			g := make([]float32, ph*pw)
			for i := range g {
				g[i] = float32(r.NormFloat64())
			}
			g[0] = float32(math.Inf(1)) // 0·Inf: NaN on the window's other elements, as the Go loops
			type res struct {
				out       []float32
				wins      []uint8
				back, bre []float32
			}
			run := func(asm bool) res {
				blockAVX2 = asm
				v := res{make([]float32, ph*pw), make([]uint8, ph*pw), make([]float32, h*w), make([]float32, h*w)}
				for i := range v.back {
					v.back[i], v.bre[i] = 7, 7 // written everywhere, the uncovered elements with 0
				}
				poolMask22(v.out, v.wins, x, h, w)
				unpool22(v.back, g, v.wins, h, w, false)
				unpool22(v.bre, g, v.wins, h, w, true)
				return v
			}
			asm, gol := run(true), run(false)
			blockAVX2 = true
			// MaxPool2d's kernels and ReLU's derivative.
			pg := Geometry{KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, H: h, W: w}
			want, wback := make([]float32, ph*pw), make([]float32, h*w)
			poolPlanes(MaxPool, &pg, want, x, nil, 0, 1, 1)
			poolPlanes(MaxPoolBack, &pg, wback, g, x, 0, 1, 1)
			wrelu := make([]float32, h*w)
			for i, e := range x {
				if e > 0 {
					wrelu[i] = wback[i]
				}
			}
			name := fmt.Sprintf("%d×%d", h, w)
			for _, c := range []struct {
				what      string
				got, want []float32
			}{
				{"maxima (asm)", asm.out, want}, {"maxima (Go)", gol.out, want},
				{"gradient (asm)", asm.back, wback}, {"gradient (Go)", gol.back, wback},
				{"gradient with ReLU (asm)", asm.bre, wrelu}, {"gradient with ReLU (Go)", gol.bre, wrelu},
			} {
				for i := range c.want {
					if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) {
						t.Fatalf("%s: %s[%d] = %v (%#x), want %v (%#x)", name, c.what, i, c.got[i], math.Float32bits(c.got[i]), c.want[i], math.Float32bits(c.want[i]))
					}
				}
			}
			for i := range asm.wins {
				if asm.wins[i] != gol.wins[i] {
					t.Fatalf("%s: mask %d is %#x in assembly, %#x in Go", name, i, asm.wins[i], gol.wins[i])
				}
			}
		}
	}
}

// PoolWins against Pool, kind by kind, bit for bit: the pool and its
// masks, the gradient routed from the masks (MaxPoolBack) and the mean
// over the ties (MaxPoolLin), on planes of even and odd height and width
// with ties, ±0 and NaNs, with the masks of the pooled planes repeated
// over three times as many (a batched cotangent), at one thread and three
// (split by planes), in float32 and float64.
func TestPoolWinsMatchesPool(t *testing.T) {
	defer gemm.SetThreads(gemm.Threads())
	r := rand.New(rand.NewPCG(15, 16))
	vals := []float64{0, math.Copysign(0, -1), 1, 2, -1, math.NaN(), math.Inf(-1)}
	for _, hw := range [][2]int{{4, 6}, {5, 7}, {8, 8}, {2, 3}, {40, 40}} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			for _, threads := range []int{1, 3} {
				gemm.SetThreads(threads)
				h, w := hw[0], hw[1]
				a := Geometry{KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, H: h, W: w}
				m, rep := 4, 3
				x := tensor.New(dt, m, h, w)
				for i := range x.Len() {
					if r.IntN(3) == 0 {
						x.SetFlat(i, vals[r.IntN(len(vals))])
					} else {
						x.SetFlat(i, float64(r.IntN(4)))
					}
				}
				g, tn := tensor.New(dt, rep*m, h/2, w/2), tensor.New(dt, rep*m, h, w)
				for i := range g.Len() {
					g.SetFlat(i, r.NormFloat64())
				}
				for i := range tn.Len() {
					tn.SetFlat(i, r.NormFloat64())
				}
				name := fmt.Sprintf("%v %d×%d threads %d", dt, h, w, threads)
				wins := make([]uint8, m*(h/2)*(w/2))
				got, want := tensor.New(dt, m, h/2, w/2), tensor.New(dt, m, h/2, w/2)
				PoolWins(MaxPool, &a, got, x, wins, m, m)
				Pool(MaxPool, &a, want, x, nil, m, m)
				sameTensorBits(t, name+" pool", got, want)
				got, want = tensor.New(dt, rep*m, h, w), tensor.New(dt, rep*m, h, w)
				PoolWins(MaxPoolBack, &a, got, g, wins, rep*m, m)
				Pool(MaxPoolBack, &a, want, g, x, rep*m, m)
				sameTensorBits(t, name+" back", got, want)
				got, want = tensor.New(dt, rep*m, h/2, w/2), tensor.New(dt, rep*m, h/2, w/2)
				PoolWins(MaxPoolLin, &a, got, tn, wins, rep*m, m)
				Pool(MaxPoolLin, &a, want, tn, x, rep*m, m)
				sameTensorBits(t, name+" lin", got, want)
			}
		}
	}
}

func sameTensorBits(t *testing.T, name string, got, want *tensor.Tensor) {
	t.Helper()
	for i := range want.Len() {
		a, b := got.AtFlat(i), want.AtFlat(i)
		if math.Float64bits(a) != math.Float64bits(b) {
			t.Fatalf("%s[%d] = %v, Pool's %v", name, i, a, b)
		}
	}
}
