package ad

import (
	"errors"
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// blockingGraph returns a loss whose backward pass stops in a VJP until
// release is closed (when gate is set), and the channel on which the VJP
// says it is waiting.
func blockingGraph(gate *bool, release chan struct{}) (x, loss *Value, waiting chan struct{}) {
	waiting = make(chan struct{}, 1)
	f := &Func{Name: "gate",
		Forward: func(xs []*Value) *Value { return MulScalar(xs[0], 3) },
		VJP: func(xs []*Value, y, g *Value) []*Value {
			if *gate {
				waiting <- struct{}{}
				<-release
			}
			return []*Value{MulScalar(g, 3)}
		}}
	x = Var(tensor.FromFloat64([]float64{1, 2}, 2))
	return x, Sum(Exp(f.Apply(x))), waiting
}

// TestSweepClaims checks the claims of sweeps that have ended (which stay
// on the nodes, see claim): another sweep may take them, a freed graph
// still reports ErrGraphFreed, and a sweep under way still refuses a
// second one with ErrConcurrent, also when it is unlisted (its slot in
// activeSweeps taken by another sweep under way).
func TestSweepClaims(t *testing.T) {
	gate := false
	release := make(chan struct{})
	x, loss, waiting := blockingGraph(&gate, release)
	for range 3 { // each sweep takes the claims the last one left
		if _, err := GradOpts(loss, []*Value{x}, Options{RetainGraph: true}); err != nil {
			t.Fatal(err)
		}
	}

	// A listed sweep under way: a second sweep of the graph is refused.
	gate = true
	done := make(chan error, 1)
	go func() {
		_, err := GradOpts(loss, []*Value{x}, Options{RetainGraph: true})
		done <- err
	}()
	<-waiting
	held := sweepIDs.Load()
	if held&unlisted != 0 || activeSweeps[held%uint64(len(activeSweeps))].Load() != held {
		t.Fatalf("sweep %d is not listed", held)
	}
	if _, err := GradOpts(loss, []*Value{x}, Options{RetainGraph: true}); !errors.Is(err, ErrConcurrent) {
		t.Fatalf("second sweep under way: %v, want ErrConcurrent", err)
	}

	// Sweeps of another graph until the next one's slot is the held
	// sweep's: that one is unlisted.
	gate2 := false
	release2 := make(chan struct{})
	x2, loss2, waiting2 := blockingGraph(&gate2, release2)
	for (sweepIDs.Load()+1)%uint64(len(activeSweeps)) != held%uint64(len(activeSweeps)) {
		if _, err := GradOpts(loss2, []*Value{x2}, Options{RetainGraph: true}); err != nil {
			t.Fatal(err)
		}
	}
	gate2 = true
	done2 := make(chan error, 1)
	go func() {
		_, err := GradOpts(loss2, []*Value{x2}, Options{RetainGraph: true})
		done2 <- err
	}()
	<-waiting2
	if id := sweepIDs.Load(); id%uint64(len(activeSweeps)) != held%uint64(len(activeSweeps)) {
		t.Fatalf("sweep %d does not share the slot of %d", id, held)
	}
	if _, err := GradOpts(loss2, []*Value{x2}, Options{RetainGraph: true}); !errors.Is(err, ErrConcurrent) {
		t.Fatalf("second sweep under an unlisted one: %v, want ErrConcurrent", err)
	}
	close(release2)
	if err := <-done2; err != nil {
		t.Fatalf("unlisted sweep: %v", err)
	}
	gate2 = false
	g2, err := GradOpts(loss2, []*Value{x2}, Options{RetainGraph: true})
	if err != nil {
		t.Fatalf("after the unlisted sweep: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("listed sweep: %v", err)
	}
	gate = false

	// The gradient is right (d/dx₀ Σ exp(3x) at x₀ = 1), and a sweep that
	// frees the graph leaves it reporting ErrGraphFreed, not a claim.
	e3 := Exp(Scalar(3)).Item()
	if got := g2[0].Data()[0]; got < 3*e3*(1-1e-12) || got > 3*e3*(1+1e-12) {
		t.Fatalf("gradient %v, want %v", got, 3*e3)
	}
	if _, err := Grad(loss, x); err != nil {
		t.Fatal(err)
	}
	if _, err := Grad(loss, x); !errors.Is(err, ErrGraphFreed) {
		t.Fatalf("sweep of a freed graph: %v, want ErrGraphFreed", err)
	}
}
