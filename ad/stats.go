package ad

import (
	"github.com/adjointgo/adjoint/tensor"
)

// GraphStats describes the recorded graph behind a value: what a backward
// pass from it would visit and the memory it keeps alive for that pass.
type GraphStats struct {
	Nodes int // recorded op applications reachable from the value
	// SavedBytes counts the distinct storages that the nodes saved for their
	// VJPs (inputs, outputs, ReLU bit masks, cross-entropy's softmax), except
	// those of Vars: the activation memory a backward pass needs, as
	// PyTorch's saved-tensor accounting counts it (parameters exist anyway).
	SavedBytes int64
	// ParamBytes counts the distinct storages of Vars that nodes saved.
	ParamBytes int64
}

// Stats walks the graph behind v (without modifying it) and returns its
// GraphStats. Nodes already released by a backward pass save nothing.
func Stats(v *Value) GraphStats {
	var st GraphStats
	if v.n == nil {
		return st
	}
	seenNode := map[*node]bool{v.n: true}
	seenData := map[any]bool{}
	count := func(t *tensor.Tensor, param bool) {
		key := storageKey(t)
		if key == nil || seenData[key] {
			return
		}
		seenData[key] = true
		b := int64(t.Len() * t.DType().Size())
		if param {
			st.ParamBytes += b
		} else {
			st.SavedBytes += b
		}
	}
	stack := []*node{v.n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st.Nodes++
		for k := range n.sv {
			if s := n.sv[k].v; s != nil {
				count(&s.t, s.isVar())
			}
		}
		if a, ok := n.aux.(*bitMask); ok {
			st.SavedBytes += int64(len(a.bits) * 8)
		}
		if a, ok := n.at.(*ceAttrs); ok && a.probs != nil && !n.freed {
			count(a.probs, false)
		}
		for j := range n.ins() {
			if p := n.ins()[j].n; p != nil && !seenNode[p] {
				seenNode[p] = true
				stack = append(stack, p)
			}
		}
	}
	return st
}

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
