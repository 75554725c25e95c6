package nn

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// catch runs f and returns the error it panicked with, or nil.
var catch = errs.Catch

// wantErr checks that err is an *Error wrapping sentinel, one of the
// module's errors, and that its message names op.
func wantErr(t *testing.T, name string, err, sentinel error, op string) {
	t.Helper()
	var e *Error
	switch {
	case err == nil:
		t.Errorf("%s: no error, want %v", name, sentinel)
	case !errors.Is(err, sentinel):
		t.Errorf("%s: %v does not wrap %v", name, err, sentinel)
	case !errors.As(err, &e):
		t.Errorf("%s: %T is not an *nn.Error", name, err)
	case !errs.Module(err):
		t.Errorf("%s: %v is not one of the module's errors", name, err)
	case !strings.HasPrefix(err.Error(), "nn: "+op+": "):
		t.Errorf("%s: %q does not name the op %q", name, err, op)
	}
}

func TestErrConfig(t *testing.T) {
	rng := NewRNG(1)
	wantErr(t, "linear", catch(func() { NewLinear(0, 3, rng, nil) }), ErrConfig, "linear")
	wantErr(t, "embedding", catch(func() { NewEmbedding(4, 0, tensor.Float32, rng) }), ErrConfig, "embedding")
	wantErr(t, "mlp", catch(func() { NewMLP([]int{3}, rng, nil) }), ErrConfig, "mlp")
	wantErr(t, "dropout", catch(func() { NewDropout(1, 0) }), ErrConfig, "dropout")
	_, err := ActivationByName("gelu?")
	wantErr(t, "activation", err, ErrConfig, "activation")
	if err := catch(func() { NewLinear(-2, 3, rng, nil) }); err == nil || !strings.Contains(err.Error(), "-2→3") {
		t.Errorf("linear: %v does not name the bad sizes", err)
	}
}

func TestErrShape(t *testing.T) {
	logits := ad.Const(tensor.New(tensor.Float64, 3, 4))
	wantErr(t, "targets", catch(func() { Accuracy(logits, []int{0, 1}) }), ErrShape, "accuracy")
	wantErr(t, "rank", catch(func() { Accuracy(ad.Const(tensor.New(tensor.Float64, 3)), []int{0, 1, 2}) }), ErrShape, "accuracy")
	if !errors.Is(ErrShape, tensor.ErrShape) {
		t.Error("nn.ErrShape is not tensor.ErrShape")
	}
}

func TestErrCheckpoint(t *testing.T) {
	save := func(m Module) []byte {
		var b bytes.Buffer
		if err := Save(&b, m, nil); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	rng := NewRNG(1)
	withBias := NewLinear(2, 3, rng, nil)
	noBias := NewLinear(2, 3, rng, &LinearConfig{NoBias: true})
	wider := NewLinear(2, 4, rng, nil)
	cases := []struct {
		name string
		file []byte
		m    Module
		want string
	}{
		{"missing", save(noBias), withBias, `"bias": missing`},
		{"extra", save(withBias), noBias, `"bias" (F64 [3]): in the file but not in the model`},
		{"shape", save(wider), withBias, `"weight": shape [4 2] in the file, but the model has [3 2]`},
	}
	for _, c := range cases {
		_, err := Load(c.file, c.m)
		wantErr(t, c.name, err, ErrCheckpoint, "load")
		if err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q does not say %q", c.name, err, c.want)
		}
	}
}
