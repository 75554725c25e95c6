package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/datasets"
	"github.com/adjointgo/adjoint/dist"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

// gptConfig holds the knobs of "adjoint train --model gpt". The defaults
// are the CPU-sized configuration of nanoGPT's shakespeare_char recipe
// (4 layers, 4 heads, width 128, context 64, batch 12, 2,000 steps, AdamW
// with β₂ 0.99, weight decay 0.1, 100 warm-up steps, cosine decay to a
// tenth, clipping at 1, no dropout) with one change: a peak learning rate of
// 3e-3 instead of 1e-3. This small model trained this briefly is far from
// unstable at 1e-3, and 3e-3 lowers the final validation loss of seed 1
// from 1.895 (barely under the 1.90) to 1.766 nats per character.
type gptConfig struct {
	Steps       int
	Layers      int
	Heads       int
	Width       int
	Context     int
	Batch       int
	LR          float64 // peak learning rate, reached after Warmup steps
	MinLR       float64 // the cosine schedule's floor at the last step
	Warmup      int
	Beta2       float64
	WD          float64 // AdamW's decoupled weight decay of the ≥ 2-D parameters
	Clip        float64 // the global gradient norm is clipped to this (0: no clipping)
	Seed        uint64
	EvalEvery   int
	EvalBatches int // batches of the periodic estimates
	Threads     int
	ValFrac     float64 // the last ValFrac of the corpus validates

	Checkpoint string      // save the training state here every Every steps ("": never)
	Every      int         // steps between checkpoints
	Resume     string      // resume from this training state ("": start afresh)
	World      *dist.World // the ranks that share each batch (nil: this process alone)
}

// stateConfig is what a resumed run must share with the run that saved its
// checkpoint: everything that changes the steps' bits (not the
// evaluations, the thread count or the output files).
func (c gptConfig) stateConfig() string {
	ranks := 1
	if c.World != nil {
		ranks = c.World.Size()
	}
	return configString("model", "gpt", "steps", strconv.Itoa(c.Steps), "layers", strconv.Itoa(c.Layers),
		"heads", strconv.Itoa(c.Heads), "width", strconv.Itoa(c.Width), "context", strconv.Itoa(c.Context),
		"batch", strconv.Itoa(c.Batch), "lr", fmtNum(c.LR), "min-lr", fmtNum(c.MinLR), "warmup", strconv.Itoa(c.Warmup),
		"beta2", fmtNum(c.Beta2), "wd", fmtNum(c.WD), "clip", fmtNum(c.Clip), "seed", strconv.FormatUint(c.Seed, 10),
		"val-frac", fmtNum(c.ValFrac), "ranks", strconv.Itoa(ranks))
}

func defaultGPTConfig() gptConfig {
	return gptConfig{Steps: 2000, Layers: 4, Heads: 4, Width: 128, Context: 64, Batch: 12,
		LR: 3e-3, MinLR: 3e-4, Warmup: 100, Beta2: 0.99, WD: 0.1, Clip: 1, Seed: 1,
		EvalEvery: 250, EvalBatches: 20, ValFrac: 0.1}
}

// Limits of the GPT's sizes, so that no command line or saved file can make
// a command run out of memory.
const (
	maxGPTLayers  = 256
	maxGPTContext = 1 << 14
	maxGPTWidth   = 1 << 14
	maxGPTHeads   = 1 << 10
	maxGPTVocab   = 1 << 16
	maxGPTParams  = 1 << 28 // 1 GiB of float32
)

// gptParamCount returns the number of parameters of a GPT of these sizes:
// the two embeddings, per block two LayerNorms, four D×D projections and
// the 4·D-wide MLP with their biases, and the final LayerNorm. It saturates
// instead of overflowing.
func gptParamCount(vocab, context, width, layers int) float64 {
	d := float64(width)
	block := 4*d + 4*(d*d+d) + (4*d*d + 4*d) + (4*d*d + d)
	return float64(vocab)*d + float64(context)*d + float64(layers)*block + 2*d
}

