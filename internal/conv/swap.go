package conv

import (
	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/workers"
)

// Swap and swapRows are the kernels of package ad's conv_swap and
// conv_bias_swap rows: Conv2d's GEMM leaves its output as [O N L] (the
// batch inside the columns), and the layer wants [N O L].

// Swap writes src [p a b l] into dst [p b a l], adding bias[k] to
// the rows of k < a unless bias is nil, split by output rows (p·b of them,
// each a·l elements) when large. It allocates nothing.
func Swap[T float32 | float64](dst, src, bias []T, p, a, b, l int) {
	rows := p * b
	parts := parallel.Parts(rows, len(src))
	if parts <= 1 {
		swapRows(dst, src, bias, a, b, l, 0, rows)
		return
	}
	ts := workers.Either[swapTask[T]](&swapTasks32, &swapTasks64)
	t := ts.Get()
	*t = swapTask[T]{dst: dst, src: src, bias: bias, a: a, b: b, l: l, rows: rows, parts: parts}
	workers.Run(parts, t)
	ts.Put(t)
}

// swapTask is a split Swap; part p writes its share of the output rows.
type swapTask[T float32 | float64] struct {
	dst, src, bias []T
	a, b, l        int
	rows, parts    int
}

func (t *swapTask[T]) Run(p int) {
	swapRows(t.dst, t.src, t.bias, t.a, t.b, t.l, t.rows*p/t.parts, t.rows*(p+1)/t.parts)
}

// The free lists of Swap's tasks, one per element type (workers.Either).
var (
	swapTasks32 workers.Tasks[swapTask[float32]]
	swapTasks64 workers.Tasks[swapTask[float64]]
)

// swapRows writes the output rows [lo, hi) of Swap: row q = (i, j) of
// dst [p b a l] gathers src[i, k, j, :] for k < a.
func swapRows[T float32 | float64](dst, src, bias []T, a, b, l, lo, hi int) {
	for q := lo; q < hi; q++ {
		i, j := q/b, q%b
		out := dst[q*a*l:][:a*l]
		base := i*a*b*l + j*l
		if bias != nil && a > 0 && l > 0 {
			_ = src[base+(a-1)*b*l+l-1] // the last row lies inside src
			if o, ok := any(out).([]float32); ok && swapBiasRowF32(o, any(src[base:]).([]float32), any(bias[:a]).([]float32), a, l, b*l) {
				continue
			}
		}
		for k := range a {
			o, in := out[k*l:][:l], src[base+k*b*l:][:l]
			if bias == nil {
				copy(o, in)
				continue
			}
			c := bias[k]
			for e, v := range in {
				o[e] = v + c
			}
		}
	}
}
