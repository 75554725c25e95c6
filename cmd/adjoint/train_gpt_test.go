package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/safetensors"
	"github.com/adjointgo/adjoint/tensor"
)

// tinyGPT is a command line small enough for a test: a one-block model
// trained for 40 steps.
var tinyGPT = []string{"train", "--model", "gpt", "--steps", "40", "--layers", "1", "--heads", "2", "--width", "32",
	"--context", "16", "--batch", "8", "--lr", "3e-3", "--warmup", "5", "--eval-every", "20", "--eval-batches", "2"}

func TestTrainCommandGPT(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpt.safetensors")
	var out, errb bytes.Buffer
	if code := dispatch(append(tinyGPT, "--save", path), &out, &errb); code != 0 {
		t.Fatalf("train --model gpt exited %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	evals := regexp.MustCompile(`^step (\d+): train loss (\d+\.\d{4}), val loss (\d+\.\d{4}) \(\d+s\)$`)
	var steps []int
	var val []float64
	for _, l := range lines {
		if m := evals.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			v, _ := strconv.ParseFloat(m[3], 64)
			steps, val = append(steps, n), append(val, v)
		}
	}
	if len(steps) != 3 || steps[0] != 0 || steps[1] != 20 || steps[2] != 40 {
		t.Fatalf("evaluations at steps %v, want 0, 20, 40 in:\n%s", steps, out.String())
	}
	if math.Abs(val[0]-math.Log(65)) > 0.1 || !(val[2] < val[0]-0.5) {
		t.Fatalf("validation losses %v: want about ln 65 = 4.17 at first, then at least 0.5 lower", val)
	}
	last := lines[len(lines)-1]
	if !regexp.MustCompile(`^validation loss: \d\.\d{4}$`).MatchString(last) {
		t.Fatalf("last line %q, want \"validation loss: X.XXXX\"", last)
	}
	if !strings.Contains(out.String(), "saved "+path+"\n") {
		t.Fatalf("no \"saved\" line in:\n%s", out.String())
	}

	// the file holds the weights under nanoGPT's names, and the sizes and
	// the vocabulary as string metadata
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"format": "adjoint-gpt", "dataset": "tinyshakespeare", "vocab_size": "65", "context": "16",
		"width": "32", "heads": "2", "layers": "1", "steps": "40",
		"vocab": "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"}
	for k, v := range want {
		if f.Metadata[k] != v {
			t.Errorf("metadata %s = %q, want %q", k, f.Metadata[k], v)
		}
	}
	if f.Metadata["val_loss"] != strings.TrimPrefix(last, "validation loss: ") {
		t.Errorf("metadata val_loss %q, the last line says %q", f.Metadata["val_loss"], last)
	}
	if info, ok := f.Info("transformer.wte.weight"); !ok || !tensor.EqualShape(info.Shape, []int{65, 32}) || info.DType != "F32" {
		t.Errorf("transformer.wte.weight: %+v, %v", info, ok)
	}
	errb.Reset()
	if code := dispatch([]string{"eval", "--load", path}, &out, &errb); code != exitFailure || !strings.Contains(errb.String(), "adjoint generate --load") {
		t.Errorf("eval of a GPT: exit %d, %q; want a failure pointing to generate", code, errb.String())
	}
	g, err := buildGPT(f)
	if err != nil {
		t.Fatal(err)
	}
	if g.Model.Config.Layers != 1 || g.Model.Config.Context != 16 || g.Vocab.Size() != 65 {
		t.Fatalf("rebuilt %+v", g.Model.Config)
	}
	for _, p := range g.Model.Params() {
		if p.Value.RequiresGrad() {
			t.Fatalf("the loaded model's %s requires a gradient: generation would record a graph", p.Name)
		}
	}
	// the loss printed during training (by a constant copy of the model
	// sharing its tensors) is the loss of the saved weights
	data, err := loadShakespeare(0.1)
	if err != nil {
		t.Fatal(err)
	}
	whole := wholeText(data.Val, 8, 16)
	if n, r := len(whole.x), len(whole.x[len(whole.x)-1]); (n-1)*8+r != (len(data.Val)-1)/16 {
		t.Fatalf("%d batches, the last of %d windows, do not cover the %d characters of the validation text", n, r, len(data.Val))
	}
	if got := strconv.FormatFloat(whole.mean(g.Model, new(ad.Arena)), 'f', 4, 64); "validation loss: "+got != last {
		t.Fatalf("the saved model's validation loss is %s; training printed %q", got, last)
	}
}

