package ad

import (
	"testing"
	"unsafe"
)

// TestRecordedSizeClass keeps a small recorded op's one allocation (its
// value, node and inline storage: see heapOutput) within 352 bytes, a Go
// allocator size class: the per-op cost outside an Arena grows with it.
// (Value's batching field, bat, took it to 384 for a while; the node's
// aux interface, which held ReLU's mask or attention's third operand,
// became a mask pointer, the operand moving into attention's attributes.)
func TestRecordedSizeClass(t *testing.T) {
	const budget = 352
	for name, size := range map[string]uintptr{
		"float32": unsafe.Sizeof(recorded32{}),
		"float64": unsafe.Sizeof(recorded64{}),
	} {
		if size > budget {
			t.Errorf("%s: a recorded value with its node takes %d bytes, over %d (Value %d, node %d bytes)",
				name, size, budget, unsafe.Sizeof(Value{}), unsafe.Sizeof(node{}))
		}
	}
}

// TestEdgeShape checks that an edge gives back the operand's shape as
// recorded, for a scalar (no dimensions) and a tensor, and that appending
// to it does not write into the array the shape came from.
func TestEdgeShape(t *testing.T) {
	for _, shape := range [][]int{nil, {}, {3}, {2, 1, 4}} {
		got := (&edge{dims: dimsOf(shape)}).shape()
		if (got == nil) != (shape == nil) || len(got) != len(shape) {
			t.Fatalf("shape %#v: edge gives %#v", shape, got)
		}
		for i := range shape {
			if got[i] != shape[i] {
				t.Fatalf("shape %v: edge gives %v", shape, got)
			}
		}
	}
	arr := []int{2, 3, 0, 0}
	got := (&edge{dims: dimsOf(arr[:2])}).shape()
	_ = append(got, 7)
	if arr[2] != 0 {
		t.Fatal("an append to an edge's shape wrote into the array the shape came from")
	}
}
