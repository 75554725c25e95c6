package ad

// Use returns the leaf v (a Var or a Const made outside any arena) as a
// value of the arena: it reads v's data, without a copy, and ops on it put
// their results in the arena. For a Var it is the Var for the backward
// pass: gradients through it accumulate into v (Grad of v, the optimiser's
// update, a target v of Grad all see them), as if v itself had been used.
// It is valid until the next Reset, like every value of the arena.
//
// Arena.Const brings a step's input into the arena; Use is for a step whose
// first op takes no input value, such as an embedding lookup of token ids
// (ad.IndexSelect of a table by ids): with the table brought in by Use, the
// lookup and everything computed from it are recorded in the arena.
//
// A value of this arena is returned as it is. Using a value of another
// arena, or a stale one, panics with an *Error wrapping ErrStale; a value
// computed by an op outside any arena (not a leaf) panics with an *Error
// wrapping ErrArgument.
func (a *Arena) Use(v *Value) *Value {
	const op = "arena_use"
	v.check(op)
	if v.batch() != nil {
		panic(&Error{Op: op, Err: ErrBatched, Msg: "inside Vmap the value stands for a batch, which an Arena cannot hold: bring the value into the arena before Vmap, or use it without the arena"})
	}
	if v.slot != nil {
		if v.slot.ar != a {
			panic(&Error{Op: op, Err: ErrStale, Msg: "the value belongs to another Arena"})
		}
		return v
	}
	if v.n != nil {
		panic(&Error{Op: op, Err: ErrArgument, Msg: "the value was computed by " + v.n.name() +
			" outside the arena; Use takes a leaf (a Var or a Const)"})
	}
	r := a.take()
	r.v.t = *v.t.View()
	if v.isVar() {
		// Like a stripped copy (strip): the Var's state, and the Var itself
		// as the leaf that edges to this value name.
		r.v.requires, r.v.gs, r.v.base = true, v.gs, v.leaf()
	}
	r.v.tan, r.v.lvl, r.v.anomaly = v.tan, v.lvl, v.anomaly
	r.v.setBelow(v.below())
	return &r.v
}

// target is Target's new leaf for an arena value x: standIn(x, true) in x's
// arena, so that what the transform computes from it (the forward pass,
// the sweeps, the gradients it returns) is recorded in the arena like
// everything else computed from x, instead of in fresh heap memory.
func (a *Arena) target(x *Value) *Value {
	r := a.take()
	r.v.standFor(x, true)
	return &r.v
}

// useLeaf is Use for a leaf outside any arena (a Var or a Const), and v
// itself otherwise: an arena value (of a, or stale or of another arena,
// which the op using it reports) or one computed outside any arena.
func (a *Arena) useLeaf(v *Value) *Value {
	if v.slot != nil || v.n != nil {
		return v
	}
	return a.Use(v)
}
