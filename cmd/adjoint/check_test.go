package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/safetensors"
	"github.com/adjointgo/adjoint/tensor"
)

func runArgs(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = dispatch(args, &o, &e)
	return o.String(), e.String(), code
}

// A refused command line exits 2 before any work, with one line on stderr
// that names the flag, the bad value and the allowed range.
func TestFlagsRefusedBeforeWork(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"train", "--lr", "nan"}, []string{"--lr NaN", "(0, 10]"}},
		{[]string{"train", "--lr", "inf"}, []string{"--lr +Inf", "(0, 10]"}},
		{[]string{"train", "--lr", "-inf"}, []string{"--lr -Inf"}},
		{[]string{"train", "--lr", "0"}, []string{"--lr 0"}},
		{[]string{"train", "--wd", "nan"}, []string{"--wd NaN", "[0, 1]"}},
		{[]string{"train", "--wd", "-1"}, []string{"--wd -1"}},
		{[]string{"train", "--momentum", "nan"}, []string{"--momentum NaN", "[0, 1)"}},
		{[]string{"train", "--optim", "sgd", "--momentum", "-1"}, []string{"--momentum -1"}},
		{[]string{"train", "--dropout", "nan"}, []string{"--dropout NaN", "[0, 1)"}},
		{[]string{"train", "--dropout", "-0.1"}, []string{"--dropout -0.1", "[0, 1)"}},
		{[]string{"train", "--dropout", "1"}, []string{"--dropout 1"}},
		{[]string{"train", "--test-frac", "nan"}, []string{"--test-frac NaN", "(0, 1)"}},
		{[]string{"train", "--test-frac", "1"}, []string{"--test-frac 1"}},
		{[]string{"train", "--test-frac", "1e-9"}, []string{"--test-frac 1e-09", "0 test images"}},
		{[]string{"train", "--epochs", "0"}, []string{"--epochs 0", "[1, "}},
		{[]string{"train", "--batch", "-3"}, []string{"--batch -3"}},
		{[]string{"train", "--threads", "-1"}, []string{"--threads -1"}},
		{[]string{"train", "--hidden", "12,x"}, []string{"--hidden 12,x"}},
		{[]string{"train", "--hidden", "99999999999"}, []string{"--hidden 99999999999", "[1, 65536]"}},
		{[]string{"train", "--hidden", "60000,60000"}, []string{"--hidden 60000,60000", "parameters"}},
		{[]string{"train", "--optim", "rmsprop"}, []string{"--optim rmsprop", "sgd, adam or adamw"}},
		{[]string{"train", "--act", "mish"}, []string{"--act mish"}},
		{[]string{"train", "--schedule", "step"}, []string{"--schedule step"}},
		{[]string{"train", "--save", filepath.Join(missing, "m.safetensors")}, []string{"--save " + filepath.Join(missing, "m.safetensors"), "does not exist"}},
		{[]string{"train", "--save", t.TempDir()}, []string{"is a directory"}},
		{[]string{"train", "--plot", filepath.Join(missing, "c.png")}, []string{"--plot " + filepath.Join(missing, "c.png"), "does not exist"}},
		{[]string{"train", "--plot", "x.jpg"}, []string{"--plot x.jpg", ".png"}},
		{[]string{"train", "extra"}, []string{`"extra"`}},
		{[]string{"eval", "--load", "m.safetensors", "--threads", "-2"}, []string{"--threads -2"}},
		{[]string{"bench", "--threads", "-1"}, []string{"--threads -1"}},
		{[]string{"bench", "--steps", "-5"}, []string{"--steps -5"}},
		{[]string{"bench", "--warmup", "-1"}, []string{"--warmup -1"}},
		{[]string{"bench", "--only", "D"}, []string{`"D"`}},
		{[]string{"bench", "--only", "A,GPU"}, []string{`"GPU"`}},
		{[]string{"train", "--model", "gpt", "--steps", "0"}, []string{"--steps 0", "[1, "}},
		{[]string{"train", "--model", "gpt", "--lr", "nan"}, []string{"--lr NaN", "(0, 10]"}},
		{[]string{"train", "--model", "gpt", "--clip", "-1"}, []string{"--clip -1"}},
		{[]string{"train", "--model", "gpt", "--eval-batches", "0"}, []string{"--eval-batches 0"}},
		{[]string{"train", "--model", "gpt", "--context", "99999999"}, []string{"--context 99999999"}},
		{[]string{"train", "--model", "gpt", "--save", t.TempDir()}, []string{"is a directory"}},
		{[]string{"train", "--model", "gpt", "extra"}, []string{`"extra"`}},
		{[]string{"generate", "--load", "m.safetensors", "--temperature", "nan"}, []string{"--temperature NaN", "(0, 100]"}},
		{[]string{"generate", "--load", "m.safetensors", "--temperature", "-1"}, []string{"--temperature -1"}},
		{[]string{"generate", "--load", "m.safetensors", "--top-k", "-1"}, []string{"--top-k -1"}},
		{[]string{"generate", "--load", "m.safetensors", "--tokens", "0"}, []string{"--tokens 0"}},
		{[]string{"generate", "--load", "m.safetensors", "--prompt", ""}, []string{"--prompt: empty"}},
		{[]string{"grad", "x", "x=nan"}, []string{"variable x: nan is not finite"}},
		{[]string{"grad", "x", "x=-Inf"}, []string{"variable x: -Inf is not finite"}},
		{[]string{"grad", "x", "x=1e999"}, []string{"variable x: 1e999 is not finite"}},
	} {
		out, errOut, code := runArgs(c.args...)
		if code != 2 || out != "" {
			t.Errorf("%q: exit %d, stdout %q; want exit 2 and no output", c.args, code, out)
		}
		if c.args[0] != "grad" && strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: stderr %q, want one line", c.args, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%q: stderr %q lacks %q", c.args, errOut, w)
			}
		}
	}
}

