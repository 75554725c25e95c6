package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/nn"
)

func TestTrainCNNLearnsDigits(t *testing.T) {
	// a short run: 3 epochs on the first 600 training images
	cfg := defaultTrainConfig()
	cfg.Model, cfg.Epochs, cfg.Subset, cfg.LR, cfg.Batch = "cnn", 3, 600, 0.01, 32
	res, err := trainDigits(cfg, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != nil {
		t.Fatal("a cnn run returned an MLP")
	}
	if _, ok := res.Net.(*cnn); !ok {
		t.Fatalf("the trained model is a %T, want *cnn", res.Net)
	}
	if res.TestAcc < 0.85 {
		t.Fatalf("held-out accuracy %.4f after a short cnn run, want ≥ 0.85", res.TestAcc)
	}
	h := res.History
	if len(h) != 3 || h[2].Loss >= h[0].Loss {
		t.Fatalf("loss did not fall over the epochs: %+v", h)
	}
}

func TestTrainCommandCNN(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cnn.safetensors")
	var out, errb bytes.Buffer
	code := dispatch([]string{"train", "--model", "cnn", "--epochs", "2", "--save", path}, &out, &errb)
	if code != 0 {
		t.Fatalf("train --model cnn exited %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.HasPrefix(lines[0], "epoch 1/2  loss ") {
		t.Fatalf("first line %q, want a plain epoch line", lines[0])
	}
	last := lines[len(lines)-1]
	if !regexp.MustCompile(`^test accuracy: 0\.\d{4}$`).MatchString(last) {
		t.Fatalf("last line %q, want \"test accuracy: 0.XXXX\"", last)
	}
	m := newCNN(7, 0)
	meta, err := nn.LoadFile(path, m)
	if err != nil {
		t.Fatalf("the saved cnn does not load: %v", err)
	}
	if meta["format"] != "adjoint-cnn" {
		t.Fatalf("metadata %v, want format adjoint-cnn", meta)
	}
	var names []string
	for _, p := range m.Params() {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "0.weight 0.bias 3.weight 3.bias 8.weight 8.bias" {
		t.Fatalf("parameter names %q", got)
	}

	var eout bytes.Buffer
	if code := dispatch([]string{"eval", "--load", path}, &eout, &errb); code != 0 {
		t.Fatalf("eval of the cnn exited %d: %s", code, errb.String())
	}
	elines := strings.Split(strings.TrimSpace(eout.String()), "\n")
	if got := elines[len(elines)-1]; got != last {
		t.Fatalf("eval says %q, train said %q", got, last)
	}
	// a cnn file whose weight has another shape is refused
	bad := filepath.Join(t.TempDir(), "bad.safetensors")
	other := newCNN(1, 0)
	other.FC = nn.NewLinear(64*3, 10, nn.NewRNG(1), nil)
	if err := nn.SaveFile(bad, other, cnnMetadata(defaultTrainConfig())); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := dispatch([]string{"eval", "--load", bad}, &eout, &errb); code == 0 || !strings.Contains(errb.String(), "8.weight") {
		t.Fatalf("eval of a misshapen cnn: exit %d, %q; want a failure naming 8.weight", code, errb.String())
	}

	errb.Reset()
	if code := dispatch([]string{"train", "--model", "cnn", "--hidden", "32"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--hidden") {
		t.Fatalf("--model cnn --hidden 32: exit %d, %q; want a usage error", code, errb.String())
	}
	errb.Reset()
	if code := dispatch([]string{"train", "--model", "rnn"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--model rnn") {
		t.Fatalf("--model rnn: exit %d, %q; want a usage error naming the flag", code, errb.String())
	}
}