// checkGPTSizes refuses sizes outside the limits or that do not fit
// together; flag says how to name them ("--" for flags, "" for metadata).
func checkGPTSizes(prefix string, vocab, context, width, heads, layers int) error {
	for _, err := range []error{
		checkIntNamed(prefix+"layers", layers, 1, maxGPTLayers),
		checkIntNamed(prefix+"heads", heads, 1, maxGPTHeads),
		checkIntNamed(prefix+"width", width, 1, maxGPTWidth),
		checkIntNamed(prefix+"context", context, 1, maxGPTContext),
		checkIntNamed(prefix+"vocab", vocab, 1, maxGPTVocab),
	} {
		if err != nil {
			return err
		}
	}
	if width%heads != 0 {
		return fmt.Errorf("%swidth %d is not divisible by %sheads %d (each head has width/heads features)", prefix, width, prefix, heads)
	}
	if n := gptParamCount(vocab, context, width, layers); n > maxGPTParams {
		return fmt.Errorf("%d layers of width %d need %.0f parameters, more than the %d allowed", layers, width, n, maxGPTParams)
	}
	return nil
}

// checkIntNamed is checkInt for a name that may not be a flag.
func checkIntNamed(name string, v, lo, hi int) error {
	if v >= lo && v <= hi {
		return nil
	}
	return fmt.Errorf("%s %d: want an integer in [%d, %d]", name, v, lo, hi)
}

// checkGPTConfig refuses, before any work, a configuration that trainGPT
// would reject late or silently misread.
func checkGPTConfig(c gptConfig) error {
	for _, err := range []error{
		checkInt("steps", c.Steps, 1, maxSteps),
		checkInt("batch", c.Batch, 1, maxBatch),
		checkInt("threads", c.Threads, 0, maxThreads),
		checkInt("warmup", c.Warmup, 0, maxSteps),
		checkInt("eval-every", c.EvalEvery, 0, maxSteps),
		checkInt("eval-batches", c.EvalBatches, 1, 1<<16),
		checkFloat("lr", c.LR, 0, 10, true, false),
		checkFloat("min-lr", c.MinLR, 0, c.LR, false, false),
		checkFloat("beta2", c.Beta2, 0, 1, false, true),
		checkFloat("wd", c.WD, 0, 1, false, false),
		checkFloat("clip", c.Clip, 0, 1e6, false, false),
		checkFloat("val-frac", c.ValFrac, 0, 0.5, true, false),
		checkGPTSizes("--", 65, c.Context, c.Width, c.Heads, c.Layers),
	} {
		if err != nil {
			return err
		}
	}
	if c.Warmup > c.Steps {
		return fmt.Errorf("--warmup %d is more than --steps %d: the learning rate would never reach --lr (want --warmup ≤ --steps)", c.Warmup, c.Steps)
	}
	if err := checkCheckpointFlags(c.Checkpoint, c.Every); err != nil {
		return err
	}
	if c.World != nil && c.Batch%c.World.Size() != 0 {
		return fmt.Errorf("--batch %d does not split evenly over %d ranks: give a multiple of %d", c.Batch, c.World.Size(), c.World.Size())
	}
	if c.Batch*c.Context > 1<<20 {
		return fmt.Errorf("--batch %d × --context %d = %d tokens per step, more than the %d allowed", c.Batch, c.Context, c.Batch*c.Context, 1<<20)
	}
	return nil
}

// shakespeareSplit is the corpus as token ids, split as nanoGPT's
// shakespeare_char does: the first 1 − valFrac of the text trains, the rest
// validates.
type shakespeareSplit struct {
	Vocab      *datasets.CharVocab
	Train, Val []int
}

func loadShakespeare(valFrac float64) (*shakespeareSplit, error) {
	text, err := datasets.TinyShakespeare()
	if err != nil {
		return nil, err
	}
	v := datasets.NewCharVocab(text)
	ids, err := v.Encode(text)
	if err != nil {
		return nil, err
	}
	n := int(float64(len(ids)) * (1 - valFrac))
	return &shakespeareSplit{Vocab: v, Train: ids[:n], Val: ids[n:]}, nil
}