// Usage errors exit 2 in every command, runtime failures 1, and help says so.
func TestExitStatus(t *testing.T) {
	for _, args := range [][]string{
		{}, {"nosuch"}, {"help", "nosuch"}, {"eval"}, {"train", "--nosuch"}, {"eval", "--nosuch"},
		{"bench", "--nosuch"}, {"grad", "--nosuch", "x"}, {"bench", "extra"},
	} {
		if _, _, code := runArgs(args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if _, errOut, code := runArgs("eval", "--load", filepath.Join(t.TempDir(), "absent.safetensors")); code != 1 || !strings.Contains(errOut, "absent.safetensors") {
		t.Errorf("eval of a missing file: exit %d, %q; want 1", code, errOut)
	}
	out, _, code := runArgs("help")
	if code != 0 || !strings.Contains(out, "Exit status: 0 on success, 1 when the work failed") || !strings.Contains(out, "2 when the command line is refused") {
		t.Errorf("help: exit %d, does not document the exit statuses:\n%s", code, out)
	}
}

// A NaN or Inf loss stops training, naming the epoch and the step and
// suggesting a lower learning rate.
func TestTrainStopsOnNonFiniteLoss(t *testing.T) {
	cfg := defaultTrainConfig()
	cfg.Epochs, cfg.Subset, cfg.Hidden = 3, 300, []int{16}
	cfg.Optim, cfg.Schedule, cfg.Dropout, cfg.LR = "sgd", "none", 0, 1e30
	res, err := trainDigits(cfg, nil, nil, nil)
	if err == nil {
		t.Fatalf("trained at lr 1e30 without an error, history %+v", res.History)
	}
	for _, w := range []string{"epoch 1, step ", " of 10: the loss is ", "lower learning rate than --lr 1e+30"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

func umask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}

// A saved model gets the mode os.Create gives (0644 under umask 022), and
// eval refuses metadata that does not fit the tensors before allocating.
func TestSaveModeAndEvalMetadata(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.safetensors")
	if _, errOut, code := runArgs("train", "--epochs", "1", "--hidden", "16", "--save", path); code != 0 {
		t.Fatalf("train exited %d: %s", code, errOut)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := 0o666 &^ umask(); st.Mode().Perm() != want {
		t.Errorf("saved with mode %v, want %v", st.Mode().Perm(), want)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ts []safetensors.Named
	for _, in := range f.Tensors() {
		x, _ := f.Tensor(in.Name)
		ts = append(ts, safetensors.Named{Name: in.Name, Tensor: x})
	}
	for i, c := range []struct {
		key, val string
		want     string
	}{
		{"sizes", "64,99999999999,10", "metadata sizes \"64,99999999999,10\""},
		{"sizes", "64,32,10", "the tensors' shapes give 64,16,10"},
		{"sizes", "64,16,16,10", "the tensors' shapes give 64,16,10"},
		{"sizes", "5,16,10", "want 64 inputs and 10 outputs"},
		{"sizes", "", "metadata sizes"},
		{"act", "mish", "metadata act \"mish\""},
		{"test_frac", "nan", "metadata test_frac \"nan\""},
		{"test_frac", "x", "is not a number"},
		{"format", "pt", "format=\"pt\""},
	} {
		meta := map[string]string{}
		for k, v := range f.Metadata {
			meta[k] = v
		}
		meta[c.key] = c.val
		bad := filepath.Join(dir, "bad"+string(rune('a'+i))+".safetensors")
		if err := safetensors.WriteFile(bad, ts, meta); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runArgs("eval", "--load", bad)
		if code != 1 || out != "" || !strings.Contains(errOut, bad) || !strings.Contains(errOut, c.want) {
			t.Errorf("%s=%q: exit %d, stdout %q, stderr %q; want 1 and a message naming the file with %q", c.key, c.val, code, out, errOut, c.want)
		}
	}
	// tensors that do not chain are refused by their shapes alone
	wrong := filepath.Join(dir, "wrong.safetensors")
	ts[2].Tensor = tensor.FromFloat32(make([]float32, 10*17), 10, 17)
	if err := safetensors.WriteFile(wrong, ts, f.Metadata); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runArgs("eval", "--load", wrong); code != 1 || !strings.Contains(errOut, "takes 17 inputs") {
		t.Errorf("unchained weights: exit %d, %q", code, errOut)
	}
}

// A failed save is reported with the user's path, and the plot and the
// accuracy line still come.
func TestTrainSaveFailureKeepsResults(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "m.safetensors")
	if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "c.png")
	// The directory goes away during training, after the checks.
	var o, e bytes.Buffer
	afterTraining = func() { os.Remove(filepath.Dir(path)) }
	defer func() { afterTraining = nil }()
	code := dispatch([]string{"train", "--epochs", "1", "--hidden", "8", "--save", path, "--plot", png}, &o, &e)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, e.String())
	}
	if msg := e.String(); !strings.Contains(msg, path) || strings.Contains(msg, ".safetensors-") {
		t.Errorf("stderr %q should name %s and not the temporary file", msg, path)
	}
	if !strings.Contains(o.String(), "plotted "+png) || !strings.Contains(o.String(), "test accuracy: ") {
		t.Errorf("plot or accuracy line missing after a failed save:\n%s", o.String())
	}
}

// FuzzEvalMetadata feeds arbitrary metadata, and tensors of arbitrary
// (small) shapes, through the path eval rebuilds a model by: it must give an
// error wrapping errNotModel, nn.ErrCheckpoint or safetensors.ErrFormat, or
// a model that evaluates, never a panic or an allocation the file does not
// justify.
func FuzzEvalMetadata(f *testing.F) {
	f.Add("64,16,10", "relu", "0.2", "adjoint-mlp", uint8(16), uint8(1), false)
	f.Add("64,99999999999,10", "relu", "0.2", "adjoint-mlp", uint8(16), uint8(1), false)
	f.Add("64,16,16,10", "tanh", "nan", "adjoint-mlp", uint8(16), uint8(2), true)
	f.Add("64,-1,10", "x", "1e-300", "pt", uint8(0), uint8(0), false)
	f.Add("", "", "", "", uint8(3), uint8(9), true)
	f.Fuzz(func(t *testing.T, sizes, act, frac, format string, width, layers uint8, f64 bool) {
		// the tensors of an MLP 64, width×layers, 10 (width 0: a linear model)
		dims := []int{64}
		for range int(layers % 4) {
			if w := int(width % 40); w > 0 {
				dims = append(dims, w)
			}
		}
		dims = append(dims, 10)
		var ts []safetensors.Named
		for i := 0; i+1 < len(dims); i++ {
			w, b := dims[i+1]*dims[i], dims[i+1]
			prefix := "layers." + strconv.Itoa(i) + "."
			if f64 {
				ts = append(ts, safetensors.Named{Name: prefix + "weight", Tensor: tensor.FromFloat64(make([]float64, w), dims[i+1], dims[i])},
					safetensors.Named{Name: prefix + "bias", Tensor: tensor.FromFloat64(make([]float64, b), dims[i+1])})
			} else {
				ts = append(ts, safetensors.Named{Name: prefix + "weight", Tensor: tensor.FromFloat32(make([]float32, w), dims[i+1], dims[i])},
					safetensors.Named{Name: prefix + "bias", Tensor: tensor.FromFloat32(make([]float32, b), dims[i+1])})
			}
		}
		meta := map[string]string{"format": format, "dataset": "digits", "sizes": sizes, "act": act, "test_frac": frac}
		b, err := safetensors.Encode(ts, meta)
		if err != nil {
			t.Fatal(err)
		}
		file, err := safetensors.Decode(b)
		if err != nil {
			if !errors.Is(err, safetensors.ErrFormat) {
				t.Fatalf("decode: untyped error %v", err)
			}
			return
		}
		m, err := buildMLP(file)
		if err != nil {
			if !errors.Is(err, errNotModel) && !errors.Is(err, nn.ErrCheckpoint) && !errors.Is(err, safetensors.ErrFormat) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		evalAccuracy(m.model, m.test)
	})
}
