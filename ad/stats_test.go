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
	want := int64(n*in*4 + n*hid*4 + (n*hid+63)/64*8 + n*out*4)
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