// sampleBatch draws batch windows of context+1 consecutive tokens from data
// at uniform offsets (nanoGPT's get_batch): x holds the first context
// tokens of each, y the next context. The rows are views of data.
func sampleBatch(r *rand.Rand, data []int, batch, context int, x, y [][]int) ([][]int, [][]int) {
	x, y = x[:0], y[:0]
	for range batch {
		i := r.IntN(len(data) - context)
		x = append(x, data[i:i+context:i+context])
		y = append(y, data[i+1:i+1+context:i+1+context])
	}
	return x, y
}

// evalSet is a fixed list of batches on which a loss is estimated.
type evalSet struct{ x, y [][][]int }

// wholeText cuts data into consecutive windows of context tokens (the
// targets: the same shifted by one), batch windows per batch, the last batch
// possibly smaller; a tail shorter than a window is left out.
func wholeText(data []int, batch, context int) evalSet {
	var s evalSet
	var x, y [][]int
	for i := 0; i+context < len(data); i += context {
		x = append(x, data[i:i+context:i+context])
		y = append(y, data[i+1:i+1+context:i+1+context])
		if len(x) == batch {
			s.x, s.y = append(s.x, x), append(s.y, y)
			x, y = nil, nil
		}
	}
	if len(x) > 0 {
		s.x, s.y = append(s.x, x), append(s.y, y)
	}
	return s
}

// fixedBatches draws n batches from data with a seed of their own, so that
// every run (whatever its --seed) is measured on the same windows.
func fixedBatches(data []int, n, batch, context int, seed uint64) evalSet {
	r := rand.New(rand.NewPCG(seed, 0xe7a1))
	var s evalSet
	for range n {
		x, y := sampleBatch(r, data, batch, context, nil, nil)
		s.x, s.y = append(s.x, x), append(s.y, y)
	}
	return s
}

// evalChunk is the number of batches evaluated in one forward pass (larger
// matrix products run faster than several small ones; beyond two, the
// arena's buffers grow more than the time shrinks).
const evalChunk = 2

// mean returns the mean loss of m over all the windows of the set's
// batches (all windows have one length, so this is the mean per token).
// The forward passes run in ar, reset before each: the evaluation reuses
// the same buffers instead of allocating (and the runtime clearing) tens
// of MB per pass — the whole validation text in 1.3–1.5 s instead of
// 2.7–3.6 (a fifth of the demo's time went to its evaluations).
func (s evalSet) mean(m *nn.GPT, ar *ad.Arena) float64 {
	sum, rows := 0.0, 0
	for i := 0; i < len(s.x); i += evalChunk {
		var x, y [][]int
		for j := i; j < min(i+evalChunk, len(s.x)); j++ {
			x, y = append(x, s.x[j]...), append(y, s.y[j]...)
		}
		ar.Reset()
		sum += m.LossIn(ar, x, y).Item() * float64(len(x))
		rows += len(x)
	}
	ar.Reset()
	return sum / float64(rows)
}

// frozen returns a GPT that shares m's parameter tensors as constants: its
// forward passes record nothing (no graph, no saved activations), and it
// sees every in-place update of m's parameters.
func frozen(m *nn.GPT) *nn.GPT {
	f := nn.NewGPT(m.Config, nn.NewRNG(0))
	mp, fp := m.Params(), f.Params()
	for i := range fp {
		*fp[i].Value = *mp[i].Value.Detach()
	}
	return f
}

// freeze turns m's parameters into constants in place (for inference only).
func freeze(m *nn.GPT) {
	for _, p := range m.Params() {
		*p.Value = *p.Value.Detach()
	}
}

// gptEval is one point of the learning curves.
type gptEval struct {
	Step            int
	Train, Val      float64 // mean loss over the fixed batches
	Elapsed         time.Duration
	LR, StepLossAvg float64
}

// gptResult is what trainGPT produces.
type gptResult struct {
	Model   *nn.GPT
	Vocab   *datasets.CharVocab
	History []gptEval
	ValLoss float64 // at the last step, over the whole validation text
}

// afterStep, when set (by tests), is called after each training step and
// its checkpoint.
var afterStep func(step int)

