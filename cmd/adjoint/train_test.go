package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestTrainLearnsDigits(t *testing.T) {
	// a short run: 3 epochs on the first 600 training images
	cfg := defaultTrainConfig()
	cfg.Epochs, cfg.Subset = 3, 600
	res, err := trainDigits(cfg, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TestAcc < 0.85 {
		t.Fatalf("held-out accuracy %.4f after a short run, want ≥ 0.85", res.TestAcc)
	}
	h := res.History
	if len(h) != 3 || h[2].Loss >= h[0].Loss {
		t.Fatalf("loss did not fall over the epochs: %+v", h)
	}
}

func TestTrainIsDeterministic(t *testing.T) {
	cfg := defaultTrainConfig()
	cfg.Epochs, cfg.Subset, cfg.Hidden = 1, 200, []int{32}
	a, err := trainDigits(cfg, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := trainDigits(cfg, nil, nil, nil)
	pa, pb := a.Model.Params(), b.Model.Params()
	for i := range pa {
		x, y := pa[i].Value.Tensor().Float32s(), pb[i].Value.Tensor().Float32s()
		for j := range x {
			if x[j] != y[j] {
				t.Fatalf("%s[%d]: %g vs %g from the same seed", pa[i].Name, j, x[j], y[j])
			}
		}
	}
}

func TestTrainCommandSaveEval(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	var out, errb bytes.Buffer
	code := dispatch([]string{"train", "--epochs", "2", "--save", path}, &out, &errb)
	if code != 0 {
		t.Fatalf("train exited %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !regexp.MustCompile(`^test accuracy: 0\.\d{4}$`).MatchString(last) {
		t.Fatalf("last line %q, want \"test accuracy: 0.XXXX\"", last)
	}
	if !strings.HasPrefix(lines[0], "epoch 1/2  loss ") {
		t.Fatalf("first line %q, want a plain epoch line", lines[0])
	}
	var eout bytes.Buffer
	if code := dispatch([]string{"eval", "--load", path}, &eout, &errb); code != 0 {
		t.Fatalf("eval exited %d: %s", code, errb.String())
	}
	elines := strings.Split(strings.TrimSpace(eout.String()), "\n")
	if got := elines[len(elines)-1]; got != last {
		t.Fatalf("eval says %q, train said %q", got, last)
	}
	acc, _ := strconv.ParseFloat(strings.TrimPrefix(last, "test accuracy: "), 64)
	if acc < 0.9 {
		t.Fatalf("accuracy %g after 2 epochs, want ≥ 0.9", acc)
	}

	// a truncated file fails with an error naming the file
	b, _ := os.ReadFile(path)
	bad := filepath.Join(t.TempDir(), "bad.safetensors")
	os.WriteFile(bad, b[:len(b)/2], 0o644)
	errb.Reset()
	if code := dispatch([]string{"eval", "--load", bad}, &eout, &errb); code != 1 || !strings.Contains(errb.String(), bad) {
		t.Fatalf("eval of a truncated file: exit %d, stderr %q", code, errb.String())
	}
}

func TestTrainFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"train", "--hidden", "12,x"},
		{"train", "--optim", "rmsprop", "--epochs", "1"},
		{"train", "--optim", "sgd", "--momentum", "-1", "--epochs", "1"},
		{"train", "extra"},
		{"eval"},
	} {
		var out, errb bytes.Buffer
		if code := dispatch(args, &out, &errb); code == 0 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q; want a failure with a message", args, code, errb.String())
		}
	}
}

func TestTrainPlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curves.png")
	var out, errb bytes.Buffer
	if code := dispatch([]string{"train", "--epochs", "2", "--hidden", "16", "--plot", path}, &out, &errb); code != 0 {
		t.Fatalf("train --plot exited %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 1000 || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("%s is not a PNG (%d bytes)", path, len(b))
	}
	if code := dispatch([]string{"train", "--epochs", "1", "--plot", "x.jpg"}, &out, &errb); code != 2 {
		t.Fatalf("--plot x.jpg: exit %d, want 2", code)
	}
}
