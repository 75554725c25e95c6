package main

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/adjointgo/adjoint/safetensors"
)

// resumeGPT are the flags of a GPT small enough to train in a second.
var resumeGPT = []string{"train", "--model", "gpt", "--steps", "24", "--layers", "1", "--heads", "2", "--width", "16",
	"--context", "16", "--batch", "4", "--warmup", "4", "--eval-every", "0", "--eval-batches", "1", "--threads", "1"}

// TestResumeChild is not a test: it is the training process that
// TestResumeAfterKill starts and kills (see there).
func TestResumeChild(t *testing.T) {
	args := os.Getenv("ADJOINT_RESUME_CHILD")
	if args == "" {
		t.Skip("run by TestResumeAfterKill")
	}
	kill, _ := strconv.Atoi(os.Getenv("ADJOINT_RESUME_KILL"))
	afterStep = func(step int) {
		if step == kill {
			syscall.Kill(os.Getpid(), syscall.SIGKILL) // no deferred function, no flush: as a pre-empted node
		}
	}
	os.Exit(dispatch(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// resumeDigits are the flags of an MLP and a CNN small enough to train in
// a second, 24 steps each: the MLP 3 epochs of 8 batches (of 359 training
// images), the CNN 2 of 12, so that some checkpoints every 4 steps fall
// within an epoch and some at its end. Both keep their default dropout.
var resumeDigits = map[string][]string{
	"mlp": {"train", "--model", "mlp", "--hidden", "16", "--epochs", "3", "--batch", "48", "--test-frac", "0.8", "--threads", "1"},
	"cnn": {"train", "--model", "cnn", "--epochs", "2", "--batch", "32", "--test-frac", "0.8", "--threads", "1"},
}

// A run killed with SIGKILL at a random step and resumed from its last
// checkpoint ends with exactly the bits of an uninterrupted run.
func TestResumeAfterKill(t *testing.T) {
	killAndResume(t, resumeGPT, false)
}

// The same for the digits models, whose state also holds the batcher's
// position within an epoch, the dropout masks' offset, the epoch's running
// sums and the learning curves (so the resumed run's last epoch line and
// its --plot are the uninterrupted run's too).
func TestResumeDigitsAfterKill(t *testing.T) {
	for _, model := range []string{"mlp", "cnn"} {
		t.Run(model, func(t *testing.T) { killAndResume(t, resumeDigits[model], true) })
	}
}

// killAndResume trains the command line args (24 steps) without
// interruption, then twice in a child process that checkpoints every 4
// steps and kills itself at a random step, resumes it, and compares the
// saved models bit for bit; for a digits model also the outputs from the
// last epoch line on and the plotted curves.
func killAndResume(t *testing.T, args []string, digits bool) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.safetensors")
	var out, errOut bytes.Buffer
	plot := func(name string) []string {
		if !digits {
			return nil
		}
		return []string{"--plot", filepath.Join(dir, name+".png")}
	}
	if code := dispatch(append(append(slices.Clone(args), "--save", whole), plot("whole")...), &out, &errOut); code != exitOK {
		t.Fatalf("uninterrupted run: exit %d: %s", code, errOut.String())
	}
	lastFrom := ""
	if digits {
		lastFrom = "epoch "
	}
	wantLast := lastLines(out.String(), lastFrom)
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	for trial := range 2 {
		kill := 5 + r.IntN(18) // a step in 5..22 of 24, with a checkpoint every 4
		ck := filepath.Join(dir, "state"+strconv.Itoa(trial)+".safetensors")
		child := exec.Command(os.Args[0], "-test.run=^TestResumeChild$")
		child.Env = append(os.Environ(), "ADJOINT_RESUME_CHILD="+strings.Join(append(slices.Clone(args), "--checkpoint", ck, "--every", "4"), "\x1f"),
			"ADJOINT_RESUME_KILL="+strconv.Itoa(kill))
		err := child.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("the child was to be killed at step %d: %v", kill, err)
		}
		resumed := filepath.Join(dir, "resumed"+strconv.Itoa(trial)+".safetensors")
		out.Reset()
		errOut.Reset()
		if code := dispatch(append(append(slices.Clone(args), "--resume", ck, "--save", resumed), plot("resumed")...), &out, &errOut); code != exitOK {
			t.Fatalf("resumed run: exit %d: %s", code, errOut.String())
		}
		want := "resumed at step " + strconv.Itoa(kill/4*4) + "\n"
		if !strings.HasPrefix(out.String(), want) {
			t.Errorf("killed at step %d: output starts %q, want %q", kill, strings.SplitN(out.String(), "\n", 2)[0], want)
		}
		if got := lastLines(out.String(), lastFrom); got != wantLast {
			t.Errorf("killed at step %d: the resumed run ends\n%s\nwant\n%s", kill, got, wantLast)
		}
		sameTensors(t, whole, resumed)
		if digits {
			a, _ := os.ReadFile(filepath.Join(dir, "whole.png"))
			b, err := os.ReadFile(filepath.Join(dir, "resumed.png"))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("killed at step %d: the resumed run's plot differs from the uninterrupted run's (%v)", kill, err)
			}
		}
	}
}

