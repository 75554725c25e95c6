package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/datasets"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/safetensors"
	"github.com/adjointgo/adjoint/tensor"
)

func init() {
	register(command{name: "generate", summary: "sample text from a GPT saved by adjoint train --model gpt --save", run: runGenerate})
}

// maxGenTokens bounds --tokens.
const maxGenTokens = 1_000_000

// errNotGPT is wrapped by the errors of buildGPT that come from a file's
// metadata: the file is a valid safetensors file, but not a GPT saved by
// adjoint train --model gpt.
var errNotGPT = errors.New("not a GPT saved by adjoint train --model gpt")

// savedGPT is a model rebuilt by buildGPT, with its vocabulary.
type savedGPT struct {
	Model *nn.GPT
	Vocab *datasets.CharVocab
}

// buildGPT rebuilds the GPT described by a decoded file's metadata and
// loads its weights. The metadata is checked against limits and against the
// shapes of the file's tensors before the model is allocated, so no file can
// make it run out of memory or panic: errors wrap errNotGPT,
// nn.ErrCheckpoint or safetensors.ErrFormat.
func buildGPT(f *safetensors.File) (*savedGPT, error) {
	path := f.Name()
	if path == "" {
		path = "model"
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: %w", path, fmt.Sprintf(format, args...), errNotGPT)
	}
	meta := f.Metadata
	if meta["format"] != "adjoint-gpt" {
		what := "no format in its metadata"
		if fm := meta["format"]; fm != "" {
			what = fmt.Sprintf("metadata format=%q", fm)
		}
		return nil, bad("%s, want adjoint-gpt", what)
	}
	sizes := map[string]int{}
	for _, k := range []string{"vocab_size", "context", "width", "heads", "layers"} {
		n, err := strconv.Atoi(meta[k])
		if err != nil {
			return nil, bad("metadata %s %q is not an integer", k, meta[k])
		}
		sizes[k] = n
	}
	if err := checkGPTSizes("metadata ", sizes["vocab_size"], sizes["context"], sizes["width"], sizes["heads"], sizes["layers"]); err != nil {
		return nil, bad("%v", err)
	}
	vocab, err := datasets.ParseCharVocab(meta["vocab"])
	if err != nil {
		return nil, bad("metadata vocab: %v", err)
	}
	if vocab.Size() != sizes["vocab_size"] {
		return nil, bad("metadata vocab has %d characters, vocab_size says %d", vocab.Size(), sizes["vocab_size"])
	}
	cfg := nn.GPTConfig{Vocab: sizes["vocab_size"], Context: sizes["context"], DModel: sizes["width"],
		Heads: sizes["heads"], Layers: sizes["layers"], DType: tensor.Float32}
	// the embeddings' shapes must agree before anything is allocated
	for name, want := range map[string][]int{
		"transformer.wte.weight": {cfg.Vocab, cfg.DModel},
		"transformer.wpe.weight": {cfg.Context, cfg.DModel},
	} {
		info, ok := f.Info(name)
		if !ok {
			return nil, bad("no tensor %q", name)
		}
		if !tensor.EqualShape(info.Shape, want) {
			return nil, bad("tensor %q has shape %v, the metadata's sizes give %v", name, info.Shape, want)
		}
	}
	// Every block must be there, and the file must hold exactly as many
	// numbers as the model has parameters: the model then allocates no
	// more than the file's own size (an 8 KB file claiming 21 layers of
	// width 1024 allocated 1 GB before failing on a missing tensor), and
	// nn.LoadFrom checks every tensor's name and shape once it exists.
	for i := range cfg.Layers {
		name := "transformer.h." + strconv.Itoa(i) + ".ln_1.weight"
		info, ok := f.Info(name)
		if !ok {
			return nil, bad("metadata layers %d, but the file has no block %d", cfg.Layers, i)
		}
		if !tensor.EqualShape(info.Shape, []int{cfg.DModel}) {
			return nil, bad("tensor %q has shape %v, the metadata's width gives [%d]", name, info.Shape, cfg.DModel)
		}
	}
	held := 0.0
	for _, in := range f.Tensors() {
		held += float64(tensor.Size(in.Shape)) // each checked by safetensors, < 2³¹ elements
	}
	if want := gptParamCount(cfg.Vocab, cfg.Context, cfg.DModel, cfg.Layers); held != want {
		return nil, bad("the metadata's sizes give a model of %.0f parameters, but the file holds %.0f numbers", want, held)
	}
	var m *nn.GPT
	if err := ad.Try(func() { m = nn.NewGPT(cfg, nn.NewRNG(0)) }); err != nil {
		return nil, bad("%v", err)
	}
	if _, err := nn.LoadFrom(f, m); err != nil {
		return nil, err
	}
	freeze(m)
	return &savedGPT{Model: m, Vocab: vocab}, nil
}

// sampler draws the next token from a row of logits: divided by the
// temperature, cut to the topK largest (0: all), softmax, one draw.
type sampler struct {
	temp float64
	topK int
	rng  *rand.Rand
	p    []float64
	idx  []int
}

