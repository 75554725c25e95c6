package tensor

// Dropout sets t = x ⊙ m and returns t, where m is the dropout mask of drop
// probability p drawn for (seed, offset): element i is kept and scaled by
// 1/(1−p) when DropoutKeep(p, seed, offset+i), and multiplied by 0
// otherwise. The mask is a pure function of its arguments, so a backward
// pass (or a replay) recomputes it instead of storing it. t may be x.
func (t *Tensor) Dropout(x *Tensor, p float64, seed, offset uint64) *Tensor {
	if t != x {
		t.resize(x.dtype, x.shape)
	} else {
		t.BumpVersion()
	}
	if x.dtype == Float32 {
		dropout(t.f32, x.f32, p, seed, offset)
	} else {
		dropout(t.f64, x.f64, p, seed, offset)
	}
	return t
}

func dropout[T Float](dst, x []T, p float64, seed, offset uint64) {
	keep := T(1 / (1 - p))
	th := dropThreshold(p)
	x = x[:len(dst)]
	for i := range dst {
		m := T(0)
		if mix64(seed, offset+uint64(i))>>11 >= th {
			m = keep
		}
		dst[i] = x[i] * m // as a multiplication by the mask: −0, NaN and Inf behave alike
	}
}

// DropoutKeep reports whether dropout with drop probability p keeps the
// element with counter ctr under seed: whether its 53-bit uniform draw
// (a counter-based hash of seed and ctr) is at least p.
func DropoutKeep(p float64, seed, ctr uint64) bool {
	return mix64(seed, ctr)>>11 >= dropThreshold(p)
}

func dropThreshold(p float64) uint64 { return uint64(p * (1 << 53)) }

// mix64 is a counter-based generator: the SplitMix64 finaliser applied to a
// combination of key and counter. It is stateless, so any element of any
// mask can be recomputed on its own.
func mix64(key, ctr uint64) uint64 {
	z := key*0x9e3779b97f4a7c15 + ctr*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	z += ctr
	z = (z ^ (z >> 33)) * 0xff51afd7ed558ccd
	z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53
	return z ^ (z >> 33)
}
