package main

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/adjointgo/adjoint/datasets"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/safetensors"
	"github.com/adjointgo/adjoint/tensor"
)

// trainState is what a resumable training run saves with --checkpoint and
// restores with --resume: the model's parameters, every optimizer's state
// (moments, step count, learning rate), the other parts of the run's state
// (the data position: the GPT's batch sampler, the digits models' batcher;
// the dropout masks' offset; the digits models' epoch sums and curves) and
// the step reached, with the run's configuration, which a resumed run must
// match. The schedule is a function of the step, so these are all the state
// there is: a run killed at any point and resumed from its last checkpoint
// ends with exactly the bits of an uninterrupted run.
type trainState struct {
	model  nn.Module
	opts   []optim.Stateful
	parts  []statePart
	config string // the configuration, as configString gives it
	step   int    // steps done
}

// A statePart is a piece of a run's state beyond the parameters and the
// optimizers, kept in a checkpoint's metadata and, when it has tensors,
// under "state." names.
type statePart interface {
	// save adds the part to the metadata and its tensors with add.
	save(meta map[string]string, add func(name string, t *tensor.Tensor))
	// load checks the part saved in meta and in the tensors get returns,
	// and returns the function that restores it, or an error saying what
	// does not fit.
	load(meta map[string]string, get func(name string) (*tensor.Tensor, error)) (restore func(), err error)
}

// pcgPart is a generator, under key: the GPT's batch sampler, whose state
// is its data position.
type pcgPart struct {
	key string
	src *rand.PCG
}

func (p pcgPart) save(meta map[string]string, _ func(string, *tensor.Tensor)) {
	b, _ := p.src.MarshalBinary() // a PCG always marshals
	meta[p.key] = hex.EncodeToString(b)
}

func (p pcgPart) load(meta map[string]string, _ func(string) (*tensor.Tensor, error)) (func(), error) {
	b, err := hex.DecodeString(meta[p.key])
	var src rand.PCG
	if err == nil {
		err = src.UnmarshalBinary(b)
	}
	if err != nil {
		return nil, fmt.Errorf("the sampler's generator state %q: %v", meta[p.key], err)
	}
	return func() { *p.src = src }, nil
}

// batcherPart is the digits models' data position: the batcher's
// generator (before the epoch's shuffle) and its position in the epoch.
type batcherPart struct{ b *datasets.Batcher }

func (p batcherPart) save(meta map[string]string, _ func(string, *tensor.Tensor)) {
	s := p.b.State()
	meta["batcher.rng"] = hex.EncodeToString(s.RNG)
	meta["batcher.pos"] = strconv.Itoa(s.Pos)
}

func (p batcherPart) load(meta map[string]string, _ func(string) (*tensor.Tensor, error)) (func(), error) {
	rng, err := hex.DecodeString(meta["batcher.rng"])
	if err != nil {
		return nil, fmt.Errorf("the batcher's generator state %q: %v", meta["batcher.rng"], err)
	}
	pos, err := strconv.Atoi(meta["batcher.pos"])
	if err != nil {
		return nil, fmt.Errorf("the batcher's position %q is not a count of examples", meta["batcher.pos"])
	}
	s, old := datasets.BatcherState{RNG: rng, Pos: pos}, p.b.State()
	if err := p.b.SetState(s); err != nil { // the batcher checks the state
		return nil, err
	}
	_ = p.b.SetState(old) // its own state: always fits
	return func() { _ = p.b.SetState(s) }, nil
}

// dropoutPart is the offsets of dropout layers, from which their next masks
// follow (nn.Dropout: a mask is a function of the seed and the offset).
type dropoutPart []*nn.Dropout

func (p dropoutPart) save(meta map[string]string, _ func(string, *tensor.Tensor)) {
	for k, d := range p {
		meta["dropout"+strconv.Itoa(k)+".offset"] = strconv.FormatUint(d.Offset, 10)
	}
}

func (p dropoutPart) load(meta map[string]string, _ func(string) (*tensor.Tensor, error)) (func(), error) {
	offs := make([]uint64, len(p))
	for k := range p {
		key := "dropout" + strconv.Itoa(k) + ".offset"
		var err error
		if offs[k], err = strconv.ParseUint(meta[key], 10, 64); err != nil {
			return nil, fmt.Errorf("dropout %d's offset %q is not a count of elements", k, meta[key])
		}
	}
	return func() {
		for k, d := range p {
			d.Offset = offs[k]
		}
	}, nil
}

