package tensor

import "testing"

// Rebase keeps one version counter across views made before and after it,
// and a view made after it refers to the new header, not to the tensor.
func TestRebase(t *testing.T) {
	var owner Tensor
	owner.resize(Float64, []int{2, 2})
	owner.Set(1, 0, 0)
	before := owner.View()
	owner.Rebase()
	after := owner.View()
	if !owner.IsView() || after.base == &owner || after.base != owner.base {
		t.Fatalf("after Rebase: owner.base %p, view's base %p", owner.base, after.base)
	}
	v := owner.Version()
	for i, w := range []*Tensor{before, after, &owner} {
		w.Set(float64(i), 1, 1)
		v++
		for j, r := range []*Tensor{before, after, &owner} {
			if r.Version() != v {
				t.Errorf("write %d: tensor %d has version %d, want %d", i, j, r.Version(), v)
			}
		}
	}
	owner.Rebase() // a view already: nothing changes
	if after.base != owner.base {
		t.Error("a second Rebase moved the counter again")
	}
	// growing into new storage makes the owner a root again, its version
	// still increasing
	owner.resize(Float64, []int{8, 8})
	if owner.IsView() || owner.Version() <= v {
		t.Errorf("after growing: view %v, version %d (was %d)", owner.IsView(), owner.Version(), v)
	}
}
