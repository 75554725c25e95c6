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

func TestRun(t *testing.T) {
	var out bytes.Buffer
	d, err := run(&out, 1)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "per-example gradients match the loop: max difference ") {
		t.Fatalf("last line %q\n%s", last, out.String())
	}
	if d > tolerance {
		t.Fatalf("max difference %g", d)
	}
}

// TestFiniteDifference checks a few per-example gradients against central
// differences of the loss of that example, so that the match with the loop
// is not a match of two wrong answers.
func TestFiniteDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2))
	ps := []*ad.Value{randn(r, 0.5, nIn, nHidden), randn(r, 0.1, nHidden), randn(r, 0.25, nHidden, nOut), randn(r, 0.1, nOut)}
	x, y := data(r)
	pg, err := perExample(ps, x, y)
	if err != nil {
		t.Fatal(err)
	}
	const h = 1e-6
	for _, c := range []struct{ i, k, j int }{{0, 0, 5}, {3, 1, 2}, {17, 2, 40}, {31, 3, 1}} {
		d := ps[c.k].Tensor().Data()
		at := func(delta float64) float64 {
			e := append([]float64(nil), d...)
			e[c.j] += delta
			q := append([]*ad.Value(nil), ps...)
			q[c.k] = ad.Const(tensor.FromFloat64(e, ps[c.k].Shape()...))
			return loss(q[0], q[1], q[2], q[3], row(x, c.i), row(y, c.i)).Item()
		}
		fd := (at(h) - at(-h)) / (2 * h)
		n := len(d)
		got := pg[c.k].Tensor().Data()[c.i*n+c.j]
		if math.Abs(got-fd) > 1e-7 || got == 0 {
			t.Errorf("example %d, parameter %d[%d]: gradient %.12g, finite difference %.12g", c.i, c.k, c.j, got, fd)
		}
	}
}
