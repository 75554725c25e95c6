package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// TestLaplacian checks the vmapped Hessian trace against central second
// differences of u at a few points, with random parameters.
func TestLaplacian(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ps := initParams(r)
	pd := []float64{0.3, 0.6, 0.81, 0.12, 0.5, 0.5}
	args := append(append([]*ad.Value(nil), ps...), ad.Const(tensor.FromFloat64(pd, 3, 2)))
	lap := laplacian(args...)[0].Tensor().Data()
	if len(lap) != 3 {
		t.Fatalf("laplacian has %d values, want 3", len(lap))
	}
	at := func(x, y float64) float64 {
		a := append(append([]*ad.Value(nil), ps...), ad.Const(tensor.FromFloat64([]float64{x, y}, 2)))
		return u(a...).Item()
	}
	const h = 1e-4
	for k := range 3 {
		x, y := pd[2*k], pd[2*k+1]
		fd := (at(x+h, y) + at(x-h, y) + at(x, y+h) + at(x, y-h) - 4*at(x, y)) / (h * h)
		if math.Abs(lap[k]-fd) > 1e-5*math.Max(1, math.Abs(fd)) || lap[k] == 0 {
			t.Errorf("point (%g, %g): Δu = %.10g, finite differences %.10g", x, y, lap[k], fd)
		}
	}
}

// TestRun trains the full configuration of the example (some 13 s).
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for some 13 s")
	}
	var out bytes.Buffer
	e, err := run(&out, full)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "max error vs exact solution: ") {
		t.Fatalf("last line %q\n%s", last, out.String())
	}
	if e > full.Bound {
		t.Fatalf("max error %g above %g", e, full.Bound)
	}
	t.Log(out.String())
}