// next draws a token. The largest logit is subtracted before the division
// by the temperature, so that every scaled logit is ≤ 0: at a temperature
// as small as 1e-308 the others become −Inf (probability 0) and the draw is
// the argmax, where dividing first overflowed to +Inf and Inf − Inf made
// every probability NaN. A NaN logit counts as −Inf; with +Inf logits, the
// draw is among them.
func (s *sampler) next(logits []float32) int {
	n := len(logits)
	if cap(s.p) < n {
		s.p, s.idx = make([]float64, n), make([]int, n)
	}
	p, idx := s.p[:n], s.idx[:n]
	mx := math.Inf(-1)
	for _, l := range logits {
		if v := float64(l); v > mx { // NaN is never larger
			mx = v
		}
	}
	for i, l := range logits {
		v := float64(l)
		switch {
		case math.IsNaN(v):
			p[i] = math.Inf(-1)
		case math.IsInf(mx, 1):
			p[i] = math.Inf(-1)
			if math.IsInf(v, 1) {
				p[i] = 0
			}
		case math.IsInf(mx, -1): // every logit is −Inf or NaN: draw uniformly
			p[i] = 0
		default:
			p[i] = (v - mx) / s.temp // ≤ 0, or −Inf: never an overflow to +Inf
		}
		idx[i] = i
	}
	k := s.topK
	if k <= 0 || k > n {
		k = n
	}
	if k < n {
		sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] > p[idx[b]] })
		idx = idx[:k]
	}
	sum := 0.0
	for _, i := range idx {
		sum += math.Exp(p[i]) // the largest is exp(0) = 1, so sum ≥ 1
	}
	u := s.rng.Float64() * sum
	for _, i := range idx {
		u -= math.Exp(p[i])
		if u < 0 {
			return i
		}
	}
	return idx[0] // rounding left u ≥ 0: the most likely of the kept
}

// generate samples n tokens after prompt (token ids, at least one), feeding
// the model the last Context tokens each time, and calls emit with each.
func generate(m *nn.GPT, prompt []int, n int, s *sampler, emit func(id int) error) error {
	ctx := m.Config.Context
	seq := append([]int(nil), prompt...)
	batch := make([][]int, 1)
	var err error
	tryErr := ad.Try(func() {
		for range n {
			w := seq[max(0, len(seq)-ctx):]
			batch[0] = w
			logits := m.Forward(batch).Tensor() // [1 T V]
			v := m.Config.Vocab
			last := logits.Float32s()[(len(w)-1)*v : len(w)*v]
			id := s.next(last)
			seq = append(seq, id)
			if err = emit(id); err != nil {
				return
			}
		}
	})
	if tryErr != nil {
		return tryErr
	}
	return err
}

func runGenerate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	load := fs.String("load", "", "safetensors file written by adjoint train --model gpt --save (required)")
	prompt := fs.String("prompt", "\n", "text the sample continues (every character must be in the model's vocabulary)")
	tokens := fs.Int("tokens", 500, fmt.Sprintf("characters to sample, 1 to %d", maxGenTokens))
	temp := fs.Float64("temperature", 0.8, "divides the logits: below 1 sharper, above 1 flatter; in (0, 100]")
	topK := fs.Int("top-k", 40, "sample among the k most likely characters only (0: all)")
	seed := fs.Uint64("seed", 1, "seed of the sampling")
	threads := fs.Int("threads", 0, "threads for matrix products and GOMAXPROCS (0: all cores)")
	allowNonFinite := fs.Bool("allow-nonfinite", false, "load a model whose weights hold NaN or ±Inf (refused by default: its samples are garbage)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: adjoint generate --load FILE [--prompt TEXT] [--tokens N]\n\nRebuilds the character-level GPT saved by \"adjoint train --model gpt --save FILE\"\nand prints the prompt followed by --tokens characters sampled one at a time,\neach conditioned on the previous ones (the last context-length of them).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, "generate", args, stderr, nil); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "adjoint generate: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *load == "" {
		fmt.Fprintf(stderr, "adjoint generate: --load FILE is required (a GPT saved by adjoint train --model gpt --save)\n")
		return exitUsage
	}
	for _, err := range []error{
		checkInt("tokens", *tokens, 1, maxGenTokens),
		checkFloat("temperature", *temp, 0, 100, true, false),
		checkInt("top-k", *topK, 0, maxGPTVocab),
		checkInt("threads", *threads, 0, maxThreads),
	} {
		if err != nil {
			fmt.Fprintf(stderr, "adjoint generate: %v\n", err)
			return exitUsage
		}
	}
	if *prompt == "" {
		fmt.Fprintf(stderr, "adjoint generate: --prompt: empty, want at least one character (the default is a newline)\n")
		return exitUsage
	}
	setThreads(*threads)
	f, err := readModel(*load, *allowNonFinite)
	if err != nil {
		fmt.Fprintf(stderr, "adjoint generate: %v\n", err)
		return exitFailure
	}
	g, err := buildGPT(f)
	if err != nil {
		fmt.Fprintf(stderr, "adjoint generate: %v\n", err)
		return exitFailure
	}
	ids, err := g.Vocab.Encode(*prompt)
	if err != nil {
		var de *datasets.Error
		if errors.As(err, &de) {
			err = errors.New(de.Msg)
		}
		fmt.Fprintf(stderr, "adjoint generate: --prompt: %v (the model knows %q)\n", err, g.Vocab.String())
		return exitUsage
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	w.WriteString(*prompt)
	s := &sampler{temp: *temp, topK: *topK, rng: rand.New(rand.NewPCG(*seed, 0x9e7))}
	err = generate(g.Model, ids, *tokens, s, func(id int) error {
		_, err := w.WriteString(string(g.Vocab.Char(id)))
		if id == 0 || g.Vocab.Char(id) == '\n' {
			err = w.Flush()
		}
		return err
	})
	if err == nil {
		_, err = w.WriteString("\n")
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "adjoint generate: %v\n", err)
		return exitFailure
	}
	return exitOK
}
