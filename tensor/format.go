package tensor

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
)

// PrintOptions controls how tensors are printed, as NumPy's
// set_printoptions does. A zero field means its default.
type PrintOptions struct {
	// Threshold is the number of elements above which a tensor is printed
	// elided: only EdgeItems elements (rows, blocks) at each end of every
	// axis longer than 2·EdgeItems, with "..." between. Default 1000; a
	// negative Threshold never elides.
	Threshold int
	// EdgeItems is the number of elements printed at each end of an elided
	// axis. Default 3.
	EdgeItems int
	// Precision is the number of significant digits of an element printed
	// with %v or %s (strconv's 'g' format). Default 8; a verb's own
	// precision (%.3f, %.4g) overrides it. A negative Precision prints the
	// shortest representation that reads back exactly.
	Precision int
}

// Defaults of PrintOptions' zero fields.
const (
	defaultThreshold = 1000
	defaultEdgeItems = 3
	defaultPrecision = 8
)

var printOptions atomic.Pointer[PrintOptions]

// SetPrintOptions sets the options every later print of a tensor uses (the
// package-wide setting, like NumPy's) and returns the previous ones, so
// that a caller can restore them:
//
//	defer tensor.SetPrintOptions(tensor.SetPrintOptions(tensor.PrintOptions{Threshold: 10}))
//
// It is safe to call concurrently with printing. To print one tensor with
// other options, without changing the setting, use PrintOptions.Sprint.
func SetPrintOptions(o PrintOptions) PrintOptions {
	old := printOptions.Swap(&o)
	if old == nil {
		return PrintOptions{}
	}
	return *old
}

// CurrentPrintOptions returns the options set by SetPrintOptions (the zero
// PrintOptions, meaning every default, when it has not been called).
func CurrentPrintOptions() PrintOptions {
	if o := printOptions.Load(); o != nil {
		return *o
	}
	return PrintOptions{}
}

func (o PrintOptions) withDefaults() PrintOptions {
	if o.Threshold == 0 {
		o.Threshold = defaultThreshold
	}
	if o.EdgeItems <= 0 {
		o.EdgeItems = defaultEdgeItems
	}
	if o.Precision == 0 {
		o.Precision = defaultPrecision
	}
	return o
}

// Sprint formats t as %v does, with the options o instead of the
// package-wide ones.
func (o PrintOptions) Sprint(t *Tensor) string {
	if t == nil {
		return "<nil>"
	}
	o = o.withDefaults()
	var b strings.Builder
	o.write(&b, t, 'g', o.Precision, true)
	return b.String()
}

// String formats the tensor as %v does (see Tensor.Format): its dtype and
// shape, then its elements in nested, aligned rows.
func (t *Tensor) String() string {
	if t == nil {
		return "<nil>"
	}
	o := CurrentPrintOptions().withDefaults()
	var b strings.Builder
	o.write(&b, t, 'g', o.Precision, true)
	return b.String()
}

// Format implements fmt.Formatter, printing the elements as NumPy does: in
// nested brackets, one row of the last axis per line, right-aligned to a
// common width, with a blank line between the blocks of a tensor of three
// or more dimensions. Tensors with more elements than the Threshold of the
// print options (see SetPrintOptions) are elided: the first and last
// EdgeItems of each long axis, "..." between.
//
//   - %v and %s print a header, the dtype and shape (float64[2 3]), then
//     the elements with the options' Precision significant digits.
//   - %f, %e, %g (and %F, %E, %G) print the elements alone, each formatted
//     as fmt formats a float64 with that verb and precision: %.3f gives
//     three decimals.
//   - %#v prints a Go expression that rebuilds the tensor, every element
//     (none elided) in the shortest form that reads back exactly:
//     tensor.FromFloat64([]float64{1, 2}, 2).
//
// Other verbs print %!verb(tensor.Tensor=…), as fmt does for a bad verb.
func (t *Tensor) Format(f fmt.State, verb rune) {
	if t == nil {
		fmt.Fprint(f, "<nil>")
		return
	}
	o := CurrentPrintOptions().withDefaults()
	var b strings.Builder
	switch verb {
	case 'v':
		if f.Flag('#') {
			t.goLiteral(&b)
			break
		}
		fallthrough
	case 's':
		prec, ok := f.Precision()
		if !ok {
			prec = o.Precision
		}
		o.write(&b, t, 'g', prec, true)
	case 'f', 'F', 'e', 'E', 'g', 'G':
		prec, ok := f.Precision()
		if !ok {
			prec = 6
			if verb == 'g' || verb == 'G' {
				prec = -1
			}
		}
		ch := byte(verb)
		if ch == 'F' {
			ch = 'f'
		}
		o.write(&b, t, ch, prec, false)
	default:
		fmt.Fprintf(&b, "%%!%c(tensor.Tensor=", verb)
		o.write(&b, t, 'g', o.Precision, true)
		b.WriteByte(')')
	}
	fmt.Fprint(f, b.String())
}

