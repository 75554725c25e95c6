package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/datasets"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

func init() {
	register(command{name: "train", summary: "train an MLP or a CNN (--model cnn) on the embedded digits, or a character-level GPT (--model gpt) on Tiny Shakespeare", run: runTrain})
}

// trainConfig holds the knobs of "adjoint train".
type trainConfig struct {
	Epochs   int
	Hidden   []int
	LR       float64
	Optim    string // sgd, adam, adamw
	Momentum float64
	WD       float64
	Act      string
	Schedule string // cosine, none
	Seed     uint64
	Batch    int
	TestFrac float64
	Threads  int
	Dropout  float64
	Subset   int    // use only the first Subset training examples (0: all); for tests
	Model    string // mlp (default when empty) or cnn

	Checkpoint string // save the training state here every Every steps ("": never)
	Every      int    // steps (batches) between checkpoints
	Resume     string // resume from this training state ("": start afresh)
}

// stateConfig is what a resumed run must share with the run that saved its
// checkpoint: everything that changes the steps' bits (not the thread count
// or the output files).
func (c trainConfig) stateConfig() string {
	model := c.Model
	if model == "" {
		model = "mlp"
	}
	kv := []string{"model", model}
	if model == "mlp" {
		kv = append(kv, "hidden", formatInts(c.Hidden), "act", c.Act)
	}
	return configString(append(kv, "epochs", strconv.Itoa(c.Epochs), "batch", strconv.Itoa(c.Batch),
		"lr", fmtNum(c.LR), "optim", c.Optim, "momentum", fmtNum(c.Momentum), "wd", fmtNum(c.WD),
		"dropout", fmtNum(c.Dropout), "schedule", c.Schedule, "seed", strconv.FormatUint(c.Seed, 10),
		"test-frac", fmtNum(c.TestFrac), "subset", strconv.Itoa(c.Subset))...)
}

func defaultTrainConfig() trainConfig {
	return trainConfig{Epochs: 30, Hidden: []int{512}, LR: 3e-3, Optim: "adam", Momentum: 0.9, Dropout: 0.3,
		Act: "relu", Schedule: "cosine", Seed: 1, Batch: 32, TestFrac: 0.2}
}

// epochStats is one point of the learning curves.
type epochStats struct {
	Epoch    int
	Loss     float64 // mean training loss over the epoch
	TrainAcc float64 // accuracy on the training batches during the epoch
	TestAcc  float64 // held-out accuracy at the end of the epoch
}

// trainResult is what a training run produces.
type trainResult struct {
	Model   *nn.MLP    // the MLP (--model mlp), else nil
	Net     classifier // the trained model, MLP or CNN
	History []epochStats
	TestAcc float64
}

