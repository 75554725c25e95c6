//go:build unix

package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/safetensors"
	"github.com/adjointgo/adjoint/tensor"
)

// oneLine checks that a refused command wrote exactly one line on stderr
// and nothing on stdout, with the wanted exit status and text.
func oneLine(t *testing.T, args []string, code int, want ...string) {
	t.Helper()
	done := make(chan struct{})
	var out, errOut string
	var got int
	go func() {
		defer close(done)
		out, errOut, got = runArgs(args...)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%q hung", args)
	}
	if got != code || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasSuffix(errOut, "\n") {
		t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and one line on stderr", args, got, out, errOut, code)
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			t.Errorf("%q: stderr %q lacks %q", args, errOut, w)
		}
	}
}

// TestEvalHostileFiles: eval and generate exit 1 with one line for each
// hostile model file, before reading or allocating what it does not
// justify. On the old code /dev/zero and /dev/urandom ran the program out of
// memory, a FIFO hung forever, an MLP with a NaN weight printed "test
// accuracy: 0.1003" and exited 0, and generate of a GPT with an Inf weight
// printed "aaaa…".
func TestEvalHostileFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, p := range []string{"/dev/zero", "/dev/urandom", fifo, dir} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		oneLine(t, []string{"eval", "--load", p}, exitFailure, p, "not a regular file")
		oneLine(t, []string{"generate", "--load", p}, exitFailure, p, "not a regular file")
	}

	// an MLP whose weights hold a NaN
	m := nn.NewMLP([]int{64, 8, 10}, nn.NewRNG(1), &nn.MLPConfig{DType: tensor.Float32})
	m.Params()[0].Value.Tensor().SetFlat(5, math.NaN())
	nanMLP := filepath.Join(dir, "nan.safetensors")
	meta := map[string]string{"format": "adjoint-mlp", "dataset": "digits", "sizes": "64,8,10", "act": "relu", "test_frac": "0.2"}
	if err := nn.SaveFile(nanMLP, m, meta); err != nil {
		t.Fatal(err)
	}
	oneLine(t, []string{"eval", "--load", nanMLP}, exitFailure, nanMLP, `"layers.0.weight": element 5 is NaN`, "--allow-nonfinite")
	if _, errOut, code := runArgs("eval", "--load", nanMLP, "--allow-nonfinite"); code != exitOK {
		t.Errorf("eval --allow-nonfinite: exit %d, %q", code, errOut)
	}

	// a GPT with an infinite weight
	g := nn.NewGPT(nn.GPTConfig{Vocab: 3, Context: 4, DModel: 8, Heads: 2, Layers: 1, DType: tensor.Float32}, nn.NewRNG(1))
	g.Params()[0].Value.Tensor().SetFlat(0, math.Inf(1))
	infGPT := filepath.Join(dir, "inf.safetensors")
	gmeta := map[string]string{"format": "adjoint-gpt", "vocab": "abc", "vocab_size": "3", "context": "4", "width": "8", "heads": "2", "layers": "1"}
	if err := nn.SaveFile(infGPT, g, gmeta); err != nil {
		t.Fatal(err)
	}
	oneLine(t, []string{"generate", "--load", infGPT, "--prompt", "a"}, exitFailure, infGPT, "is +Inf")
}

// TestGPTMetadataCheckedBeforeAllocation: an 8 KB file whose metadata
// claims 21 blocks of width 1024 is refused without building the model.
// On the old code only the embeddings' shapes were checked: 1 GB was
// allocated before "missing tensor".
func TestGPTMetadataCheckedBeforeAllocation(t *testing.T) {
	dir := t.TempDir()
	meta := map[string]string{"format": "adjoint-gpt", "vocab": "a", "vocab_size": "1", "context": "1", "width": "1024", "heads": "1", "layers": "21"}
	emb := []safetensors.Named{
		{Name: "transformer.wte.weight", Tensor: tensor.New(tensor.Float32, 1, 1024)},
		{Name: "transformer.wpe.weight", Tensor: tensor.New(tensor.Float32, 1, 1024)},
	}
	small := filepath.Join(dir, "small.safetensors")
	if err := safetensors.WriteFile(small, emb, meta); err != nil {
		t.Fatal(err)
	}
	// the same with every block's first LayerNorm, which the per-block
	// check looks for: the parameter count refuses it
	withBlocks := emb
	for i := range 21 {
		withBlocks = append(withBlocks, safetensors.Named{Name: "transformer.h." + strconv.Itoa(i) + ".ln_1.weight", Tensor: tensor.New(tensor.Float32, 1024)})
	}
	blocks := filepath.Join(dir, "blocks.safetensors")
	if err := safetensors.WriteFile(blocks, withBlocks, meta); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, says string }{
		{small, "no block 0"},
		{blocks, "but the file holds 23552 numbers"},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		oneLine(t, []string{"generate", "--load", c.file}, exitFailure, c.file, c.says)
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
			t.Errorf("%s: %d MB allocated before refusing the file", filepath.Base(c.file), n>>20)
		}
	}
	// eval names the command that reads a GPT, in one line
	oneLine(t, []string{"eval", "--load", small}, exitFailure, "adjoint generate --load")
}

