package ad

import (
	"github.com/adjointgo/adjoint/tensor"
)

// GraphStats describes the recorded graph behind a value: what a backward
// pass from it would visit and the memory it keeps alive for that pass.
type GraphStats struct {
	Nodes int // recorded op applications reachable from the value
	// SavedBytes counts the distinct storages that the nodes saved for their
	// VJPs (inputs, outputs, ReLU bit masks, cross-entropy's softmax, a
	// Func's operands), except those of Vars: the activation memory a
	// backward pass needs, as PyTorch's saved-tensor accounting counts it
	// (parameters exist anyway).
	SavedBytes int64
	// ParamBytes counts the distinct storages of Vars that nodes saved.
	ParamBytes int64
	// SavedByOp splits SavedBytes by the op of the node that saved them
	// (its name, as Value.Op gives it; a Func's own name). A storage saved
	// by several nodes is counted once, for the first of them met walking
	// from the value (depth first, operands in order), so the entries sum to
	// SavedBytes. Ops that save nothing have no entry.
	SavedByOp map[string]int64
}

// Stats walks the graph behind v (without modifying it) and returns its
// GraphStats. Nodes already released by a backward pass save nothing, and
// link to no operands (see Inputs): after a backward pass without
// Options.RetainGraph, Stats of its output counts its own node alone.
// Inside Vmap, where v stands for a batch, the graph is the whole batch's.
func Stats(v *Value) GraphStats {
	st := GraphStats{SavedByOp: map[string]int64{}}
	v = physical(v)
	if v.n == nil {
		return st
	}
	seenData := map[any]bool{}
	walkNodes(v.n, func(n *node) {
		st.Nodes++
		own := n.eachSaved(func(t *tensor.Tensor, param bool) {
			key := storageKey(t)
			if key == nil || seenData[key] {
				return
			}
			seenData[key] = true
			b := tensorBytes(t)
			if param {
				st.ParamBytes += b
			} else {
				st.SavedBytes += b
				st.SavedByOp[n.name()] += b
			}
		})
		if own > 0 {
			st.SavedBytes += own
			st.SavedByOp[n.name()] += own
		}
	})
	return st
}

// walkNodes calls f for every node of the graph behind root (root
// included), once each, depth first, operands in order.
func walkNodes(root *node, f func(n *node)) {
	seen := map[*node]bool{root: true}
	stack := []*node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		f(n)
		for j := range n.operands() {
			if p := n.operands()[j].n; p != nil && !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
}

// savedBytes returns the bytes of the storages n itself keeps for its VJP,
// each counted once, Vars' excluded (see GraphStats.SavedBytes).
func (n *node) savedBytes() int64 {
	var seen []any // a node saves at most a handful of tensors
	var b int64
	other := n.eachSaved(func(t *tensor.Tensor, param bool) {
		key := storageKey(t)
		if param || key == nil {
			return
		}
		for _, k := range seen {
			if k == key {
				return
			}
		}
		seen = append(seen, key)
		b += tensorBytes(t)
	})
	return b + other
}

// eachSaved calls f for every tensor that n keeps for its VJP (saved
// operands and output, cross-entropy's softmax, a Func's operands), with
// whether it is a Var's, and returns the bytes of what it keeps that is not
// a tensor (ReLU's bit mask). A released node keeps nothing.
func (n *node) eachSaved(f func(t *tensor.Tensor, param bool)) (other int64) {
	for k := range n.sv {
		if s := n.sv[k].v; s != nil {
			f(&s.t, s.isVar())
		}
	}
	if n.freed {
		return 0
	}
	if m := n.mask; m != nil {
		other += int64(len(m.bits) * 8)
	}
	if k, ok := n.at.(keeper); ok {
		other += k.eachKept(n, f)
	}
	return other
}

func tensorBytes(t *tensor.Tensor) int64 { return int64(t.Len() * t.DType().Size()) }

// storageKey identifies a tensor's storage (the address of its first
// element), nil for an empty one.
func storageKey(t *tensor.Tensor) any {
	if f := t.Float32s(); cap(f) > 0 {
		return &f[:1][0]
	}
	if f := t.Float64s(); cap(f) > 0 {
		return &f[:1][0]
	}
	return nil
}
