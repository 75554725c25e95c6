package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/mcmc"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	mu, tau, err := run(&out, &mcmc.Options{Seed: 1, Chains: 2, Warmup: 500, Samples: 1000})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 ||
		!strings.HasPrefix(lines[len(lines)-2], "posterior mean mu: ") ||
		!strings.HasPrefix(lines[len(lines)-1], "posterior mean tau: ") {
		t.Fatalf("output does not end with the two posterior means:\n%s", out.String())
	}
	if mu < 3.5 || mu > 5.3 || tau < 2.8 || tau > 4.4 {
		t.Errorf("mu %.3f, tau %.3f: far from 4.4, 3.6", mu, tau)
	}
	t.Log("\n" + out.String())
}

func TestLogDensityGradient(t *testing.T) {
	// The tape's gradient against central differences of its value.
	m := mcmc.FromTape(10, logDensity)
	q := []float64{1.5, 0.3, -1, 0.5, 0.2, -0.7, 1.1, 0, 0.4, -0.3}
	g := make([]float64, 10)
	if _, err := m.LogDensity(q, g); err != nil {
		t.Fatal(err)
	}
	for i := range q {
		h := 1e-6
		q[i] += h
		up, _ := m.LogDensity(q, nil)
		q[i] -= 2 * h
		down, _ := m.LogDensity(q, nil)
		q[i] += h
		if fd := (up - down) / (2 * h); abs(fd-g[i]) > 1e-6*max(1, abs(fd)) {
			t.Errorf("∂/∂q[%d] = %g, central difference %g", i, g[i], fd)
		}
	}
}

func abs(x float64) float64 { return max(x, -x) }
