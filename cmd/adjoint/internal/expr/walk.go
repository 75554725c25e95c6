package expr

// Builder says how to turn each kind of node of an expression into a value
// of type T (a tape's variable, a graph's node, a printed form).
type Builder[T any] struct {
	// Num makes a number: a literal, or the constant pi or e.
	Num func(x float64) T
	// Var makes variable k, named Vars()[k].
	Var func(k int) T
	// Op applies an operation to its arguments, built already: "neg" (unary
	// minus, one argument), "add", "sub", "mul", "div" and "pow" (the
	// operators + - * / and ^ or **, two arguments), or a function called
	// by its name as written (sin, ln, pow, max, ...; Functions lists them),
	// with its arguments in order. An error ends the build.
	Op func(name string, args []T) (T, error)
}

// Build walks e from its leaves up, calling b's functions once per node of
// the parsed expression, operands before the operation that uses them, left
// to right; it returns what b made of the root, or the first error of Op.
// The walk uses an explicit stack, so the depth of the expression is not
// limited by the goroutine stack.
func Build[T any](e *Expr, b Builder[T]) (T, error) {
	type frame struct {
		n    node
		done bool // its operands are on the value stack
	}
	var vals []T
	stack := []frame{{n: e.root}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		args := children(f.n)
		if !f.done && len(args) > 0 {
			stack = append(stack, frame{f.n, true})
			for i := len(args) - 1; i >= 0; i-- {
				stack = append(stack, frame{n: args[i]})
			}
			continue
		}
		switch n := f.n.(type) {
		case num:
			vals = append(vals, b.Num(float64(n)))
			continue
		case variable:
			vals = append(vals, b.Var(int(n)))
			continue
		}
		in := vals[len(vals)-len(args):]
		v, err := b.Op(opName(f.n), append([]T(nil), in...))
		if err != nil {
			var zero T
			return zero, err
		}
		vals = append(vals[:len(vals)-len(args)], v)
	}
	return vals[0], nil
}

// children returns the operands of n, left to right.
func children(n node) []node {
	switch n := n.(type) {
	case neg:
		return []node{n.a}
	case binary:
		return []node{n.a, n.b}
	case call1:
		return []node{n.a}
	case callN:
		return n.args
	}
	return nil
}

// opName returns the name Builder.Op receives for an operation node.
func opName(n node) string {
	switch n := n.(type) {
	case neg:
		return "neg"
	case binary:
		return n.name
	case call1:
		return n.name
	case callN:
		return n.name
	}
	panic("expr: internal error: no operation")
}