func TestTrainGPTFlags(t *testing.T) {
	cases := []struct {
		args []string
		says string
	}{
		{[]string{"--heads", "3"}, "not divisible by --heads 3"},
		{[]string{"--steps", "0"}, "--steps 0"},
		{[]string{"--min-lr", "0.1"}, "--min-lr 0.1"},
		{[]string{"--lr", "NaN"}, "--lr NaN"},
		{[]string{"--layers", "100000"}, "--layers 100000"},
		{[]string{"--width", "16384", "--layers", "256"}, "parameters, more than"},
		{[]string{"--hidden", "32"}, "-hidden"},
		{[]string{"--model", "cnn"}, "--model cnn"},
		{[]string{"--save", "/nonexistent/dir/x.safetensors"}, "does not exist"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		args := append([]string{"train", "--model", "gpt"}, c.args...)
		if code := dispatch(args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), c.says) {
			t.Errorf("%v: exit %d, %q; want a usage error saying %q", c.args, code, errb.String(), c.says)
		}
		if out.Len() != 0 {
			t.Errorf("%v: printed %q before refusing", c.args, out.String())
		}
	}
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--model", "gpt"}, true},
		{[]string{"-model=gpt", "--steps", "3"}, true},
		{[]string{"--steps", "3", "--model", "cnn"}, false},
		{[]string{"--", "--model", "gpt"}, false},
		{nil, false},
	} {
		if got := wantsGPT(c.args); got != c.want {
			t.Errorf("wantsGPT(%q) = %v", c.args, got)
		}
	}
}

func TestSampler(t *testing.T) {
	logits := []float32{0, 3, 1, 2.9}
	count := func(s *sampler) []int {
		n := make([]int, len(logits))
		for range 4000 {
			n[s.next(logits)]++
		}
		return n
	}
	if n := count(&sampler{temp: 1, topK: 1, rng: rand.New(rand.NewPCG(1, 1))}); n[1] != 4000 {
		t.Fatalf("top-k 1 is not greedy: %v", n)
	}
	n := count(&sampler{temp: 1, topK: 2, rng: rand.New(rand.NewPCG(1, 1))})
	if n[0] != 0 || n[2] != 0 || n[1] < 1800 || n[3] < 1600 {
		t.Fatalf("top-k 2 draws %v, want only tokens 1 and 3, about evenly", n)
	}
	// softmax(0, 3, 1, 2.9) ≈ (0.022, 0.47, 0.064, 0.44)
	n = count(&sampler{temp: 1, rng: rand.New(rand.NewPCG(1, 1))})
	if n[0] < 40 || n[0] > 140 || n[2] < 180 || n[2] > 340 {
		t.Fatalf("full softmax draws %v", n)
	}
	if n := count(&sampler{temp: 0.05, rng: rand.New(rand.NewPCG(1, 1))}); n[1] < 3500 {
		t.Fatalf("a low temperature is not nearly greedy: %v", n)
	}
}

func TestGenerateCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gpt.safetensors")
	var out, errb bytes.Buffer
	if code := dispatch(append(tinyGPT, "--steps", "20", "--eval-every", "0", "--save", path), &out, &errb); code != 0 {
		t.Fatalf("train exited %d: %s", code, errb.String())
	}
	gen := func(args ...string) (string, string, int) {
		var o, e bytes.Buffer
		code := dispatch(append([]string{"generate", "--load", path}, args...), &o, &e)
		return o.String(), e.String(), code
	}
	a, e, code := gen("--prompt", "ROMEO:", "--tokens", "100", "--seed", "3")
	if code != 0 {
		t.Fatalf("generate exited %d: %s", code, e)
	}
	if !strings.HasPrefix(a, "ROMEO:") || len(a) != len("ROMEO:")+100+1 || !strings.HasSuffix(a, "\n") {
		t.Fatalf("sample %q: want the prompt, 100 characters and a newline", a)
	}
	b, _, _ := gen("--prompt", "ROMEO:", "--tokens", "100", "--seed", "3")
	c, _, _ := gen("--prompt", "ROMEO:", "--tokens", "100", "--seed", "4")
	if a != b || a == c {
		t.Fatalf("seed 3 twice gave %q and %q; seed 4 %q", a, b, c)
	}
	// a prompt longer than the context (16) slides the window
	long := strings.Repeat("To be, or not to be. ", 3)
	if o, e, code := gen("--prompt", long, "--tokens", "30", "--top-k", "0", "--temperature", "1.5"); code != 0 || len(o) != len(long)+31 {
		t.Fatalf("long prompt: exit %d, %q, %s", code, o, e)
	}

	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--prompt", "ROMEO#"}, exitUsage, `'#' (U+0023) at byte 5 is not in the vocabulary`},
		{[]string{"--prompt", ""}, exitUsage, "--prompt: empty"},
		{[]string{"--temperature", "0"}, exitUsage, "--temperature 0"},
		{[]string{"--temperature", "NaN"}, exitUsage, "--temperature NaN"},
		{[]string{"--top-k", "-1"}, exitUsage, "--top-k -1"},
		{[]string{"--tokens", "0"}, exitUsage, "--tokens 0"},
	} {
		if _, e, code := gen(c.args...); code != c.code || !strings.Contains(e, c.says) {
			t.Errorf("%v: exit %d, %q; want %d saying %q", c.args, code, e, c.code, c.says)
		}
	}

	// files that are not GPTs
	mlp := filepath.Join(dir, "mlp.safetensors")
	if err := nn.SaveFile(mlp, nn.NewMLP([]int{64, 10}, nn.NewRNG(1), nil), map[string]string{"format": "adjoint-mlp"}); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(dir, "bare.safetensors")
	if err := nn.SaveFile(bare, nn.NewMLP([]int{64, 10}, nn.NewRNG(1), nil), nil); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := buildGPT(f)
	if err != nil {
		t.Fatal(err)
	}
	withMeta := func(name string, edit func(map[string]string)) string {
		meta := map[string]string{}
		for k, v := range f.Metadata {
			meta[k] = v
		}
		edit(meta)
		p := filepath.Join(dir, name)
		if err := nn.SaveFile(p, g.Model, meta); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		file, says string
	}{
		{mlp, `format="adjoint-mlp", want adjoint-gpt`},
		{bare, "no format in its metadata"},
		{filepath.Join(dir, "missing.safetensors"), "missing.safetensors"},
		{withMeta("ctx.safetensors", func(m map[string]string) { m["context"] = "32" }), `"transformer.wpe.weight" has shape [16 32]`},
		{withMeta("huge.safetensors", func(m map[string]string) { m["layers"] = "1000000" }), "metadata layers 1000000"},
		{withMeta("vocab.safetensors", func(m map[string]string) { m["vocab"] = "ba" }), "metadata vocab"},
		{withMeta("vsize.safetensors", func(m map[string]string) { m["vocab"] = m["vocab"][1:] }), "vocab has 64 characters"},
		{withMeta("layers.safetensors", func(m map[string]string) { m["layers"] = "2" }), "no block 1"},
	} {
		var o, e bytes.Buffer
		if code := dispatch([]string{"generate", "--load", c.file}, &o, &e); code != exitFailure || !strings.Contains(e.String(), c.says) {
			t.Errorf("%s: exit %d, %q; want a failure saying %q", filepath.Base(c.file), code, e.String(), c.says)
		}
	}
}
