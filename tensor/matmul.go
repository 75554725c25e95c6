package tensor

import (
	"fmt"

	"github.com/adjointgo/adjoint/internal/gemm"
)

// MatMulShape returns the output shape of op(a)·op(b), where op transposes
// the last two axes when the flag is set. Both operands need at least two
// dimensions; leading (batch) dimensions broadcast.
func MatMulShape(a, b []int, transA, transB bool) []int {
	return append([]int(nil), matMulShape(nil, a, b, transA, transB)...)
}

// matMulShape is MatMulShape written into buf when the rank fits.
func matMulShape(buf *stridesBuf, a, b []int, transA, transB bool) []int {
	if len(a) < 2 || len(b) < 2 {
		panic(&ShapeError{Op: "matmul", Shapes: [][]int{a, b}, Msg: "operands need at least 2 dimensions (reshape a vector to [1 n] or [n 1])"})
	}
	m, ka := a[len(a)-2], a[len(a)-1]
	if transA {
		m, ka = ka, m
	}
	kb, n := b[len(b)-2], b[len(b)-1]
	if transB {
		kb, n = n, kb
	}
	if ka != kb {
		msg := fmt.Sprintf("inner dimensions differ (%d vs %d)", ka, kb)
		if transA || transB {
			msg += fmt.Sprintf(" with transA=%v transB=%v", transA, transB)
		}
		panic(&ShapeError{Op: "matmul", Shapes: [][]int{a, b}, Msg: msg})
	}
	var out []int
	if r := max(len(a), len(b)); buf != nil && r <= len(buf) {
		out = buf[:r]
	} else {
		out = make([]int, r)
	}
	broadcastInto(out[:len(out)-2], "matmul", a[:len(a)-2], b[:len(b)-2])
	out[len(out)-2], out[len(out)-1] = m, n
	return out
}

// MatMul sets t = op(a)·op(b) and returns t, where op(x) is x, or x with its
// last two axes swapped when the corresponding flag is set (no transposed copy
// is made). Leading batch dimensions broadcast. t must not be a or b or share
// their storage (it panics with a *ShapeError wrapping ErrAlias).
func (t *Tensor) MatMul(a, b *Tensor, transA, transB bool) *Tensor {
	d := sameDType("matmul", a, b)
	var shp stridesBuf
	shape := matMulShape(&shp, a.shape, b.shape, transA, transB)
	t.noAlias("matmul", "operand a", a)
	t.noAlias("matmul", "operand b", b)
	t.resizeCopy(d, shape)
	out := t.shape
	r := len(out)
	m, n := out[r-2], out[r-1]
	ar, ac := a.shape[len(a.shape)-2], a.shape[len(a.shape)-1]
	br, bc := b.shape[len(b.shape)-2], b.shape[len(b.shape)-1]
	k := ac
	if transA {
		k = ar
	}
	batch := out[:r-2]
	nb := Size(batch)
	if nb == 0 || m == 0 || n == 0 {
		return t
	}
	// Offsets of each batch's matrix in a and b (batch axes broadcast).
	sa := bstrides(a.shape[:len(a.shape)-2], batch)
	sb := bstrides(b.shape[:len(b.shape)-2], batch)
	idx := make([]int, len(batch))
	oa, ob := 0, 0
	for bi := 0; bi < nb; bi++ {
		if d == Float32 {
			c := t.f32[bi*m*n : (bi+1)*m*n]
			if k == 0 {
				fillT(c, 0)
			} else {
				gemm.Sgemm(transA, transB, m, n, k, 1, a.f32[oa*ar*ac:], ac, b.f32[ob*br*bc:], bc, 0, c, n)
			}
		} else {
			c := t.f64[bi*m*n : (bi+1)*m*n]
			if k == 0 {
				fillT(c, 0)
			} else {
				gemm.Dgemm(transA, transB, m, n, k, 1, a.f64[oa*ar*ac:], ac, b.f64[ob*br*bc:], bc, 0, c, n)
			}
		}
		oa, ob = advance(idx, batch, sa, sb, oa, ob)
	}
	return t
}