// floatsPart is numbers a run carries from step to step beyond the
// parameters (an epoch's running sums), saved exactly.
type floatsPart []namedFloat

type namedFloat struct {
	name string
	v    *float64
}

func (p floatsPart) save(meta map[string]string, _ func(string, *tensor.Tensor)) {
	for _, f := range p {
		meta[f.name] = strconv.FormatFloat(*f.v, 'g', -1, 64)
	}
}

func (p floatsPart) load(meta map[string]string, _ func(string) (*tensor.Tensor, error)) (func(), error) {
	vals := make([]float64, len(p))
	for k, f := range p {
		var err error
		if vals[k], err = strconv.ParseFloat(meta[f.name], 64); err != nil || !isFinite(vals[k]) {
			return nil, fmt.Errorf("%s %q is not a finite number", f.name, meta[f.name])
		}
	}
	return func() {
		for k, f := range p {
			*f.v = vals[k]
		}
	}, nil
}

// historyPart is the digits models' learning curves up to the epoch the
// run stands in (for --plot): a tensor [epochs 4] of the epoch, its loss,
// training and held-out accuracy.
type historyPart struct{ h *[]epochStats }

func (p historyPart) save(meta map[string]string, add func(string, *tensor.Tensor)) {
	h := *p.h
	meta["history.epochs"] = strconv.Itoa(len(h))
	if len(h) == 0 {
		return // no tensor of no elements
	}
	t := tensor.New(tensor.Float64, len(h), 4)
	for i, e := range h {
		copy(t.Float64s()[4*i:], []float64{float64(e.Epoch), e.Loss, e.TrainAcc, e.TestAcc})
	}
	add("history", t)
}

func (p historyPart) load(meta map[string]string, get func(string) (*tensor.Tensor, error)) (func(), error) {
	n, err := strconv.Atoi(meta["history.epochs"])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("history.epochs %q is not a count of epochs", meta["history.epochs"])
	}
	var h []epochStats
	if n > 0 { // the tensor first: its size, not the metadata's count, bounds the allocation
		t, err := get("history")
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %v", "state.history", err)
		}
		if t.DType() != tensor.Float64 || !tensor.EqualShape(t.Shape(), []int{n, 4}) {
			return nil, fmt.Errorf("tensor %q is %v%v, want float64[%d 4]", "state.history", t.DType(), t.Shape(), n)
		}
		v := t.Float64s()
		h = make([]epochStats, n)
		for i := range h {
			r := v[4*i : 4*i+4]
			if r[0] != float64(i+1) || !isFinite(r[1]) || !isFinite(r[2]) || !isFinite(r[3]) {
				return nil, fmt.Errorf("tensor %q: row %d is %v, want epoch %d and finite numbers", "state.history", i, r, i+1)
			}
			h[i] = epochStats{Epoch: i + 1, Loss: r[1], TrainAcc: r[2], TestAcc: r[3]}
		}
	}
	return func() { *p.h = h }, nil
}

// checkCheckpointFlags refuses --checkpoint without --every, --every
// without --checkpoint, and an --every out of range.
func checkCheckpointFlags(checkpoint string, every int) error {
	if checkpoint != "" && every < 1 {
		return fmt.Errorf("--checkpoint %s needs --every N ≥ 1 (save every N steps)", checkpoint)
	}
	if every != 0 && checkpoint == "" {
		return fmt.Errorf("--every %d without --checkpoint PATH: say where to save", every)
	}
	if every < 0 || every > maxSteps {
		return fmt.Errorf("--every %d: want an integer in [1, %d]", every, maxSteps)
	}
	return nil
}

// trainStateFormat names the file kind in its metadata.
const trainStateFormat = "adjoint-train-state"

// configString renders the fields of a configuration that a resumed run
// must share with the run that saved, as "name=value" lines in a fixed
// order.
func configString(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, "%s=%s\n", kv[i], kv[i+1])
	}
	return b.String()
}

