package ode

import (
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// tuple is a solver state: one value (the forward solve's y), or several
// (the adjoint solve's y, a and one a_θ per parameter).
type tuple []*ad.Value

// rhs is the right-hand side a solver integrates: the derivative of every
// component of the state.
type rhs func(t float64, s tuple) tuple

// comb returns y + Σⱼ w[j]·ks[j], component by component, skipping zero
// weights. With an arena it runs ad ops on arena constants of the
// operands (the result lives in the arena, until its next Reset); else,
// with a recorded operand, it records ad ops; else it runs combRaw, which
// rounds alike. The three give the same bits.
func comb(ar *work, y tuple, w []float64, ks []tuple) tuple {
	out := ar.tup(len(y))
	for c := range y {
		rec := ar != nil || y[c].RequiresGrad()
		for j, k := range ks {
			if w[j] != 0 && k[c].RequiresGrad() {
				rec = true
			}
		}
		if rec {
			in := func(v *ad.Value) *ad.Value {
				if ar != nil {
					return ar.Const(v.Tensor())
				}
				return v
			}
			var acc *ad.Value
			for j, k := range ks {
				if w[j] == 0 {
					continue
				}
				term := ad.MulScalar(in(k[c]), w[j])
				if acc == nil {
					acc = term
				} else {
					acc = ad.Add(acc, term)
				}
			}
			if acc == nil {
				out[c] = in(y[c])
			} else {
				out[c] = ad.Add(in(y[c]), acc)
			}
			continue
		}
		yt := y[c].Tensor()
		dst := tensor.New(yt.DType(), yt.Shape()...)
		if d := dst.Float64s(); d != nil {
			combRaw(d, yt.Float64s(), w, ks, c, (*tensor.Tensor).Float64s)
		} else {
			combRaw(dst.Float32s(), yt.Float32s(), w, ks, c, (*tensor.Tensor).Float32s)
		}
		out[c] = ad.Const(dst)
	}
	return out
}

// work is where a step's unrecorded work runs: an arena, reset at every
// step, and the step's time scalars (f's t), reused from step to step like
// the arena's buffers. Nothing made in it outlives the next reset; what
// must (the state, FSAL's k1, the outputs) is copied out.
type work struct {
	ad.Arena
	scalars []*tensor.Tensor
	used    int
	tuples  []tuple
	nt      int
}

func (w *work) reset() {
	w.Arena.Reset()
	w.used, w.nt = 0, 0
}

// tup returns a tuple of n components to fill, from w when not nil (valid
// until the next reset), else new.
func (w *work) tup(n int) tuple {
	if w == nil {
		return make(tuple, n)
	}
	if w.nt == len(w.tuples) {
		w.tuples = append(w.tuples, make(tuple, n))
	}
	t := w.tuples[w.nt]
	if cap(t) < n {
		t = make(tuple, n)
		w.tuples[w.nt] = t
	}
	w.nt++
	return t[:n]
}

// scalar returns a 0-d constant holding v, in the arena.
func (w *work) scalar(d tensor.DType, v float64) *ad.Value {
	if w.used == len(w.scalars) {
		w.scalars = append(w.scalars, tensor.New(d))
	}
	t := w.scalars[w.used]
	if t.DType() != d {
		t = tensor.New(d)
		w.scalars[w.used] = t
	}
	w.used++
	t.SetFlat(0, v)
	return w.Const(t)
}

// store keeps states across an arena's Resets in two sets of buffers used
// in turn: keep copies a state into the set it did not return last, so the
// state it returned last (the one a step reads) stays intact.
type store struct {
	bufs [2]tuple
	next int
}

// keep returns a copy of s in the store's buffers.
func (st *store) keep(s tuple) tuple {
	b := st.bufs[st.next]
	if b == nil {
		b = make(tuple, len(s))
		for c, v := range s {
			b[c] = ad.Const(tensor.New(v.DType(), v.Shape()...))
		}
		st.bufs[st.next] = b
	}
	st.next ^= 1
	for c, v := range s {
		b[c].Tensor().CopyFrom(v.Tensor())
	}
	return b
}

// combRaw sets dst = y + Σⱼ w[j]·ks[j][c] with the association and the
// rounding of the recorded form (each product rounded, the products
// summed in order, y added last), so that the two agree bit for bit: a
// recorded solve (Backprop, Checkpoint) takes the same steps as an
// unrecorded one.
func combRaw[T float32 | float64](dst, y []T, w []float64, ks []tuple, c int, data func(*tensor.Tensor) []T) {
	first := true
	for j, k := range ks {
		if w[j] == 0 {
			continue
		}
		x, wj := data(k[c].Tensor()), T(w[j])
		x = x[:len(dst)]
		if first {
			for i := range dst {
				dst[i] = T(wj * x[i])
			}
			first = false
			continue
		}
		for i := range dst {
			dst[i] += T(wj * x[i])
		}
	}
	if first {
		copy(dst, y)
		return
	}
	for i := range dst {
		dst[i] = y[i] + dst[i]
	}
}

// finite reports whether every element of s is finite.
func finite(s tuple) bool {
	for _, v := range s {
		t := v.Tensor()
		if d := t.Float64s(); d != nil {
			for _, x := range d {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return false
				}
			}
		} else {
			for _, x := range t.Float32s() {
				if x != x || math.IsInf(float64(x), 0) {
					return false
				}
			}
		}
	}
	return true
}

