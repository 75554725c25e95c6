package main

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/safetensors"
	"github.com/adjointgo/adjoint/tensor"
)

// trainState is what a resumable training run saves with --checkpoint and
// restores with --resume: the model's parameters, every optimizer's state
// (moments, step count, learning rate), the batch sampler's generator and
// the step reached, with the run's configuration, which a resumed run must
// match. The schedule is a function of the step, and the data position of
// the generator, so these are all the state there is: a run killed at any
// point and resumed from its last checkpoint ends with exactly the bits of
// an uninterrupted run.
type trainState struct {
	model  nn.Module
	opts   []optim.Stateful
	rng    *rand.PCG
	config string // the configuration, as configString gives it
	step   int    // steps done
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
	rng, err := s.rng.MarshalBinary()
	if err != nil {
		return err
	}
	meta["rng"] = hex.EncodeToString(rng)
	var ts []safetensors.Named
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
	rngBytes, err := hex.DecodeString(m["rng"])
	var rng rand.PCG
	if err == nil {
		err = rng.UnmarshalBinary(rngBytes)
	}
	if err != nil {
		return bad("the sampler's generator state %q: %v", m["rng"], err)
	}
	want := map[string]bool{}
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
	*s.rng = rng
	s.step = step
	return nil
}

func quoteOr(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return strconv.Quote(s)
}