// save writes the state to path atomically (a temporary file in the same
// directory, synced, renamed over path): a kill at any moment leaves the
// previous checkpoint or the new one, never a torn file.
func (s *trainState) save(path string) error {
	meta := map[string]string{
		"format": trainStateFormat,
		"config": s.config,
		"step":   strconv.Itoa(s.step),
	}
	var ts []safetensors.Named
	add := func(name string, t *tensor.Tensor) {
		ts = append(ts, safetensors.Named{Name: "state." + name, Tensor: t})
	}
	for _, p := range s.parts {
		p.save(meta, add)
	}
	for _, p := range s.model.Params() {
		ts = append(ts, safetensors.Named{Name: "model." + p.Name, Tensor: p.Value.Tensor()})
	}
	for k, o := range s.opts {
		st := o.State()
		pre := "opt" + strconv.Itoa(k) + "."
		meta[pre+"kind"] = st.Kind
		meta[pre+"steps"] = strconv.Itoa(st.Steps)
		meta[pre+"lr"] = strconv.FormatFloat(st.LR, 'g', -1, 64)
		for _, name := range st.Names() {
			ts = append(ts, safetensors.Named{Name: pre + name, Tensor: st.Tensors[name]})
		}
	}
	return safetensors.WriteFile(path, ts, meta)
}

// load restores the state from the checkpoint at path. Everything is
// checked first — the file kind, the configuration (the first field that
// differs is named), every tensor's presence, shape and dtype, the
// optimizers' states — and nothing is changed unless all of it fits.
func (s *trainState) load(path string) error {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("--resume %s: "+format, append([]any{path}, args...)...)
	}
	m := f.Metadata
	if m["format"] != trainStateFormat {
		return bad("not a training checkpoint (format %q; --checkpoint writes them, --save writes models)", m["format"])
	}
	if m["config"] != s.config {
		saved, now := strings.Split(m["config"], "\n"), strings.Split(s.config, "\n")
		for i := range max(len(saved), len(now)) {
			a, b := "", ""
			if i < len(saved) {
				a = saved[i]
			}
			if i < len(now) {
				b = now[i]
			}
			if a != b {
				return bad("saved by a run with %s, this one has %s: resume with the same flags", quoteOr(a), quoteOr(b))
			}
		}
	}
	step, err := strconv.Atoi(m["step"])
	if err != nil || step < 0 {
		return bad("step %q is not a count of steps", m["step"])
	}
	want := map[string]bool{} // the tensors of this run's state
	get := func(name string) (*tensor.Tensor, error) {
		want["state."+name] = true
		return f.Tensor("state." + name)
	}
	var restores []func()
	for _, p := range s.parts {
		r, err := p.load(m, get)
		if err != nil {
			return bad("%v", err)
		}
		restores = append(restores, r)
	}
	params := s.model.Params()
	vals := make([]*tensor.Tensor, len(params))
	for i, p := range params {
		name := "model." + p.Name
		want[name] = true
		t, err := f.Tensor(name)
		if err != nil {
			return bad("tensor %q: %v", name, err)
		}
		if t.DType() != p.Value.DType() || !tensor.EqualShape(t.Shape(), p.Value.Shape()) {
			return bad("tensor %q is %v%v, the model's is %v%v", name, t.DType(), t.Shape(), p.Value.DType(), p.Value.Shape())
		}
		vals[i] = t
	}
	states := make([]optim.State, len(s.opts))
	for k := range s.opts {
		pre := "opt" + strconv.Itoa(k) + "."
		st := optim.State{Kind: m[pre+"kind"], Tensors: map[string]*tensor.Tensor{}}
		if st.Steps, err = strconv.Atoi(m[pre+"steps"]); err != nil {
			return bad("optimizer %d's step count %q", k, m[pre+"steps"])
		}
		if st.LR, err = strconv.ParseFloat(m[pre+"lr"], 64); err != nil {
			return bad("optimizer %d's learning rate %q", k, m[pre+"lr"])
		}
		for _, info := range f.Tensors() {
			if name, ok := strings.CutPrefix(info.Name, pre); ok {
				t, err := f.Tensor(info.Name)
				if err != nil {
					return bad("tensor %q: %v", info.Name, err)
				}
				st.Tensors[name] = t
				want[info.Name] = true
			}
		}
		states[k] = st
	}
	for _, info := range f.Tensors() {
		if !want[info.Name] {
			return bad("tensor %q is not part of this run's state", info.Name)
		}
	}
	// The optimizers check their states; a refusal puts back the ones
	// already set.
	old := make([]optim.State, len(s.opts))
	for k, o := range s.opts {
		old[k] = o.State()
	}
	for k, o := range s.opts {
		if err := o.SetState(states[k]); err != nil {
			for j := range k {
				_ = s.opts[j].SetState(old[j]) // its own state: always fits
			}
			return bad("optimizer %d: %v", k, err)
		}
	}
	for i, p := range params {
		p.Value.Tensor().CopyFrom(vals[i])
	}
	for _, r := range restores {
		r()
	}
	s.step = step
	return nil
}

func quoteOr(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return strconv.Quote(s)
}
