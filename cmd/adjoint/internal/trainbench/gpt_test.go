package trainbench

import (
	"math"
	"testing"
)

func TestGPTStepLearnsItsBatch(t *testing.T) {
	s := NewGPTStep(1)
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	first := s.Loss
	if math.Abs(first-math.Log(GPTVocab)) > 0.1 {
		t.Fatalf("initial loss %g, want near ln 65 = %.3f", first, math.Log(GPTVocab))
	}
	for range 4 {
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
	}
	if !(s.Loss < first) {
		t.Fatalf("loss %g after 5 SGD steps on one batch, want below the first %g", s.Loss, first)
	}
	// 2 embeddings, 4 blocks of 16 (2 LayerNorms, 4 projections, the MLP's
	// two layers, each a weight and a bias), the final LayerNorm
	if n := len(s.Model.Params()); n != 2+4*16+2 {
		t.Fatalf("%d parameters, want %d", n, 2+4*16+2)
	}
	if s.SavedBytes() <= 0 {
		t.Fatal("the step's graph saves nothing")
	}
}
