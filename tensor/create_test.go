package tensor_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

func TestCreateShapesAndValues(t *testing.T) {
	for _, d := range []tensor.DType{tensor.Float32, tensor.Float64} {
		z := tensor.Zeros(d, 2, 3)
		o := tensor.Ones(d, 2, 3)
		if z.DType() != d || !slices.Equal(z.Shape(), []int{2, 3}) || o.DType() != d {
			t.Fatalf("%v: zeros %v %v, ones %v", d, z.DType(), z.Shape(), o.DType())
		}
		for i := range 6 {
			if z.AtFlat(i) != 0 || o.AtFlat(i) != 1 {
				t.Fatalf("%v: zeros %v ones %v", d, z.Data(), o.Data())
			}
		}
		if s := tensor.Zeros(d); s.Dims() != 0 || s.Len() != 1 {
			t.Fatalf("%v: Zeros() is not a scalar: %v", d, s.Shape())
		}
		e := tensor.Eye(d, 3)
		for i := range 3 {
			for j := range 3 {
				want := 0.0
				if i == j {
					want = 1
				}
				if e.At(i, j) != want {
					t.Fatalf("%v: eye %v", d, e.Data())
				}
			}
		}
		like := []*tensor.Tensor{tensor.ZerosLike(o), tensor.OnesLike(z), tensor.FullLike(z, -2.5)}
		for k, l := range like {
			if l.DType() != d || !slices.Equal(l.Shape(), []int{2, 3}) || l.AtFlat(5) != []float64{0, 1, -2.5}[k] {
				t.Fatalf("%v: like %d: %v %v %v", d, k, l.DType(), l.Shape(), l.Data())
			}
		}
	}
}

func TestArangeLinspace(t *testing.T) {
	cases := []struct {
		got  *tensor.Tensor
		want []float64
	}{
		{tensor.Arange(tensor.Float64, 0, 5, 1), []float64{0, 1, 2, 3, 4}},
		{tensor.Arange(tensor.Float64, 1, 2, 0.25), []float64{1, 1.25, 1.5, 1.75}},
		{tensor.Arange(tensor.Float64, 3, 0, -1), []float64{3, 2, 1}},
		{tensor.Arange(tensor.Float64, 0, 1, 0.3), []float64{0, 0.3, 0.6, 0.8999999999999999}}, // ⌈1/0.3⌉ = 4, as NumPy
		{tensor.Arange(tensor.Float64, 5, 0, 1), []float64{}},
		{tensor.Linspace(tensor.Float64, 0, 1, 5), []float64{0, 0.25, 0.5, 0.75, 1}},
		{tensor.Linspace(tensor.Float64, 2, 2, 3), []float64{2, 2, 2}},
		{tensor.Linspace(tensor.Float64, -1, 1, 1), []float64{-1}},
		{tensor.Linspace(tensor.Float64, 0, 1, 0), []float64{}},
		{tensor.Linspace(tensor.Float32, 0, 0.3, 4), []float64{0, float64(float32(0.1)), float64(float32(0.2)), float64(float32(0.3))}},
	}
	for i, c := range cases {
		if c.got.Dims() != 1 || !slices.Equal(c.got.Data(), c.want) {
			t.Errorf("case %d: got %v (shape %v), want %v", i, c.got.Data(), c.got.Shape(), c.want)
		}
	}
}

func TestFromSliceCopies(t *testing.T) {
	d := []float64{1, 2, 3, 4}
	x := tensor.FromSlice(d, 2, 2)
	d[0] = 9
	if x.At(0, 0) != 1 || x.DType() != tensor.Float64 {
		t.Fatalf("FromSlice shares its data: %v", x.Data())
	}
	f := []float32{1, 2}
	y := tensor.FromSlice(f, 2)
	f[1] = 7
	if y.At(1) != 2 || y.DType() != tensor.Float32 {
		t.Fatalf("FromSlice float32: %v %v", y.DType(), y.Data())
	}
	if s := tensor.FromSlice([]float64{2.5}); s.Dims() != 0 || s.Item() != 2.5 {
		t.Fatalf("scalar: %v", s.Shape())
	}
	// FromFloat64 is the form that does not copy.
	z := tensor.FromFloat64(d, 4)
	d[1] = -1
	if z.At(1) != -1 {
		t.Fatal("FromFloat64 copied")
	}
}