func parseInts(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad size %q: want positive integers separated by commas, e.g. 128,64", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func formatInts(s []int) string {
	parts := make([]string, len(s))
	for i, n := range s {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

// digitsFlags defines the flags of "adjoint train" for the digits models
// (mlp and cnn) into cfg and returns the flag set and the flags kept as
// strings.
func digitsFlags(cfg *trainConfig, stderr io.Writer) (fs *flag.FlagSet, hidden, save, plot *string) {
	fs = flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hidden = fs.String("hidden", formatInts(cfg.Hidden), "hidden layer sizes, comma-separated (empty: a linear model)")
	fs.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "passes over the training set, 1 to 1000000")
	fs.Float64Var(&cfg.LR, "lr", cfg.LR, "peak learning rate, in (0, 10]")
	fs.StringVar(&cfg.Optim, "optim", cfg.Optim, "optimiser: sgd, adam or adamw")
	fs.Float64Var(&cfg.Momentum, "momentum", cfg.Momentum, "momentum (sgd), in [0, 1)")
	fs.Float64Var(&cfg.WD, "wd", cfg.WD, "weight decay, in [0, 1] (adamw: 0 means 0.01)")
	fs.Float64Var(&cfg.Dropout, "dropout", cfg.Dropout, "dropout probability after each hidden layer, in [0, 1)")
	fs.StringVar(&cfg.Act, "act", cfg.Act, "hidden activation: relu, tanh, sigmoid, softplus, gelu")
	fs.StringVar(&cfg.Schedule, "schedule", cfg.Schedule, "learning-rate schedule: cosine or none")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the initialisation and the batch order")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "mini-batch size, 1 to 65536")
	fs.Float64Var(&cfg.TestFrac, "test-frac", cfg.TestFrac, "fraction of the data held out for testing, in (0, 1) (split with seed 0)")
	fs.IntVar(&cfg.Threads, "threads", 0, "threads for matrix products and GOMAXPROCS (0: all cores)")
	save = fs.String("save", "", "save the trained parameters to this safetensors file (its directory must exist)")
	plot = fs.String("plot", "", "draw the loss and accuracy curves into this PNG file")
	fs.StringVar(&cfg.Checkpoint, "checkpoint", "", "save the training state (model, optimizer, batcher, dropout, curves, step) to this file every --every steps, atomically")
	fs.IntVar(&cfg.Every, "every", 0, "steps (batches) between checkpoints (with --checkpoint)")
	fs.StringVar(&cfg.Resume, "resume", "", "resume from a training state saved by --checkpoint (with the same flags): the run ends with the bits of an uninterrupted one")
	fs.StringVar(&cfg.Model, "model", "mlp", "model: mlp (64 → hidden → 10), cnn (conv 3×3×32, pool, conv 3×3×64, pool, linear; defaults --epochs 25 --lr 0.01 --batch 64 --dropout 0.25), or gpt (a character-level GPT on Tiny Shakespeare, with flags of its own: adjoint train --model gpt -h)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: adjoint train [flags]

Trains an MLP (64 → hidden → 10), or with --model cnn a small convolutional net
on the 1×8×8 images, on the embedded digits data set and prints the held-out
accuracy on its last line. With --model gpt it trains a character-level GPT
on the Tiny Shakespeare corpus instead (adjoint train --model gpt -h).

A long run survives being killed: --checkpoint PATH --every N saves the
training state (the model, the optimizer, the batcher's position, dropout's
offset, the curves, the step) every N steps, atomically; the same command
with --resume PATH prints "resumed at step N" first, carries on, and ends
with exactly the bits of an uninterrupted run.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, hidden, save, plot
}

func runTrain(args []string, stdout, stderr io.Writer) int {
	if wantsGPT(args) {
		return runTrainGPT(args, stdout, stderr)
	}
	cfg := defaultTrainConfig()
	fs, hidden, save, plot := digitsFlags(&cfg, stderr)
	if code, ok := parseFlags(fs, "train", args, stderr, func(name string) string {
		if f, _ := gptFlags(new(gptConfig), io.Discard); f.Lookup(name) != nil {
			return "is a flag of --model gpt only, not of mlp or cnn (adjoint train --model gpt -h lists its flags)"
		}
		return ""
	}); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "adjoint train: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if w, err := world(); err != nil || w.Size() > 1 {
		if err == nil {
			err = fmt.Errorf("--model %s trains in one process, and mpirun started %d: run it without mpirun, or train --model gpt across ranks", cfg.Model, w.Size())
		}
		fmt.Fprintf(stderr, "adjoint train: %v\n", err)
		return exitUsage
	}
	h, err := parseInts(*hidden)
	if err == nil {
		err = checkSizes(append(append([]int{datasets.DigitsFeatures}, h...), datasets.DigitsClasses))
	}
	if err != nil {
		fmt.Fprintf(stderr, "adjoint train: --hidden %s: %v\n", *hidden, err)
		return exitUsage
	}
	cfg.Hidden = h
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch cfg.Model {
	case "mlp":
	case "cnn":
		if set["hidden"] || set["act"] {
			fmt.Fprintf(stderr, "adjoint train: --hidden and --act set the MLP; --model cnn has fixed layers with ReLU\n")
			return exitUsage
		}
		cnnDefaults(&cfg, set)
	default:
		fmt.Fprintf(stderr, "adjoint train: --model %s: want mlp, cnn or gpt\n", cfg.Model)
		return exitUsage
	}
	if err := checkTrainConfig(cfg); err != nil {
		fmt.Fprintf(stderr, "adjoint train: %v\n", err)
		return exitUsage
	}
	if set["momentum"] && cfg.Optim != "sgd" {
		fmt.Fprintf(stderr, "adjoint train: --momentum applies to --optim sgd only, not to --optim %s (Adam keeps its own moment estimates: drop --momentum)\n", cfg.Optim)
		return exitUsage
	}
	for _, f := range []string{"save", "checkpoint"} {
		if set[f] {
			if err := checkOutput(f, fs.Lookup(f).Value.String()); err != nil {
				fmt.Fprintf(stderr, "adjoint train: %v\n", err)
				return exitUsage
			}
		}
	}
	if set["plot"] {
		if err := checkOutput("plot", *plot); err != nil {
			fmt.Fprintf(stderr, "adjoint train: %v\n", err)
			return exitUsage
		}
		if !strings.EqualFold(filepath.Ext(*plot), ".png") {
			fmt.Fprintf(stderr, "adjoint train: --plot %s: want a .png file name\n", *plot)
			return exitUsage
		}
	}
	setThreads(cfg.Threads)

	start := time.Now()
	p := newProgress(stdout, cfg.Epochs)
	onStart := func(resumed int) {
		if resumed > 0 {
			fmt.Fprintf(stdout, "resumed at step %d\n", resumed)
		}
	}
	res, err := trainDigits(cfg, onStart, p.epoch, p.batch)
	if err != nil {
		fmt.Fprintf(stderr, "adjoint train: %v\n", err)
		return exitFailure
	}
	if afterTraining != nil {
		afterTraining()
	}
	// A failed save does not skip the plot or the accuracy line.
	code := exitOK
	if *save != "" {
		var err error
		if res.Model != nil {
			err = nn.SaveFile(*save, res.Model, modelMetadata(cfg, res.Model))
		} else {
			err = nn.SaveFile(*save, res.Net, cnnMetadata(cfg))
		}
		if err != nil {
			fmt.Fprintf(stderr, "adjoint train: --save: %v\n", err)
			code = exitFailure
		} else {
			fmt.Fprintf(stdout, "saved %s\n", *save)
		}
	}
	if *plot != "" {
		if err := plotHistory(*plot, res.History); err != nil {
			fmt.Fprintf(stderr, "adjoint train: --plot %s: %v\n", *plot, err)
			code = exitFailure
		} else {
			fmt.Fprintf(stdout, "plotted %s\n", *plot)
		}
	}
	fmt.Fprintf(stdout, "trained in %.1fs\n", time.Since(start).Seconds())
	fmt.Fprintf(stdout, "test accuracy: %.4f\n", res.TestAcc)
	return code
}

// afterTraining, if set, runs between training and saving: tests use it
// to make a destination fail after the checks.
var afterTraining func()

// checkTrainConfig refuses, before any work, a configuration that
// trainDigits would reject late or silently misread: every number is checked
// for NaN, Inf and range, and every name against its list.
func checkTrainConfig(cfg trainConfig) error {
	for _, err := range []error{
		checkInt("epochs", cfg.Epochs, 1, maxEpochs),
		checkInt("batch", cfg.Batch, 1, maxBatch),
		checkInt("threads", cfg.Threads, 0, maxThreads),
		checkFloat("lr", cfg.LR, 0, 10, true, false),
		checkFloat("momentum", cfg.Momentum, 0, 1, false, true),
		checkFloat("wd", cfg.WD, 0, 1, false, false),
		checkFloat("dropout", cfg.Dropout, 0, 1, false, true),
		checkFloat("test-frac", cfg.TestFrac, 0, 1, true, true),
		checkCheckpointFlags(cfg.Checkpoint, cfg.Every),
	} {
		if err != nil {
			return err
		}
	}
	switch cfg.Optim {
	case "sgd", "adam", "adamw":
	default:
		return fmt.Errorf("--optim %s: want sgd, adam or adamw", cfg.Optim)
	}
	if _, err := nn.ActivationByName(cfg.Act); err != nil {
		return fmt.Errorf("--act %s: want relu, tanh, sigmoid, softplus or gelu", cfg.Act)
	}
	if cfg.Schedule != "cosine" && cfg.Schedule != "none" {
		return fmt.Errorf("--schedule %s: want cosine or none", cfg.Schedule)
	}
	if _, _, err := digitsSplit(cfg.TestFrac); err != nil {
		return fmt.Errorf("--test-frac %s: %v", fmtNum(cfg.TestFrac), err)
	}
	return nil
}

// setThreads applies --threads to the scheduler and to the kernels of
// package tensor (matrix products and large elementwise loops).
func setThreads(n int) {
	if n > 0 {
		runtime.GOMAXPROCS(n)
	}
	tensor.SetThreads(n)
}

// modelMetadata is what eval needs to rebuild the model and the split.
func modelMetadata(cfg trainConfig, m *nn.MLP) map[string]string {
	return map[string]string{
		"format":    "adjoint-mlp",
		"dataset":   "digits",
		"sizes":     formatInts(m.Sizes()),
		"act":       cfg.Act,
		"test_frac": strconv.FormatFloat(cfg.TestFrac, 'g', -1, 64),
		"split":     "0",
	}
}

// digitsSplit is the fixed train/test split of the digits data set: the
// split seed is 0 whatever --seed says, so models trained with different
// seeds are compared on the same held-out images.
func digitsSplit(testFrac float64) (train, test *datasets.Digits, err error) {
	d, err := datasets.LoadDigits()
	if err != nil {
		return nil, nil, err
	}
	if !(testFrac > 0 && testFrac < 1) {
		return nil, nil, fmt.Errorf("test fraction %v must lie strictly between 0 and 1", testFrac)
	}
	train, test = d.Split(testFrac, 0)
	if train.Len() == 0 || test.Len() == 0 {
		return nil, nil, fmt.Errorf("test fraction %v leaves %d training and %d test images of %d, want at least one of each", testFrac, train.Len(), test.Len(), d.Len())
	}
	return train, test, nil
}

// newOptimizer builds the optimiser; a setting it refuses (such as a
// negative momentum) becomes the returned error.
func newOptimizer(cfg trainConfig, ps []*ad.Value) (opt optim.Stateful, err error) {
	err = ad.Try(func() {
		switch cfg.Optim {
		case "sgd":
			opt = optim.NewSGD(ps, optim.SGDConfig{LR: cfg.LR, Momentum: cfg.Momentum, WeightDecay: cfg.WD})
		case "adam":
			opt = optim.NewAdam(ps, optim.AdamConfig{LR: cfg.LR, WeightDecay: cfg.WD})
		case "adamw":
			opt = optim.NewAdamW(ps, optim.AdamConfig{LR: cfg.LR, WeightDecay: cfg.WD})
		}
	})
	if err == nil && opt == nil {
		err = fmt.Errorf("unknown optimiser %q (want sgd, adam or adamw)", cfg.Optim)
	}
	return opt, err
}

// trainDigits trains an MLP or a CNN on digits. onStart is called once the
// model is built (and restored, with the step it resumes at, 0 for a fresh
// run), onEpoch after every epoch and onBatch after every step (any may be
// nil).
func trainDigits(cfg trainConfig, onStart func(resumedAt int), onEpoch func(epochStats), onBatch func(epoch, batch, batches int, loss float64)) (res trainResult, err error) {
	if cfg.Epochs < 1 || cfg.Batch < 1 || !(cfg.LR > 0) || math.IsInf(cfg.LR, 0) {
		return res, fmt.Errorf("epochs (%d), batch (%d) and learning rate (%g) must be positive", cfg.Epochs, cfg.Batch, cfg.LR)
	}
	act, err := nn.ActivationByName(cfg.Act)
	if err != nil {
		return res, err
	}
	if cfg.Schedule != "cosine" && cfg.Schedule != "none" {
		return res, fmt.Errorf("unknown schedule %q (want cosine or none)", cfg.Schedule)
	}
	if !(cfg.Dropout >= 0 && cfg.Dropout < 1) {
		return res, fmt.Errorf("dropout probability %v must lie in [0, 1)", cfg.Dropout)
	}
	train, test, err := digitsSplit(cfg.TestFrac)
	if err != nil {
		return res, err
	}
	if cfg.Subset > 0 && cfg.Subset < train.Len() {
		idx := make([]int, cfg.Subset)
		for i := range idx {
			idx[i] = i
		}
		train = train.Subset(idx)
	}
	sizes := append(append([]int{datasets.DigitsFeatures}, cfg.Hidden...), datasets.DigitsClasses)
	init := nn.KaimingUniform
	if cfg.Act != "relu" {
		init = nn.XavierUniform
	}
	var model classifier
	var mlp *nn.MLP
	var drops dropoutPart
	switch cfg.Model {
	case "", "mlp":
		mlp = nn.NewMLP(sizes, nn.NewRNG(cfg.Seed), &nn.MLPConfig{DType: tensor.Float32, Act: act, Init: init})
		if cfg.Dropout > 0 {
			mlp.Drop = nn.NewDropout(cfg.Dropout, cfg.Seed)
			drops = append(drops, mlp.Drop)
		}
		model = mlp
	case "cnn":
		c := newCNN(cfg.Seed, cfg.Dropout)
		if c.Drop != nil {
			drops = append(drops, c.Drop)
		}
		model = c
	default:
		return res, fmt.Errorf("unknown model %q (want mlp or cnn)", cfg.Model)
	}
	params := nn.Values(model)
	opt, err := newOptimizer(cfg, params)
	if err != nil {
		return res, err
	}
	batches := datasets.NewBatcher(train.Len(), cfg.Batch, true, cfg.Seed)
	perEpoch := batches.Batches()
	sched := optim.Cosine{Base: cfg.LR, Min: cfg.LR / 100, Steps: cfg.Epochs * perEpoch}
	sumLoss, hits := 0.0, 0.0 // the epoch's running sums, weighted by the batches' sizes
	state := &trainState{model: model, opts: []optim.Stateful{opt}, config: cfg.stateConfig(),
		parts: []statePart{batcherPart{batches}, drops, floatsPart{{"epoch.loss", &sumLoss}, {"epoch.hits", &hits}}, historyPart{&res.History}}}
	first := 1 // the first epoch this run trains in
	if cfg.Resume != "" {
		if err := state.load(cfg.Resume); err != nil {
			return res, err
		}
		if total := cfg.Epochs * perEpoch; state.step > total {
			return res, fmt.Errorf("--resume %s: saved at step %d, past the %d steps of --epochs %d", cfg.Resume, state.step, total, cfg.Epochs)
		}
		// A checkpoint at an epoch's last step resumes in that epoch, with
		// no batch left: its line is the uninterrupted run's.
		first = max((state.step+perEpoch-1)/perEpoch, 1)
		if len(res.History) != first-1 {
			return res, fmt.Errorf("--resume %s: saved at step %d, in epoch %d, with the curves of %d epochs, want %d", cfg.Resume, state.step, first, len(res.History), first-1)
		}
	}
	if onStart != nil {
		onStart(state.step)
	}
	var xb *tensor.Tensor
	var yb []int
	step := state.step
	var stepErr error
	var arena ad.Arena // each step's values and buffers, reused by the next step
	err = ad.Try(func() {
		for ep := first; ep <= cfg.Epochs; ep++ {
			if ep > first || step == 0 { // else the batcher and the sums stand where the checkpoint left them
				batches.Reset()
				sumLoss, hits = 0, 0
			}
			bi := step - (ep-1)*perEpoch
			seen := min(bi*cfg.Batch, train.Len())
			for idx, ok := batches.Next(); ok; idx, ok = batches.Next() {
				if cfg.Schedule == "cosine" {
					opt.SetLR(sched.LR(step))
				}
				xb = datasets.GatherRows(xb, train.X, idx)
				yb = datasets.GatherInts(yb, train.Y, idx)
				arena.Reset()
				logits := model.ForwardTrain(arena.Const(xb))
				loss := nn.CrossEntropy(logits, yb)
				l := loss.Item()
				if !isFinite(l) {
					stepErr = fmt.Errorf("epoch %d, step %d of %d: the loss is %v, training diverged: try a lower learning rate than --lr %s",
						ep, bi+1, perEpoch, l, fmtNum(cfg.LR))
					return
				}
				opt.ZeroGrad()
				if stepErr = loss.Backward(); stepErr != nil {
					return
				}
				opt.Step()
				sumLoss += l * float64(len(idx))
				hits += nn.Accuracy(logits, yb) * float64(len(idx))
				seen += len(idx)
				step++
				bi++
				if onBatch != nil {
					onBatch(ep, bi, perEpoch, sumLoss/float64(seen))
				}
				if cfg.Checkpoint != "" && step%cfg.Every == 0 {
					state.step = step
					if stepErr = state.save(cfg.Checkpoint); stepErr != nil {
						stepErr = fmt.Errorf("--checkpoint %s: %w", cfg.Checkpoint, stepErr)
						return
					}
				}
				if afterStep != nil {
					afterStep(step)
				}
			}
			st := epochStats{Epoch: ep, Loss: sumLoss / float64(seen), TrainAcc: hits / float64(seen), TestAcc: evalAccuracy(model, test)}
			res.History = append(res.History, st)
			if onEpoch != nil {
				onEpoch(st)
			}
		}
	})
	if err == nil {
		err = stepErr
	}
	if err != nil {
		return res, err
	}
	res.Net, res.Model = model, mlp
	res.TestAcc = res.History[len(res.History)-1].TestAcc
	return res, nil
}

// evalAccuracy returns the model's accuracy on d, in batches of 512 rows.
func evalAccuracy(m classifier, d *datasets.Digits) float64 {
	if d.Len() == 0 {
		return 0
	}
	hits := 0.0
	var xb *tensor.Tensor
	var yb []int
	b := datasets.NewBatcher(d.Len(), 512, false, 0)
	for idx, ok := b.Next(); ok; idx, ok = b.Next() {
		xb = datasets.GatherRows(xb, d.X, idx)
		yb = datasets.GatherInts(yb, d.Y, idx)
		hits += nn.Accuracy(m.Forward(ad.Const(xb)), yb) * float64(len(idx))
	}
	return hits / float64(d.Len())
}

// progress prints the per-epoch report: one line per epoch, and on a
// terminal a bar of the whole run's progress below them, redrawn at most
// every 50 ms within an epoch and after each epoch's line, so that it shows
// even when every epoch is shorter than the redraw interval (the default
// MLP's are).
type progress struct {
	w      io.Writer
	tty    bool
	epochs int
	last   time.Time
}

func newProgress(w io.Writer, epochs int) *progress {
	return &progress{w: w, tty: isTerminal(w), epochs: epochs}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

func (p *progress) batch(epoch, b, n int, loss float64) {
	if !p.tty || (b < n && time.Since(p.last) < 50*time.Millisecond) {
		return
	}
	p.bar(epoch, float64(epoch-1)+float64(b)/float64(n), loss)
}

// bar redraws the progress bar: done epochs (fractional) of the run.
func (p *progress) bar(epoch int, done, loss float64) {
	p.last = time.Now()
	const width = 24
	fill := min(int(done*width/float64(p.epochs)), width)
	fmt.Fprintf(p.w, "\repoch %*d/%d [%s%s] loss %.4f", len(strconv.Itoa(p.epochs)), epoch, p.epochs,
		strings.Repeat("=", fill), strings.Repeat(" ", width-fill), loss)
}

func (p *progress) epoch(s epochStats) {
	w := len(strconv.Itoa(p.epochs))
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "epoch %*d/%d  loss %.4f  train acc %.4f  test acc %.4f\n", w, s.Epoch, p.epochs, s.Loss, s.TrainAcc, s.TestAcc)
	if p.tty && s.Epoch < p.epochs {
		p.bar(s.Epoch, float64(s.Epoch), s.Loss) // stays below the lines until the next epoch's
	}
}