// trainGPT trains a character-level GPT on Tiny Shakespeare. onStart is
// called once the model is built (and restored, with the step it resumes
// at, 0 for a fresh run), onStep after every step with the step (1-based)
// and its loss, onEval after every evaluation (any may be nil).
//
// With c.World of more than one rank, every rank draws the same global
// batch and trains on its share of its windows; DataParallel averages the
// gradients, so every rank takes the step one process would take on the
// whole batch. Rank 0 evaluates and writes the checkpoints; the others
// report nothing.
func trainGPT(c gptConfig, onStart func(resumedAt int), onStep func(step int, loss float64), onEval func(gptEval)) (res gptResult, err error) {
	if err := checkGPTConfig(c); err != nil {
		return res, err
	}
	data, err := loadShakespeare(c.ValFrac)
	if err != nil {
		return res, err
	}
	if len(data.Val) <= c.Context || len(data.Train) <= c.Context {
		return res, fmt.Errorf("--context %d is longer than the validation text (%d characters)", c.Context, len(data.Val))
	}
	cfg := nn.GPTConfig{Vocab: data.Vocab.Size(), Context: c.Context, DModel: c.Width, Heads: c.Heads, Layers: c.Layers, DType: tensor.Float32}
	var model, eval *nn.GPT
	var decay, other, all []*ad.Value
	var opts []optim.Stateful
	err = ad.Try(func() {
		model = nn.NewGPT(cfg, nn.NewRNG(c.Seed))
		eval = frozen(model)
		// nanoGPT's groups: every parameter of two or more dimensions (the
		// embeddings, tied to the output projection, and the weight
		// matrices) decays; biases and LayerNorm parameters do not.
		for _, p := range model.Params() {
			if len(p.Value.Shape()) >= 2 {
				decay = append(decay, p.Value)
			} else {
				other = append(other, p.Value)
			}
			all = append(all, p.Value)
		}
		opts = append(opts, optim.NewAdamW(decay, optim.AdamConfig{LR: c.LR, Beta2: c.Beta2, WeightDecay: c.WD, NoWeightDecay: c.WD == 0}))
		if len(other) > 0 {
			opts = append(opts, optim.NewAdamW(other, optim.AdamConfig{LR: c.LR, Beta2: c.Beta2, NoWeightDecay: true}))
		}
	})
	if err != nil {
		return res, err
	}
	sched := optim.Cosine{Base: c.LR, Min: c.MinLR, Steps: c.Steps, Warmup: c.Warmup}
	trainSet := fixedBatches(data.Train, c.EvalBatches, c.Batch, c.Context, 1)
	valSet := fixedBatches(data.Val, c.EvalBatches, c.Batch, c.Context, 2)
	src := rand.NewPCG(c.Seed, 0xba7c) // the batches' generator: its state is the data position
	r := rand.New(src)
	rank, ranks := 0, 1
	var dp *dist.DataParallel
	if c.World != nil && c.World.Size() > 1 {
		rank, ranks = c.World.Rank(), c.World.Size()
		if dp, err = dist.NewDataParallel(c.World, all, dist.DataParallelOptions{}); err != nil {
			return res, err
		}
	}
	state := &trainState{model: model, opts: opts, parts: []statePart{pcgPart{"rng", src}}, config: c.stateConfig()}
	if c.Resume != "" {
		if err := state.load(c.Resume); err != nil {
			return res, err
		}
		if state.step > c.Steps {
			return res, fmt.Errorf("--resume %s: saved at step %d, past --steps %d", c.Resume, state.step, c.Steps)
		}
	}
	if onStart != nil {
		onStart(state.step)
	}
	share := c.Batch / ranks // this rank's windows of each batch
	lossBuf := tensor.New(tensor.Float64, 1)
	var x, y [][]int
	start := time.Now()
	sum, count := 0.0, 0
	var evalAr ad.Arena // the evaluations' forward passes (see evalSet.mean)
	evaluate := func(step int) {
		if rank != 0 {
			return // rank 0 reports
		}
		e := gptEval{Step: step, Train: trainSet.mean(eval, &evalAr), Val: valSet.mean(eval, &evalAr), Elapsed: time.Since(start), LR: sched.LR(max(step-1, 0))}
		if count > 0 {
			e.StepLossAvg = sum / float64(count)
		}
		sum, count = 0, 0
		res.History = append(res.History, e)
		if onEval != nil {
			onEval(e)
		}
	}
	var stepErr error
	var ar ad.Arena // each step's values, nodes and buffers, for the next step
	err = ad.Try(func() {
		if c.EvalEvery > 0 && state.step == 0 {
			evaluate(0)
		}
		for step := state.step; step < c.Steps; step++ {
			lr := sched.LR(step)
			for _, o := range opts {
				o.SetLR(lr)
			}
			x, y = sampleBatch(r, data.Train, c.Batch, c.Context, x, y)
			ar.Reset()
			loss := model.LossIn(&ar, x[rank*share:(rank+1)*share], y[rank*share:(rank+1)*share])
			l := loss.Item()
			if dp != nil { // the mean over the ranks' shares: the global batch's loss, the same on every rank
				lossBuf.SetFlat(0, l)
				if stepErr = c.World.AllReduce(lossBuf, dist.Mean); stepErr != nil {
					return
				}
				l = lossBuf.AtFlat(0)
			}
			if !isFinite(l) {
				stepErr = fmt.Errorf("step %d: the loss is %v, training diverged: try a lower learning rate than --lr %s", step+1, l, fmtNum(c.LR))
				return
			}
			for _, o := range opts {
				o.ZeroGrad()
			}
			if dp != nil {
				stepErr = dp.Backward(loss)
			} else {
				stepErr = loss.Backward()
			}
			if stepErr != nil {
				return
			}
			if c.Clip > 0 {
				optim.ClipGradNorm(all, c.Clip)
			}
			for _, o := range opts {
				o.Step()
			}
			sum += l
			count++
			if onStep != nil {
				onStep(step+1, l)
			}
			if n := step + 1; n == c.Steps || (c.EvalEvery > 0 && n%c.EvalEvery == 0) {
				evaluate(n)
			}
			if n := step + 1; c.Checkpoint != "" && n%c.Every == 0 && rank == 0 {
				state.step = n
				if stepErr = state.save(c.Checkpoint); stepErr != nil {
					stepErr = fmt.Errorf("--checkpoint %s: %w", c.Checkpoint, stepErr)
					return
				}
			}
			if afterStep != nil {
				afterStep(step + 1)
			}
		}
	})
	if err == nil {
		err = stepErr
	}
	if err != nil {
		return res, err
	}
	res.Model, res.Vocab = model, data.Vocab
	if rank != 0 {
		return res, nil // rank 0 reports
	}
	if err := ad.Try(func() { res.ValLoss = wholeText(data.Val, c.Batch, c.Context).mean(eval, &evalAr) }); err != nil {
		return res, err
	}
	return res, nil
}