// size returns the number of elements of s.
func (s tuple) size() int {
	n := 0
	for _, v := range s {
		n += v.Tensor().Len()
	}
	return n
}

// errSumSq returns Σᵢ (eᵢ/scᵢ)² over the elements of one component, with
// eᵢ = Σⱼ w[j]·ks[j][i] and scᵢ = atol + rtol·max(|yᵢ|, |ynᵢ|).
func errSumSq[T float32 | float64](y, yn []T, ks [][]T, w []float64, rtol, atol float64) float64 {
	var s float64
	for i := range y {
		var e float64
		for j, k := range ks {
			if w[j] != 0 {
				e += w[j] * float64(k[i])
			}
		}
		sc := atol + rtol*math.Max(math.Abs(float64(y[i])), math.Abs(float64(yn[i])))
		r := e / sc
		s += r * r
	}
	return s
}

// errNorm is the RMS, over every element of the state, of the weighted
// error estimate Σⱼ w[j]·ks[j] (Hairer's norm). It is NaN or +Inf when an
// element is.
func errNorm(y, yn tuple, ks []tuple, w []float64, rtol, atol float64) float64 {
	var s float64
	for c := range y {
		if d := y[c].Tensor().Float64s(); d != nil {
			var buf [7][]float64
			kk := buf[:len(ks)]
			for j, k := range ks {
				if w[j] != 0 {
					kk[j] = k[c].Tensor().Float64s()
				}
			}
			s += errSumSq(d, yn[c].Tensor().Float64s(), kk, w, rtol, atol)
		} else {
			var buf [7][]float32
			kk := buf[:len(ks)]
			for j, k := range ks {
				if w[j] != 0 {
					kk[j] = k[c].Tensor().Float32s()
				}
			}
			s += errSumSq(y[c].Tensor().Float32s(), yn[c].Tensor().Float32s(), kk, w, rtol, atol)
		}
	}
	n := y.size()
	if n == 0 {
		return 0
	}
	return math.Sqrt(s / float64(n))
}

// rmsScaled returns the RMS of xᵢ/(atol + rtol·|yᵢ|) over the state, for
// the initial step choice; x may be nil (then y itself is measured).
func rmsScaled(y, x tuple, rtol, atol float64) float64 {
	var s float64
	for c := range y {
		yd := y[c].Tensor().Data()
		xd := yd
		if x != nil {
			xd = x[c].Tensor().Data()
		}
		for i := range yd {
			r := xd[i] / (atol + rtol*math.Abs(yd[i]))
			s += r * r
		}
	}
	n := y.size()
	if n == 0 {
		return 0
	}
	return math.Sqrt(s / float64(n))
}

// sub returns a − b component by component, unrecorded.
func sub(a, b tuple) tuple {
	out := make(tuple, len(a))
	for c := range a {
		out[c] = ad.Const(tensor.New(a[c].DType(), a[c].Shape()...).Sub(a[c].Tensor(), b[c].Tensor()))
	}
	return out
}
