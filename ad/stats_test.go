package ad_test

import (
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

// A ReLU whose output nobody saves keeps one bit per element; one whose
// output was written in place before a consumer saved it keeps its mask (the
// mask must describe the forward value, not the modified one).
func TestReluKeepsBitsUnlessOutputSaved(t *testing.T) {
	x := ad.Var(tensor.FromFloat64([]float64{-1, 2, -3, 4}, 4))
	h := ad.Relu(x)
	if st := ad.Stats(ad.Sum(h)); st.SavedBytes != 8 {
		t.Fatalf("relu→sum saves %d bytes, want one 64-bit mask word", st.SavedBytes)
	}
	h2 := ad.Relu(x)
	h2.Tensor().Set(5, 0) // now h2 = [5 2 0 4], but relu'(x) is still [0 1 0 1]
	y := ad.Sum(ad.Mul(h2, h2))
	gs, err := ad.Grad(y, x)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 4, 0, 8} // 2·h2·relu'(x)
	for i, g := range gs[0].Data() {
		if g != want[i] {
			t.Fatalf("gradient %v, want %v", gs[0].Data(), want)
		}
	}
}
