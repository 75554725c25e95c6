package ad_test

import (
	"errors"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// The saved-memory accounting of an MLP layer stack: inputs of matmuls
// (deduplicated with the ReLU outputs they are), one bit per ReLU element,
// the softmax of cross-entropy; weights are parameters.
func TestStatsSavedBytes(t *testing.T) {
	n, in, hid, out := 8, 16, 32, 4
	x := ad.Const(tensor.New(tensor.Float32, n, in))
	w1 := ad.Var(tensor.New(tensor.Float32, in, hid))
	w2 := ad.Var(tensor.New(tensor.Float32, hid, out))
	h := ad.Relu(ad.MatMul(x, w1))
	loss := ad.CrossEntropy(ad.MatMul(h, w2), make([]int, n))
	st := ad.Stats(loss)
	// The ReLU's output is saved by the second matmul, so the ReLU keeps no
	// bit mask of its own.
	want := int64(n*in*4 + n*hid*4 + n*out*4)
	if st.SavedBytes != want || st.Nodes != 4 {
		t.Fatalf("stats %+v, want SavedBytes %d over 4 nodes", st, want)
	}
	if st.ParamBytes != int64(hid*out*4) { // w2 is saved for dh; w1 is not (x needs no gradient)
		t.Fatalf("ParamBytes %d, want %d", st.ParamBytes, hid*out*4)
	}
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	if st := ad.Stats(loss); st.SavedBytes != 0 {
		t.Fatalf("after backward the graph still saves %d bytes", st.SavedBytes)
	}
}

// A ReLU whose output nobody saves keeps one bit per element. Until its
// output's first use the ReLU holds the output itself, so writing into it
// before that use is caught at backward, naming relu (as in PyTorch, whose
// ReLU saves its output).
func TestReluKeepsBitsUnlessOutputSaved(t *testing.T) {
	x := ad.Var(tensor.FromFloat64([]float64{-1, 2, -3, 4}, 4))
	h := ad.Relu(x)
	if st := ad.Stats(ad.Sum(h)); st.SavedBytes != 8 {
		t.Fatalf("relu→sum saves %d bytes, want one 64-bit mask word", st.SavedBytes)
	}
	h2 := ad.Relu(x)
	h2.Tensor().Set(5, 0)
	_, err := ad.Grad(ad.Sum(ad.Mul(h2, h2)), x)
	var me *ad.ModifiedError
	if !errors.As(err, &me) || me.Op != "relu" {
		t.Fatalf("in-place write to a ReLU output: got %v, want a ModifiedError naming relu", err)
	}
	// Written after its first use (which packed the mask), the gradient
	// still follows the forward pass.
	h3 := ad.Relu(x)
	y := ad.Sum(h3)
	h3.Tensor().Set(5, 0)
	gs, err := ad.Grad(y, x)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range gs[0].Data() {
		if want := []float64{0, 1, 0, 1}[i]; g != want {
			t.Fatalf("gradient %v", gs[0].Data())
		}
	}
}
