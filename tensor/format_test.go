package tensor_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// The expected texts are written by hand from NumPy's layout (nested
// brackets, one row per line, right-aligned columns, "..." for the elided
// middle), not copied from this package's output.
func TestFormatLayout(t *testing.T) {
	m := tensor.FromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9.5}, 3, 3)
	tenth := 0.1 // a variable: 0.1+0.2 in constants is exactly 0.3
	cases := []struct {
		name, got, want string
	}{
		{"3x3 %v", fmt.Sprint(m), "float64[3 3] [[  1   2   3]\n" +
			"              [  4   5   6]\n" +
			"              [  7   8 9.5]]"},
		{"3x3 %.2f", fmt.Sprintf("%.2f", m), "[[1.00 2.00 3.00]\n [4.00 5.00 6.00]\n [7.00 8.00 9.50]]"},
		{"%e", fmt.Sprintf("%.1e", tensor.FromSlice([]float64{1500, -0.25}, 2)), "[ 1.5e+03 -2.5e-01]"},
		{"scalar", fmt.Sprint(tensor.Scalar(tensor.Float32, 0.1)), "float32[] 0.1"},
		{"vector", tensor.FromSlice([]float64{-1, 0.5}, 2).String(), "float64[2] [ -1 0.5]"},
		{"empty", fmt.Sprint(tensor.Zeros(tensor.Float64, 0)), "float64[0] []"},
		{"3-d", fmt.Sprint(tensor.Arange(tensor.Float32, 0, 8, 1).Reshape(2, 2, 2)), "float32[2 2 2] [[[0 1]\n" +
			"                 [2 3]]\n" +
			"\n" +
			"                [[4 5]\n" +
			"                 [6 7]]]"},
		{"special", fmt.Sprint(tensor.FromSlice([]float64{math.NaN(), math.Inf(-1), tenth + 0.2}, 3)), "float64[3] [ NaN -Inf  0.3]"},
		{"%#v", fmt.Sprintf("%#v", m), "tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9.5}, 3, 3)"},
		{"%#v float32", fmt.Sprintf("%#v", tensor.FromSlice([]float32{0.1, float32(math.Inf(1))}, 1, 2)),
			"tensor.FromFloat32([]float32{0.1, float32(math.Inf(1))}, 1, 2)"},
		{"%#v scalar", fmt.Sprintf("%#v", tensor.Scalar(tensor.Float64, tenth+0.2)), "tensor.FromFloat64([]float64{0.30000000000000004})"},
		{"bad verb", fmt.Sprintf("%d", tensor.Ones(tensor.Float64, 1)), "%!d(tensor.Tensor=float64[1] [1])"},
		{"nil", fmt.Sprint((*tensor.Tensor)(nil)), "<nil>"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", c.name, c.got, c.want)
		}
	}
	if rows := strings.Count(fmt.Sprint(m), "\n") + 1; rows != 3 {
		t.Errorf("a 3×3 tensor prints %d lines, want 3", rows)
	}
}

func TestFormatElision(t *testing.T) {
	long := tensor.Arange(tensor.Float64, 0, 2000, 1)
	if got, want := fmt.Sprint(long), "float64[2000] [   0    1    2 ... 1997 1998 1999]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	o := tensor.PrintOptions{Threshold: 5, EdgeItems: 1}
	m := tensor.Arange(tensor.Float64, 0, 12, 1).Reshape(4, 3)
	want := "float64[4 3] [[ 0 ...  2]\n" +
		"              ...\n" +
		"              [ 9 ... 11]]"
	if got := o.Sprint(m); got != want {
		t.Errorf("Sprint with options:\ngot\n%s\nwant\n%s", got, want)
	}
	// The package-wide setting, restored afterwards; a negative threshold
	// never elides.
	prev := tensor.SetPrintOptions(o)
	got := fmt.Sprint(m)
	tensor.SetPrintOptions(tensor.PrintOptions{Threshold: -1})
	full := fmt.Sprint(long)
	if back := tensor.SetPrintOptions(prev); back.Threshold != -1 {
		t.Errorf("SetPrintOptions returned %+v, want the options set before", back)
	}
	if got != want {
		t.Errorf("with SetPrintOptions:\ngot\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(full, "...") || !strings.Contains(full, " 1000 ") {
		t.Errorf("Threshold -1 elided: %.80s…", full)
	}
	if tensor.CurrentPrintOptions() != prev {
		t.Errorf("options not restored: %+v", tensor.CurrentPrintOptions())
	}
}

// Precision: %v prints 8 significant digits by default; the verb's
// precision and PrintOptions.Precision override it.
func TestFormatPrecision(t *testing.T) {
	x := tensor.FromSlice([]float64{math.Pi}, 1)
	for _, c := range []struct{ got, want string }{
		{fmt.Sprint(x), "float64[1] [3.1415927]"},
		{fmt.Sprintf("%.3v", x), "float64[1] [3.14]"},
		{fmt.Sprintf("%.3f", x), "[3.142]"},
		{fmt.Sprintf("%g", x), "[3.141592653589793]"},
		{tensor.PrintOptions{Precision: -1}.Sprint(x), "float64[1] [3.141592653589793]"},
		{tensor.PrintOptions{Precision: 2}.Sprint(x), "float64[1] [3.1]"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