// write prints t: the header when header is set, then the nested body with
// elements formatted by strconv.FormatFloat(v, format, prec, bits).
func (o PrintOptions) write(b *strings.Builder, t *Tensor, format byte, prec int, header bool) {
	indent := 0
	if header {
		h := t.dtype.String() + shapeString(t.shape)
		b.WriteString(h)
		b.WriteByte(' ')
		indent = len([]rune(h)) + 1
	}
	bits := 64
	if t.dtype == Float32 {
		bits = 32
	}
	elide := o.Threshold >= 0 && t.Len() > o.Threshold
	p := printer{t: t, b: b, format: format, prec: prec, bits: bits, edge: o.EdgeItems, elide: elide}
	// First pass: the width of the widest element printed.
	p.measure = true
	p.walk(0, 0, indent)
	p.measure = false
	p.walk(0, 0, indent)
}

// printer walks a tensor's axes, printing (or, in the measuring pass,
// sizing) the elements that are shown.
type printer struct {
	t       *Tensor
	b       *strings.Builder
	format  byte
	prec    int
	bits    int
	edge    int
	elide   bool
	measure bool
	width   int
}

// shown returns the indices of an axis of size n that are printed, with -1
// where "..." stands for the elided middle.
func (p *printer) shown(n int) []int {
	if !p.elide || n <= 2*p.edge {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, 0, 2*p.edge+1)
	for i := range p.edge {
		idx = append(idx, i)
	}
	idx = append(idx, -1)
	for i := n - p.edge; i < n; i++ {
		idx = append(idx, i)
	}
	return idx
}

// elem formats one element (NaN, +Inf and -Inf as strconv writes them).
func (p *printer) elem(v float64) string {
	return strconv.FormatFloat(v, p.format, p.prec, p.bits)
}

// walk prints the sub-tensor of axis ax starting at flat offset off; col
// is the column its opening bracket is printed at.
func (p *printer) walk(ax, off, col int) {
	t := p.t
	if len(t.shape) == 0 {
		p.leaf(t.AtFlat(0))
		return
	}
	n := t.shape[ax]
	stride := 1
	for _, d := range t.shape[ax+1:] {
		stride *= d
	}
	p.put("[")
	last := ax == len(t.shape)-1
	for k, i := range p.shown(n) {
		if k > 0 {
			if last {
				p.put(" ")
			} else {
				// A newline, a blank line per axis beyond the rows, then
				// the indentation of the next opening bracket.
				p.put(strings.Repeat("\n", len(t.shape)-ax-1))
				p.put(strings.Repeat(" ", col+1))
			}
		}
		switch {
		case i < 0:
			p.put("...")
		case last:
			p.leaf(t.AtFlat(off + i))
		default:
			p.walk(ax+1, off+i*stride, col+1)
		}
	}
	p.put("]")
}

// leaf prints one element, right-aligned to the common width.
func (p *printer) leaf(v float64) {
	s := p.elem(v)
	if p.measure {
		p.width = max(p.width, len(s))
		return
	}
	p.b.WriteString(p.pad(s))
}

func (p *printer) pad(s string) string {
	if n := p.width - len(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return s
}

func (p *printer) put(s string) {
	if !p.measure {
		p.b.WriteString(s)
	}
}

// goLiteral writes a Go expression that rebuilds t: FromFloat32 or
// FromFloat64 of every element and the shape.
func (t *Tensor) goLiteral(b *strings.Builder) {
	typ, fn, bits := "float64", "FromFloat64", 64
	if t.dtype == Float32 {
		typ, fn, bits = "float32", "FromFloat32", 32
	}
	fmt.Fprintf(b, "tensor.%s([]%s{", fn, typ)
	for i := range t.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		v := t.AtFlat(i)
		switch {
		case math.IsNaN(v):
			fmt.Fprintf(b, "%s(math.NaN())", typ)
		case math.IsInf(v, 0):
			fmt.Fprintf(b, "%s(math.Inf(%d))", typ, int(math.Copysign(1, v)))
		default:
			b.WriteString(strconv.FormatFloat(v, 'g', -1, bits))
		}
	}
	b.WriteString("}")
	for _, d := range t.shape {
		fmt.Fprintf(b, ", %d", d)
	}
	b.WriteString(")")
}
