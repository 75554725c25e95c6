package ad

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/adjointgo/adjoint/tensor"
)

// Inputs returns the operands of the op that produced v, in order (nil for
// a leaf): what the backward pass goes through, for looking at a graph.
//
// A node records edges to its operands, not the operands themselves, so
// each is found as well as the graph allows:
//
//   - a Var is the Var itself;
//   - an operand whose data the graph keeps — saved by v's op for its VJP
//     (mul's other operand, a Func's operands) or by the op that produced
//     it (exp's and tanh's outputs) — is the original value;
//   - otherwise the result is a handle, a new Value on each call, allocated
//     with the operand's shape: its Op, Inputs and SavedBytes are the
//     producer's, Shape is right, DType is v's (the source dtype for an
//     astype), but its data was not kept: Data (and Item, Tensor)
//     give NaN in every element. A handle is for inspection only: RequiresGrad reports false,
//     an op applied to it treats it as a constant, and Backward from it
//     returns ErrNoGrad. A constant operand that nothing saved is such a
//     handle with no op.
//
// Since handles are new on each call, a walk over Inputs cannot tell that
// two handles stand for one op (a value used twice, whose graph it then
// walks twice); WriteDOT draws the graph with its sharing.
//
// Inputs must not run while a backward pass sweeps the graph. A backward
// pass that releases the graph (without Options.RetainGraph) drops each
// swept op's links to its operands with its saved values, so that a value
// kept after it (a loss kept for a log) does not keep the step's
// activations alive: Inputs of such an op is empty. Walk a graph before
// its backward pass, or keep it with RetainGraph. The values of an Arena's
// step, handles included, are stale after its next Reset.
func (v *Value) Inputs() []*Value {
	v.check("inputs")
	if v.n == nil {
		return nil
	}
	es := v.n.operands()
	out := make([]*Value, len(es))
	for i := range es {
		if o := operand(v.n, i); o != nil {
			pin(o) // the caller holds it now: never recycled
			out[i] = o
			continue
		}
		h := &Value{n: es[i].n, slot: v.slot}
		h.t = *tensor.Full(operandDType(v.n, v.t.DType()), math.NaN(), es[i].shape()...)
		out[i] = h
	}
	return out
}

// SavedBytes returns the bytes that the op which produced v keeps for its
// VJP: the storages of its saved operands and output (each once), its bit
// mask, cross-entropy's softmax, except those of Vars, as GraphStats counts
// them. A storage saved by several nodes counts for each, so SavedBytes
// summed over a graph may exceed Stats(v).SavedBytes. It is 0 for a leaf
// and after a backward pass released the node. Inside Vmap, where v stands
// for a batch, it is the op's on the whole batch.
func (v *Value) SavedBytes() int64 {
	v.check("saved bytes")
	v = physical(v)
	if v.n == nil {
		return 0
	}
	return v.n.savedBytes()
}

// operand returns operand i of n when the graph holds it (a Var, or a value
// saved by n or by its producer), nil otherwise.
func operand(n *node, i int) *Value {
	e := &n.ins()[i]
	if e.leaf != nil {
		return e.leaf
	}
	if s := savedOperand(n, i); s != nil {
		return s
	}
	if e.n != nil {
		if s := e.n.sv[2].v; s != nil && s.n == e.n {
			return s
		}
	}
	return nil
}

// operandKeeper is implemented by the attributes of a variadic row that
// keeps its operands themselves (a Func).
type operandKeeper interface {
	// keptOperand returns operand i, or nil.
	keptOperand(i int) *Value
}

func (a *funcAttrs) keptOperand(i int) *Value {
	if i < len(a.ins) {
		return a.ins[i].v
	}
	return nil
}

// savedOperand returns operand i of n if n saved it.
func savedOperand(n *node, i int) *Value {
	if a, ok := n.at.(operandKeeper); ok {
		if n.freed {
			return nil
		}
		return a.keptOperand(i)
	}
	if i < 2 && n.nin != manyEdges {
		return n.sv[i].v
	}
	return nil
}

// operandDType returns the dtype of n's operands given that of its output.
func operandDType(n *node, out tensor.DType) tensor.DType {
	if a, ok := n.at.(*astypeAttrs); ok {
		return a.from
	}
	return out
}

// WriteDOT writes the graph behind v in the DOT language of Graphviz
// (render it with "dot -Tsvg"). Each recorded op is a box labelled with its
// name, its output's shape and dtype, and the bytes it saved for its VJP
// (SavedBytes; "released" once a backward pass freed it, which also drops
// its operands: see Inputs). Leaves are
// ellipses: Vars, which require a gradient, filled; constants not. Edges
// run from operand to consumer and, for ops of two operands or more, are
// labelled with the operand's position. The output has a double border.
//
// The output is deterministic: nodes are numbered n0, n1, … in the order a
// breadth-first walk from v meets them (operands in order), so two
// structurally equal graphs write the same text. The walk uses no
// recursion: a chain of 10⁵ ops (tested) is fine. A constant that no op saved has
// no identity in the graph and is drawn once per use. WriteDOT must not run
// while a backward pass sweeps the graph.
func WriteDOT(w io.Writer, v *Value) error { return WriteDOTOpts(w, v, DOTOptions{}) }

// DOTOptions adjusts the graph WriteDOTOpts writes.
type DOTOptions struct {
	// Names labels values of the graph: a Var, or a constant an op saved,
	// is labelled with its name instead of "var" or "const"; the output of
	// an op gets its name before the op's ("h = tanh"). Values not in the
	// graph are ignored.
	Names map[*Value]string
}