// TestOutputsRefused: --save and --plot refuse devices, FIFOs and empty
// names before any work (as root, the old code replaced /dev/null with a
// regular file; --save "" was silently accepted).
func TestOutputsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	link := filepath.Join(dir, "null.png")
	os.Symlink(os.DevNull, link)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--save", os.DevNull}, "character device"},
		{[]string{"train", "--save", fifo}, "named pipe"},
		{[]string{"train", "--save", ""}, "--save: empty file name"},
		{[]string{"train", "--plot", ""}, "--plot: empty file name"},
		{[]string{"train", "--plot", link}, "links to " + os.DevNull},
		{[]string{"train", "--model", "gpt", "--save", os.DevNull}, "character device"},
		{[]string{"train", "--model", "gpt", "--save", ""}, "--save: empty file name"},
	} {
		oneLine(t, c.args, exitUsage, c.want)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode().IsRegular() {
		t.Fatalf("%s is no longer a device", os.DevNull)
	}
}

// TestFlagErrorsOneLine: a flag error is one line that says what is wrong
// (the old code printed the whole usage, 8–50 lines), a flag of another
// model says which model it belongs to, and flags that cannot apply are
// refused rather than ignored.
func TestFlagErrorsOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"train", "--nosuch"}, []string{"unknown flag --nosuch", "adjoint train -h"}},
		{[]string{"train", "--lr", "abc"}, []string{`invalid value "abc" for flag -lr`}},
		{[]string{"train", "--model", "gpt", "--hidden", "32"}, []string{"--hidden is a flag of --model mlp, not of gpt"}},
		{[]string{"train", "--model", "gpt", "--epochs", "3"}, []string{"--epochs is a flag of --model mlp and cnn"}},
		{[]string{"train", "--layers", "2"}, []string{"--layers is a flag of --model gpt only"}},
		{[]string{"train", "--optim", "adam", "--momentum", "0.5"}, []string{"--momentum applies to --optim sgd only"}},
		{[]string{"train", "--model", "cnn", "--optim", "adamw", "--momentum", "0.5"}, []string{"--momentum applies to --optim sgd only"}},
		{[]string{"train", "--model", "gpt", "--warmup", "50", "--steps", "10"}, []string{"--warmup 50 is more than --steps 10"}},
		{[]string{"eval"}, []string{"--load FILE is required"}},
		{[]string{"eval", "--nosuch"}, []string{"unknown flag --nosuch"}},
		{[]string{"generate"}, []string{"--load FILE is required"}},
		{[]string{"generate", "--load", "x", "--top-k", "x"}, []string{"-top-k"}},
		{[]string{"grad"}, []string{"no expression given"}},
		{[]string{"grad", "--jsn", "x"}, []string{"unknown flag --jsn"}},
		{[]string{"bench", "--nosuch"}, []string{"unknown flag --nosuch", "adjoint bench -h"}},
	} {
		oneLine(t, c.args, exitUsage, c.want...)
	}
	// -h still prints the whole usage and succeeds
	if _, errOut, code := runArgs("train", "-h"); code != exitOK || strings.Count(errOut, "\n") < 10 {
		t.Errorf("train -h: exit %d, %d lines", code, strings.Count(errOut, "\n"))
	}
}

// TestSamplerTinyTemperature: at a temperature of 1e-308 (inside the
// allowed range) the draw is the argmax. On the old code logits ÷ T
// overflowed to +Inf, Inf − Inf made every probability NaN, and the
// samples were garbage even with --top-k 1.
func TestSamplerTinyTemperature(t *testing.T) {
	logits := []float32{1, 2.5, 3, -1, 2.999}
	for _, k := range []int{0, 1, 2} {
		s := &sampler{temp: 1e-308, topK: k, rng: rand.New(rand.NewPCG(1, 2))}
		for range 1000 {
			if i := s.next(logits); i != 2 {
				t.Fatalf("top-k %d at temperature 1e-308 drew token %d, want the argmax 2", k, i)
			}
		}
	}
	s := &sampler{temp: 1, rng: rand.New(rand.NewPCG(1, 2))}
	inf := float32(math.Inf(1))
	for range 100 {
		if i := s.next([]float32{float32(math.NaN()), inf, 1, inf}); i != 1 && i != 3 {
			t.Fatalf("with +Inf logits drew %d, want one of them", i)
		}
	}
}