// lastLines returns the lines of out from the last one starting with
// prefix, without those that name files or report times ("" for an empty
// prefix).
func lastLines(out, prefix string) string {
	if prefix == "" {
		return ""
	}
	lines := strings.Split(out, "\n")
	from := 0
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			from = i
		}
	}
	var keep []string
	for _, l := range lines[from:] {
		if !strings.HasPrefix(l, "trained in") && !strings.HasPrefix(l, "saved ") && !strings.HasPrefix(l, "plotted ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// sameTensors fails unless the two safetensors files hold the same
// tensors, bit for bit.
func sameTensors(t *testing.T, a, b string) {
	t.Helper()
	fa, err := safetensors.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := safetensors.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range fa.Tensors() {
		ta, _ := fa.Tensor(info.Name)
		tb, err := fb.Tensor(info.Name)
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		if !slices.Equal(ta.Float32s(), tb.Float32s()) || !slices.Equal(ta.Float64s(), tb.Float64s()) {
			t.Errorf("tensor %s differs between the uninterrupted and the resumed run", info.Name)
		}
	}
	if len(fa.Tensors()) != len(fb.Tensors()) {
		t.Errorf("%d tensors against %d", len(fa.Tensors()), len(fb.Tensors()))
	}
}

// A checkpoint of another configuration, a model file, a corrupt file or a
// missing one is refused with one line naming the problem, before any
// training, and the checkpoint is left as it was.
func TestResumeMisfit(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "state.safetensors")
	model := filepath.Join(dir, "model.safetensors")
	var out, errOut bytes.Buffer
	if code := dispatch(append(slices.Clone(resumeGPT), "--steps", "4", "--checkpoint", ck, "--every", "2", "--save", model), &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	sum := func() [32]byte { b, _ := os.ReadFile(ck); return sha256.Sum256(b) }
	before := sum()
	corrupt := filepath.Join(dir, "corrupt.safetensors")
	b, _ := os.ReadFile(ck)
	os.WriteFile(corrupt, b[:len(b)/2], 0o644)
	cases := map[string]struct {
		args []string
		want string
	}{
		"other width": {[]string{"--steps", "4", "--width", "32", "--resume", ck, "--checkpoint", ck, "--every", "2"}, `"width=32"`},
		"other seed":  {[]string{"--steps", "4", "--seed", "7", "--resume", ck}, `"seed=7"`},
		"model file":  {[]string{"--steps", "4", "--resume", model}, "not a training checkpoint"},
		"corrupt":     {[]string{"--steps", "4", "--resume", corrupt}, "corrupt.safetensors"},
		"missing":     {[]string{"--steps", "4", "--resume", filepath.Join(dir, "none")}, "none"},
		"every alone": {[]string{"--steps", "4", "--every", "2"}, "--every 2 without --checkpoint"},
		"no every":    {[]string{"--steps", "4", "--checkpoint", ck}, "needs --every"},
	}
	for name, tc := range cases {
		out.Reset()
		errOut.Reset()
		code := dispatch(append(slices.Clone(resumeGPT), tc.args...), &out, &errOut)
		msg := errOut.String()
		if code == exitOK || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want one line containing %s", name, code, msg, tc.want)
		}
	}
	if sum() != before {
		t.Error("a refused resume changed the checkpoint")
	}
}

// The same refusals for the digits models: a checkpoint of the other
// model, of other settings, of the GPT, with a batcher state, a dropout
// offset, an epoch sum or curves that do not fit (a count of epochs that
// would allocate terabytes among them), a model file, a corrupt or a
// missing file; and the checkpoint is left as it was.
func TestResumeDigitsMisfit(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "state.safetensors")
	model := filepath.Join(dir, "model.safetensors")
	gpt := filepath.Join(dir, "gpt.safetensors")
	mlp := resumeDigits["mlp"]
	var out, errOut bytes.Buffer
	if code := dispatch(append(slices.Clone(mlp), "--epochs", "1", "--checkpoint", ck, "--every", "4", "--save", model), &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if code := dispatch(append(slices.Clone(resumeGPT), "--steps", "4", "--checkpoint", gpt, "--every", "4"), &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	sum := func() [32]byte { b, _ := os.ReadFile(ck); return sha256.Sum256(b) }
	before := sum()
	b, _ := os.ReadFile(ck)
	corrupt := filepath.Join(dir, "corrupt.safetensors")
	os.WriteFile(corrupt, b[:len(b)/2], 0o644)
	tampered := func(key, val string) string {
		f, err := safetensors.ReadFile(ck)
		if err != nil {
			t.Fatal(err)
		}
		var ts []safetensors.Named
		for _, info := range f.Tensors() {
			x, _ := f.Tensor(info.Name)
			ts = append(ts, safetensors.Named{Name: info.Name, Tensor: x})
		}
		f.Metadata[key] = val
		path := filepath.Join(dir, key+".safetensors")
		if err := safetensors.WriteFile(path, ts, f.Metadata); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cases := map[string]struct {
		args []string
		want string
	}{
		"cnn":           {[]string{"cnn", "--resume", ck, "--checkpoint", ck, "--every", "4"}, `"model=cnn"`},
		"other hidden":  {[]string{"--epochs", "1", "--hidden", "32", "--resume", ck, "--checkpoint", ck, "--every", "4"}, `"hidden=32"`},
		"other dropout": {[]string{"--epochs", "1", "--dropout", "0.1", "--resume", ck}, `"dropout=0.1"`},
		"gpt":           {[]string{"--epochs", "1", "--resume", gpt}, `"model=gpt"`},
		"past the end":  {[]string{"--epochs", "1", "--resume", tampered("batcher.pos", "360")}, "position 360"},
		"no offset":     {[]string{"--epochs", "1", "--resume", tampered("dropout0.offset", "-1")}, "dropout 0's offset"},
		"bad generator": {[]string{"--epochs", "1", "--resume", tampered("batcher.rng", "zz")}, "batcher's generator state"},
		"nan sum":       {[]string{"--epochs", "1", "--resume", tampered("epoch.loss", "NaN")}, "not a finite number"},
		"huge curves":   {[]string{"--epochs", "1", "--resume", tampered("history.epochs", "1000000000000")}, `"state.history"`},
		"model file":    {[]string{"--epochs", "1", "--resume", model}, "not a training checkpoint"},
		"corrupt":       {[]string{"--epochs", "1", "--resume", corrupt}, "corrupt.safetensors"},
		"missing":       {[]string{"--epochs", "1", "--resume", filepath.Join(dir, "none")}, "none"},
		"every alone":   {[]string{"--epochs", "1", "--every", "2"}, "--every 2 without --checkpoint"},
		"no every":      {[]string{"--epochs", "1", "--checkpoint", ck}, "needs --every"},
	}
	for name, tc := range cases {
		out.Reset()
		errOut.Reset()
		args := append(slices.Clone(mlp), tc.args...)
		if tc.args[0] == "cnn" {
			args = append(slices.Clone(resumeDigits["cnn"]), tc.args[1:]...)
		}
		code := dispatch(args, &out, &errOut)
		msg := errOut.String()
		if code == exitOK || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want one line containing %s", name, code, msg, tc.want)
		}
	}
	if sum() != before {
		t.Error("a refused resume changed the checkpoint")
	}
}

// BenchmarkTrainStateLoad times what --resume adds before the first step
// of the default GPT: loading the corpus, building the model and loading
// the checkpoint (the model and both AdamW optimizers' moments, 9.7 MB:
// reading, checking every tensor, restoring the state).
func BenchmarkTrainStateLoad(b *testing.B) {
	c := defaultGPTConfig()
	c.Steps, c.Warmup, c.EvalEvery = 1, 0, 0
	path := filepath.Join(b.TempDir(), "state.safetensors")
	c.Checkpoint, c.Every = path, 1
	if _, err := trainGPT(c, nil, nil, nil); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	c.Checkpoint, c.Every, c.Resume = "", 0, path
	c.Steps = 1 // resumed at its last step: only the load runs, and the final evaluation
	b.SetBytes(st.Size())
	for b.Loop() {
		var got int
		if _, err := trainGPT(c, func(at int) { got = at; b.StopTimer() }, nil, nil); err != nil || got != 1 {
			b.Fatalf("resumed at %d: %v", got, err)
		}
		b.StartTimer()
	}
}