// gptMetadata describes a saved GPT: its sizes and its vocabulary, which
// "adjoint generate" needs to rebuild it, and how it was trained.
func gptMetadata(c gptConfig, res gptResult) map[string]string {
	cfg := res.Model.Config
	return map[string]string{
		"format":     "adjoint-gpt",
		"dataset":    "tinyshakespeare",
		"vocab":      res.Vocab.String(),
		"vocab_size": strconv.Itoa(cfg.Vocab),
		"context":    strconv.Itoa(cfg.Context),
		"width":      strconv.Itoa(cfg.DModel),
		"heads":      strconv.Itoa(cfg.Heads),
		"layers":     strconv.Itoa(cfg.Layers),
		"steps":      strconv.Itoa(c.Steps),
		"val_frac":   fmtNum(c.ValFrac),
		"val_loss":   strconv.FormatFloat(res.ValLoss, 'f', 4, 64),
	}
}

// gptProgress prints the progress of "train --model gpt": a redrawn bar on
// a terminal, and one plain line per evaluation.
type gptProgress struct {
	w     io.Writer
	tty   bool
	steps int
	last  time.Time
	start time.Time
	avg   float64 // exponential moving average of the step loss
}

func newGPTProgress(w io.Writer, steps int) *gptProgress {
	return &gptProgress{w: w, tty: isTerminal(w), steps: steps, start: time.Now()}
}

