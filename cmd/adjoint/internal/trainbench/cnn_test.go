package trainbench

import (
	"math"
	"testing"
)

func TestCNNStepLearnsItsBatch(t *testing.T) {
	s := NewCNNStep(1)
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	first := s.Loss
	if math.Abs(first-math.Log(10)) > 0.5 {
		t.Fatalf("initial loss %g, want near ln 10", first)
	}
	for range 4 {
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
	}
	if !(s.Loss < first) {
		t.Fatalf("loss %g after 5 SGD steps on one batch, want below the first %g", s.Loss, first)
	}
	if n := len(s.Model.Params()); n != 6 {
		t.Fatalf("%d parameters, want 6", n)
	}
}
