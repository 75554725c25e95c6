package ad_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// An embedding step recorded in an arena through Use follows the eager
// step bit for bit, step after step: the table is used twice (the lookup
// through Use, and directly as a tied output projection), so its gradient
// adds both uses; Grad with the table as target sees them too.
func TestArenaUseMatchesEager(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	mk := func() (*ad.Value, *ad.Value) {
		rr := rand.New(rand.NewPCG(5, 6))
		return ad.Var(arenaRand(rr, tensor.Float32, 7, 5)), ad.Var(arenaRand(rr, tensor.Float32, 5))
	}
	we, be := mk()
	wa, ba := mk()
	step := func(ar *ad.Arena, w, b *ad.Value, ids, tg []int) (float64, *tensor.Tensor) {
		if ar != nil {
			ar.Reset()
		}
		tab := w
		if ar != nil {
			tab = ar.Use(w)
		}
		h := ad.Tanh(ad.Add(ad.IndexSelect(tab, 0, ids), b))
		loss := ad.CrossEntropy(ad.MatMulT(h, w, false, true), tg)
		g, err := ad.GradOpts(loss, []*ad.Value{w}, ad.Options{RetainGraph: true})
		if err != nil {
			t.Fatal(err)
		}
		gw := g[0].Tensor().Clone()
		w.ZeroGrad()
		b.ZeroGrad()
		if err := loss.Backward(); err != nil {
			t.Fatal(err)
		}
		if !sameBits(gw, w.Grad()) {
			t.Fatal("Grad and Backward disagree on the table's gradient")
		}
		for _, p := range []*ad.Value{w, b} { // a plain SGD step, in place
			pt, gt := p.Tensor(), p.Grad()
			for i := range pt.Len() {
				pt.SetFlat(i, pt.AtFlat(i)-0.5*gt.AtFlat(i))
			}
		}
		return loss.Item(), gw
	}
	var ar ad.Arena
	for s := range 6 {
		n := 9
		if s == 3 {
			n = 4 // a shorter step in between
		}
		ids, tg := make([]int, n), make([]int, n)
		for i := range ids {
			ids[i], tg[i] = r.IntN(7), r.IntN(7)
		}
		ids[1] = ids[0] // a repeated id: its rows' gradients add
		le, ge := step(nil, we, be, ids, tg)
		la, ga := step(&ar, wa, ba, ids, tg)
		if ar.Len() < 6 { // the lookup, add, tanh, product, loss and their cotangents
			t.Fatalf("step %d: %d values in the arena: the step was not recorded there", s, ar.Len())
		}
		if le != la {
			t.Fatalf("step %d: loss %v eager, %v in the arena", s, le, la)
		}
		if !sameBits(ge, ga) || !sameBits(we.Tensor(), wa.Tensor()) || !sameBits(be.Tensor(), ba.Tensor()) {
			t.Fatalf("step %d: gradients or parameters differ between the eager and the arena step", s)
		}
	}
}

// Use's contract: a value of the arena comes back as it is, a Const stays a
// constant, a stale handle or another arena's value is ErrStale, and a
// value computed outside the arena is ErrArgument.
func TestArenaUseMisuse(t *testing.T) {
	var ar, other ad.Arena
	w := ad.Var(tensor.Full(tensor.Float64, 1, 3, 2))
	u := ar.Use(w)
	if !u.RequiresGrad() || !u.IsLeaf() {
		t.Fatal("Use of a Var is not a leaf that requires a gradient")
	}
	if ar.Use(u) != u {
		t.Fatal("Use of a value of the arena is not that value")
	}
	c := ar.Use(ad.Const(tensor.Full(tensor.Float64, 2, 2)))
	if c.RequiresGrad() {
		t.Fatal("Use of a Const requires a gradient")
	}
	y := ad.Mul(u, u)
	if ar.Len() != 3 {
		t.Fatalf("%d values in the arena, want 3 (two Uses and the product)", ar.Len())
	}
	for name, f := range map[string]func(){
		"other arena": func() { other.Use(u) },
		"not a leaf":  func() { ar.Use(ad.Mul(w, w)) },
	} {
		err := ad.Try(f)
		var e *ad.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: got %v, want an *ad.Error", name, err)
		}
		if want := map[string]error{"other arena": ad.ErrStale, "not a leaf": ad.ErrArgument}[name]; !errors.Is(err, want) {
			t.Fatalf("%s: got %v, want %v", name, err, want)
		}
	}
	ar.Reset()
	for name, f := range map[string]func(){
		"stale use":     func() { ad.Add(u, w) },
		"stale result":  func() { y.Item() },
		"use stale one": func() { ar.Use(u) },
	} {
		if err := ad.Try(f); !errors.Is(err, ad.ErrStale) {
			t.Fatalf("%s: got %v, want ErrStale", name, err)
		}
	}
	if err := y.Backward(); !errors.Is(err, ad.ErrStale) {
		t.Fatalf("Backward of a stale value: got %v, want ErrStale", err)
	}
}

// An embedding lookup, whose only operands are a table and token ids,
// recorded in an arena: Use brings the table in.
func ExampleArena_Use() {
	table := ad.Var(tensor.FromFloat64([]float64{0, 1, 2, 3, 4, 5}, 3, 2)) // 3 tokens, 2 features
	var ar ad.Arena
	for step := range 2 {
		ar.Reset()
		emb := ad.IndexSelect(ar.Use(table), 0, []int{2, 0, 2}) // rows 2, 0, 2
		loss := ad.Sum(emb)
		table.ZeroGrad()
		if err := loss.Backward(); err != nil {
			panic(err)
		}
		fmt.Println(step, loss.Item(), table.Grad().Data())
	}
	// Output:
	// 0 19 [1 1 0 0 2 2]
	// 1 19 [1 1 0 0 2 2]
}