func (p *gptProgress) step(n int, loss float64) {
	if n == 1 {
		p.avg = loss
	} else {
		p.avg = 0.95*p.avg + 0.05*loss
	}
	if !p.tty || (n < p.steps && time.Since(p.last) < 100*time.Millisecond) {
		return
	}
	p.last = time.Now()
	const width = 24
	fill := n * width / p.steps
	el := time.Since(p.start)
	eta := time.Duration(float64(el) / float64(n) * float64(p.steps-n))
	fmt.Fprintf(p.w, "\rstep %*d/%d [%s%s] loss %.4f  %s/step  eta %s\033[K", len(strconv.Itoa(p.steps)), n, p.steps,
		strings.Repeat("=", fill), strings.Repeat(" ", width-fill), p.avg,
		(el / time.Duration(n)).Round(time.Millisecond), eta.Round(time.Second))
}

func (p *gptProgress) eval(e gptEval) {
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "step %d: train loss %.4f, val loss %.4f (%.0fs)\n", e.Step, e.Train, e.Val, e.Elapsed.Seconds())
}

// gptFlags defines the flags of "adjoint train --model gpt" into c and
// returns the flag set and --save.
func gptFlags(c *gptConfig, stderr io.Writer) (fs *flag.FlagSet, save *string) {
	fs = flag.NewFlagSet("train --model gpt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("model", "gpt", "model: gpt here (mlp and cnn train on the digits)")
	fs.IntVar(&c.Steps, "steps", c.Steps, "training steps (one batch each)")
	fs.IntVar(&c.Layers, "layers", c.Layers, "transformer blocks")
	fs.IntVar(&c.Heads, "heads", c.Heads, "attention heads (must divide --width)")
	fs.IntVar(&c.Width, "width", c.Width, "features per position (d_model)")
	fs.IntVar(&c.Context, "context", c.Context, "characters per training window (the model's largest context)")
	fs.IntVar(&c.Batch, "batch", c.Batch, "windows per step")
	fs.Float64Var(&c.LR, "lr", c.LR, "peak learning rate of AdamW, in (0, 10]")
	fs.Float64Var(&c.MinLR, "min-lr", c.MinLR, "learning rate at the last step (cosine decay from --lr), in [0, --lr]")
	fs.IntVar(&c.Warmup, "warmup", c.Warmup, "steps of linear warm-up to --lr")
	fs.Float64Var(&c.Beta2, "beta2", c.Beta2, "AdamW's second-moment decay, in [0, 1)")
	fs.Float64Var(&c.WD, "wd", c.WD, "AdamW's weight decay of the weight matrices and embeddings (not biases or LayerNorms), in [0, 1]")
	fs.Float64Var(&c.Clip, "clip", c.Clip, "clip the global gradient norm to this (0: no clipping)")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the initialisation and the batches")
	fs.IntVar(&c.EvalEvery, "eval-every", c.EvalEvery, "estimate the train and validation losses every this many steps (0: only at the end)")
	fs.IntVar(&c.EvalBatches, "eval-batches", c.EvalBatches, "batches of the fixed (seed-independent) sets the periodic losses are estimated on")
	fs.IntVar(&c.Threads, "threads", 0, "threads for matrix products and GOMAXPROCS (0: all cores)")
	save = fs.String("save", "", "save the trained model (weights, sizes and vocabulary) to this safetensors file, for adjoint generate")
	fs.StringVar(&c.Checkpoint, "checkpoint", "", "save the training state (model, optimizer, sampler, step) to this file every --every steps, atomically")
	fs.IntVar(&c.Every, "every", 0, "steps between checkpoints (with --checkpoint)")
	fs.StringVar(&c.Resume, "resume", "", "resume from a training state saved by --checkpoint (with the same flags): the run ends with the bits of an uninterrupted one")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: adjoint train --model gpt [flags]

Trains a character-level GPT (pre-norm transformer blocks, tied embeddings,
GELU) on the embedded Tiny Shakespeare corpus with nanoGPT's shakespeare_char
recipe: the first 90%% of the text trains, the last 10%% validates; AdamW
(β₂ 0.99, weight decay on the matrices), %d warm-up steps then cosine decay,
gradients clipped to norm 1 (nanoGPT's peak learning rate is 1e-3; 3e-3
does better at this size). Prints the train and validation losses every
--eval-every steps and, on its last line, the validation loss in nats per
character over the whole validation text (cut into consecutive windows of
--context characters, each character predicted from those before it in its
window: the value the periodic estimates, on random windows, sample).
"adjoint generate --load FILE" samples text from a --save'd model.

Flags:
`, c.Warmup)
		fs.PrintDefaults()
	}
	return fs, save
}

// runTrainGPT is "adjoint train --model gpt".
func runTrainGPT(args []string, stdout, stderr io.Writer) int {
	c := defaultGPTConfig()
	fs, save := gptFlags(&c, stderr)
	if code, ok := parseFlags(fs, "train --model gpt", args, stderr, func(name string) string {
		if f, _, _, _ := digitsFlags(new(trainConfig), io.Discard); f.Lookup(name) != nil {
			which := "mlp and cnn"
			if name == "hidden" || name == "act" {
				which = "mlp"
			}
			return "is a flag of --model " + which + ", not of gpt (adjoint train --model gpt -h lists gpt's flags)"
		}
		return ""
	}); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "adjoint train: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if m := fs.Lookup("model").Value.String(); m != "gpt" {
		fmt.Fprintf(stderr, "adjoint train: --model %s given twice with gpt: want one model\n", m)
		return exitUsage
	}
	w, err := world() // MPI's ranks when started by mpirun (built with -tags mpi), else this process alone
	if err != nil {
		fmt.Fprintf(stderr, "adjoint train: %v\n", err)
		return exitFailure
	}
	c.World = w
	if err := checkGPTConfig(c); err != nil {
		fmt.Fprintf(stderr, "adjoint train: %v\n", err)
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, f := range []string{"save", "checkpoint"} {
		if set[f] {
			if err := checkOutput(f, fs.Lookup(f).Value.String()); err != nil {
				fmt.Fprintf(stderr, "adjoint train: %v\n", err)
				return exitUsage
			}
		}
	}
	setThreads(c.Threads)
	if w.Rank() != 0 {
		stdout = io.Discard // rank 0 reports and saves
	}

	start := time.Now()
	p := newGPTProgress(stdout, c.Steps)
	ran := c.Steps // steps this run takes
	onStart := func(resumed int) {
		ran = c.Steps - resumed
		if resumed > 0 {
			fmt.Fprintf(stdout, "resumed at step %d\n", resumed)
		}
		fmt.Fprintf(stdout, "ranks: %d\n", w.Size())
		fmt.Fprintf(stdout, "GPT: %d layers, %d heads, width %d, context %d, %.2fM parameters; batch %d (%d per rank), %d steps, %d thread(s)\n",
			c.Layers, c.Heads, c.Width, c.Context, gptParamCount(65, c.Context, c.Width, c.Layers)/1e6, c.Batch, c.Batch/w.Size(), c.Steps, tensor.Threads())
		start = time.Now()
	}
	res, err := trainGPT(c, onStart, p.step, p.eval)
	if err != nil {
		fmt.Fprintf(stderr, "adjoint train: rank %d: %v\n", w.Rank(), err)
		if w.Size() > 1 {
			w.Abort(exitFailure) // the other ranks must not wait in a collective
		}
		return exitFailure
	}
	if w.Rank() != 0 {
		return exitOK
	}
	if afterTraining != nil {
		afterTraining()
	}
	code := exitOK
	if *save != "" {
		if err := nn.SaveFile(*save, res.Model, gptMetadata(c, res)); err != nil {
			fmt.Fprintf(stderr, "adjoint train: --save: %v\n", err)
			code = exitFailure
		} else {
			fmt.Fprintf(stdout, "saved %s\n", *save)
		}
	}
	el := time.Since(start)
	fmt.Fprintf(stdout, "trained in %.1fs (%.0f ms/step)\n", el.Seconds(), float64(el.Milliseconds())/float64(max(ran, 1)))
	fmt.Fprintf(stdout, "validation loss: %.4f\n", res.ValLoss)
	return code
}

// wantsGPT reports whether the command line of "adjoint train" selects
// --model gpt, whose flags differ from the digits models'.
func wantsGPT(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return false
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "model" {
			continue
		}
		if !hasVal && i+1 < len(args) {
			val = args[i+1]
		}
		if val == "gpt" {
			return true
		}
	}
	return false
}