// Bad arguments panic with a typed error wrapping a sentinel, which
// errs.Catch (and ad.Try) returns.
func TestCreateErrors(t *testing.T) {
	cases := []struct {
		name string
		f    func()
		want error
	}{
		{"zeros negative", func() { tensor.Zeros(tensor.Float64, 2, -1) }, tensor.ErrShape},
		{"ones negative", func() { tensor.Ones(tensor.Float32, -3) }, tensor.ErrShape},
		{"eye negative", func() { tensor.Eye(tensor.Float64, -1) }, tensor.ErrShape},
		{"zeros bad dtype", func() { tensor.Zeros(tensor.DType(7), 2) }, tensor.ErrDType},
		{"arange step 0", func() { tensor.Arange(tensor.Float64, 0, 1, 0) }, tensor.ErrArgument},
		{"arange NaN step", func() { tensor.Arange(tensor.Float64, 0, 1, math.NaN()) }, tensor.ErrArgument},
		{"arange Inf stop", func() { tensor.Arange(tensor.Float64, 0, math.Inf(1), 1) }, tensor.ErrArgument},
		{"arange bad dtype", func() { tensor.Arange(tensor.DType(2), 0, 1, 1) }, tensor.ErrDType},
		{"linspace n<0", func() { tensor.Linspace(tensor.Float64, 0, 1, -1) }, tensor.ErrArgument},
		{"rand nil", func() { tensor.Rand(nil, tensor.Float64, 2) }, tensor.ErrArgument},
		{"randn nil", func() { tensor.Randn(nil, tensor.Float32, 2) }, tensor.ErrArgument},
		{"randn negative", func() { tensor.Randn(tensor.NewRNG(1), tensor.Float32, -2) }, tensor.ErrShape},
		{"zeroslike nil", func() { tensor.ZerosLike(nil) }, tensor.ErrArgument},
		{"oneslike nil", func() { tensor.OnesLike(nil) }, tensor.ErrArgument},
		{"fulllike nil", func() { tensor.FullLike(nil, 1) }, tensor.ErrArgument},
		{"randlike nil", func() { tensor.RandLike(tensor.NewRNG(1), nil) }, tensor.ErrArgument},
		{"randnlike nil", func() { tensor.RandnLike(tensor.NewRNG(1), nil) }, tensor.ErrArgument},
		{"fromslice length", func() { tensor.FromSlice([]float64{1, 2, 3}, 2, 2) }, tensor.ErrShape},
	}
	for _, c := range cases {
		err := errs.Catch(c.f)
		var se *tensor.ShapeError
		if !errors.Is(err, c.want) || !errors.As(err, &se) || !errs.Module(err) {
			t.Errorf("%s: error %v, want a *ShapeError wrapping %v", c.name, err, c.want)
		}
	}
}

// SplitMix64 seeded with 0 gives the published reference outputs (those
// of the authors' reference implementation, quoted widely as test
// vectors).
func TestRNGSplitMix64Vectors(t *testing.T) {
	r := tensor.NewRNG(0)
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f, 0xf88bb8a8724c81ec}
	for i, w := range want {
		if g := r.Uint64(); g != w {
			t.Fatalf("output %d: %#x, want %#x", i, g, w)
		}
	}
	var zero tensor.RNG // the zero value is the generator seeded with 0
	if zero.Uint64() != want[0] {
		t.Fatal("the zero RNG is not seeded with 0")
	}
}