// WriteDOTOpts is WriteDOT with options.
func WriteDOTOpts(w io.Writer, v *Value, o DOTOptions) error {
	if v.stale() {
		return v.staleErr("write dot")
	}
	d := dotWriter{w: bufio.NewWriter(w), nodes: map[*node]int{}, leaves: map[*Value]int{}, names: o.Names}
	for x, name := range o.Names {
		if x.n != nil {
			if d.opNames == nil {
				d.opNames = map[*node]string{}
			}
			d.opNames[x.n] = name
		}
	}
	d.header()
	if v.n == nil {
		d.leaf(v, v.t.Shape(), v.t.DType(), true)
		d.line(d.lines[0])
	} else {
		d.walk(v)
	}
	d.line("}")
	return d.w.Flush()
}

// dotWriter writes one graph. Node lines and edge lines are collected
// apart so that all nodes come first.
type dotWriter struct {
	w       *bufio.Writer
	lines   []string          // the node lines, by number
	nodes   map[*node]int     // numbers of recorded ops
	leaves  map[*Value]int    // numbers of Vars and of constants that are known values
	names   map[*Value]string // DOTOptions.Names
	opNames map[*node]string  // the names of ops' outputs
	edges   []string
}

type dotOp struct {
	n     *node
	shape []int
	dtype tensor.DType
}

func (d *dotWriter) header() {
	d.line("digraph adjoint {")
	d.line("\tnode [fontname=\"Helvetica\", fontsize=10];")
	d.line("\tedge [fontname=\"Helvetica\", fontsize=9];")
}

func (d *dotWriter) line(s string) { d.w.WriteString(s + "\n") }

// walk numbers and writes the ops reachable from v breadth first, with an
// explicit queue.
func (d *dotWriter) walk(v *Value) {
	queue := []dotOp{{v.n, v.t.Shape(), v.t.DType()}}
	d.nodes[v.n] = d.take()
	for k := 0; k < len(queue); k++ {
		op := queue[k]
		d.op(op, k == 0)
		es := op.n.operands()
		for i := range es {
			e := &es[i]
			dt := operandDType(op.n, op.dtype)
			var from int
			switch {
			case e.leaf != nil:
				from = d.leaf(e.leaf, e.shape(), e.leaf.t.DType(), false)
			case e.n == nil: // a constant operand
				c := savedOperand(op.n, i)
				if c != nil {
					dt = c.t.DType()
				}
				from = d.leaf(c, e.shape(), dt, false)
			default:
				id, seen := d.nodes[e.n]
				if !seen {
					id = d.take()
					d.nodes[e.n] = id
					if s := operand(op.n, i); s != nil {
						dt = s.t.DType()
					}
					queue = append(queue, dotOp{e.n, e.shape(), dt})
				}
				from = id
			}
			attr := ""
			if len(es) > 1 {
				attr = fmt.Sprintf(" [label=\"%d\"]", i)
			}
			d.edges = append(d.edges, fmt.Sprintf("\tn%d -> n%d%s;", from, d.nodes[op.n], attr))
		}
		queue[k] = dotOp{} // the walk keeps no reference to what it wrote
	}
	for _, l := range d.lines {
		d.line(l)
	}
	for _, e := range d.edges {
		d.line(e)
	}
}

// take returns the next node number.
func (d *dotWriter) take() int {
	d.lines = append(d.lines, "")
	return len(d.lines) - 1
}

// op writes the node line of a recorded op.
func (d *dotWriter) op(op dotOp, output bool) {
	saved := fmt.Sprintf("saved %s", fmtBytes(op.n.savedBytes()))
	if op.n.freed {
		saved = "released"
	}
	attrs := "shape=box"
	if output {
		attrs += ", peripheries=2"
	}
	id := d.nodes[op.n]
	label := op.n.name()
	if name, ok := d.opNames[op.n]; ok {
		label = name + " = " + label
	}
	d.lines[id] = fmt.Sprintf("\tn%d [label=\"%s\\n%s %v\\n%s\", %s];", id, dotEscape(label), op.dtype, op.shape, saved, attrs)
}

// leaf writes the node line of a Var or a constant (v nil: one not known
// as a value) unless it was written already, and returns its number.
func (d *dotWriter) leaf(v *Value, shape []int, dt tensor.DType, output bool) int {
	if v != nil {
		if id, ok := d.leaves[v]; ok {
			return id
		}
	}
	id := d.take()
	if v != nil {
		d.leaves[v] = id
	}
	label, attrs := "const", "shape=ellipse"
	if v != nil && v.isVar() {
		label, attrs = "var", "shape=ellipse, style=filled, fillcolor=\"#9ecae1\""
	}
	if name, ok := d.names[v]; ok && v != nil {
		label = dotEscape(name)
	}
	if output {
		attrs += ", peripheries=2"
	}
	d.lines[id] = fmt.Sprintf("\tn%d [label=\"%s\\n%s %v\", %s];", id, label, dt, shape, attrs)
	return id
}

// fmtBytes formats a byte count: "0 B", "48 B", "1.5 KiB", "25.0 MiB".
func fmtBytes(b int64) string {
	const k = 1024
	switch {
	case b < k:
		return fmt.Sprintf("%d B", b)
	case b < k*k:
		return fmt.Sprintf("%.1f KiB", float64(b)/k)
	case b < k*k*k:
		return fmt.Sprintf("%.1f MiB", float64(b)/(k*k))
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/(k*k*k))
}

// dotEscape makes s safe inside a double-quoted DOT string.
func dotEscape(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return dotEscaper.Replace(s)
}

var dotEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