func TestRNGUniform(t *testing.T) {
	r := tensor.NewRNG(42)
	const n = 100000
	var s64, s32 float64
	for range n {
		u, f := r.Float64(), r.Float32()
		if u < 0 || u >= 1 || f < 0 || f >= 1 {
			t.Fatalf("draw out of [0, 1): %v %v", u, f)
		}
		s64 += u
		s32 += float64(f)
	}
	// The mean of n uniforms has standard deviation 1/√(12n) ≈ 0.0009.
	if math.Abs(s64/n-0.5) > 0.005 || math.Abs(s32/n-0.5) > 0.005 {
		t.Fatalf("means %v %v", s64/n, s32/n)
	}
}

// The normals' moments, and each draw against the polar method computed
// with math.Log on the same uniforms (an independent logarithm).
func TestRNGNorm(t *testing.T) {
	r := tensor.NewRNG(7)
	const n = 200000
	var m1, m2, m4 float64
	for range n {
		z := r.Norm()
		m1 += z
		m2 += z * z
		m4 += z * z * z * z
	}
	m1, m2, m4 = m1/n, m2/n, m4/n
	if math.Abs(m1) > 0.015 || math.Abs(m2-1) > 0.02 || math.Abs(m4-3) > 0.1 {
		t.Fatalf("moments: mean %v, E z² %v, E z⁴ %v (want 0, 1, 3)", m1, m2, m4)
	}
	a, b := tensor.NewRNG(99), tensor.NewRNG(99)
	for range 1000 {
		var u, v, s float64
		for {
			u, v = 2*b.Float64()-1, 2*b.Float64()-1
			if s = u*u + v*v; s > 0 && s < 1 {
				break
			}
		}
		f := math.Sqrt(-2 * math.Log(s) / s)
		for _, want := range []float64{u * f, v * f} {
			if got := a.Norm(); math.Abs(got-want) > 1e-14*math.Max(1, math.Abs(want)) {
				t.Fatalf("normal %v, polar method with math.Log %v", got, want)
			}
		}
	}
}

// The same seed gives the same tensors; Randn in float32 rounds the
// float64 draws.
func TestRandDeterministic(t *testing.T) {
	a := tensor.Randn(tensor.NewRNG(3), tensor.Float64, 4, 5)
	b := tensor.Randn(tensor.NewRNG(3), tensor.Float64, 4, 5)
	c := tensor.Randn(tensor.NewRNG(3), tensor.Float32, 4, 5)
	if !slices.Equal(a.Data(), b.Data()) {
		t.Fatal("same seed, different draws")
	}
	for i, v := range a.Data() {
		if float64(float32(v)) != c.AtFlat(i) {
			t.Fatalf("float32 draw %v, float64 draw %v", c.AtFlat(i), v)
		}
	}
	u := tensor.RandLike(tensor.NewRNG(3), c)
	if u.DType() != tensor.Float32 || !slices.Equal(u.Shape(), []int{4, 5}) {
		t.Fatalf("RandLike: %v %v", u.DType(), u.Shape())
	}
	if n := tensor.RandnLike(tensor.NewRNG(3), a); !slices.Equal(n.Data(), a.Data()) {
		t.Fatal("RandnLike differs from Randn")
	}
}

// A dtype that is not Float32 or Float64 is refused by every constructor
// and by Resize and Astype (it made a tensor read as zeros).
func TestBadDTypeRefusedEverywhere(t *testing.T) {
	for name, f := range map[string]func(){
		"New":    func() { tensor.New(tensor.DType(7), 2) },
		"Full":   func() { tensor.Full(tensor.DType(7), 1, 2) },
		"Scalar": func() { tensor.Scalar(tensor.DType(9), 1) },
		"Astype": func() { tensor.New(tensor.Float64, 2).Astype(tensor.DType(7)) },
		"Resize": func() { tensor.New(tensor.Float64, 2).Resize(tensor.DType(3), 4) },
	} {
		if err := errs.Catch(f); !errors.Is(err, tensor.ErrDType) {
			t.Errorf("%s: %v, want ErrDType", name, err)
		}
	}
}
