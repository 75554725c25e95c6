package ad

import (
	"fmt"
	"slices"
	"strings"
)

// Einsum evaluates an Einstein summation over one or two operands, such as
// "bij,bjk->bik" (batched matrix product), "bhqd,bhkd->bhqk" (attention
// scores), "ij->ji" (transpose), "ij->" (sum) or "ii->i" (diagonal, one
// operand). The output labels must be given after "->". Labels are single
// letters; a size-1 axis broadcasts against the size of its label in the
// other operand. With two operands, a label in both and in the output is a
// batch axis, one in both but not in the output is
// contracted, and one in only one operand and not in the output is summed
// out first; the product is then one batched MatMul between permutes and
// reshapes, so its derivatives are the rows'. A repeated label within an
// operand is supported only for a single operand ("ii->i"). A spec outside
// these rules is an *Error wrapping ErrArgument; operand shapes that do
// not fit it, ErrShape.
func Einsum(spec string, xs ...*Value) *Value {
	defer rethrow()
	ins, out, err := parseEinsum(spec, len(xs))
	if err != nil {
		panic(err)
	}
	size := map[byte]int{}
	for i, x := range xs {
		s := x.Shape()
		if len(s) != len(ins[i]) {
			panic(shapeErr("einsum", [][]int{s}, "operand %d has rank %d, spec %q names %d axes", i, len(s), spec, len(ins[i])))
		}
		for k := range len(ins[i]) {
			l := ins[i][k]
			if d, ok := size[l]; ok && d != s[k] && d != 1 && s[k] != 1 {
				panic(shapeErr("einsum", shapesOf(xs), "label %c has sizes %d and %d", l, d, s[k]))
			}
			if d, ok := size[l]; !ok || d == 1 {
				size[l] = s[k]
			}
		}
	}
	// A size-1 axis broadcasts against its label's size in the other
	// operand, as in NumPy.
	cloned := false
	for i, x := range xs {
		s := x.Shape()
		same := true
		for k := range s {
			same = same && s[k] == size[ins[i][k]]
		}
		if same {
			continue
		}
		t := make([]int, len(s))
		for k := range t {
			t[k] = size[ins[i][k]]
		}
		if !cloned { // the caller's slice is not written
			xs, cloned = slices.Clone(xs), true
		}
		xs[i] = BroadcastTo(x, t...)
	}
	if len(xs) == 1 {
		return einsum1(xs[0], ins[0], out, size)
	}
	a, b := xs[0], xs[1]
	la, lb := ins[0], ins[1]
	// Sum out the labels of one operand that appear nowhere else.
	a, la = sumOut(a, la, lb+out)
	b, lb = sumOut(b, lb, la+out)
	var batch, afree, bfree, contr []byte
	for i := range len(la) {
		l := la[i]
		inB, inO := strings.IndexByte(lb, l) >= 0, strings.IndexByte(out, l) >= 0
		switch {
		case inB && inO:
			batch = append(batch, l)
		case inB:
			contr = append(contr, l)
		default:
			afree = append(afree, l)
		}
	}
	for i := range len(lb) {
		if strings.IndexByte(la, lb[i]) < 0 {
			bfree = append(bfree, lb[i])
		}
	}
	prod := func(ls []byte) int {
		n := 1
		for _, l := range ls {
			n *= size[l]
		}
		return n
	}
	B, M, K, N := prod(batch), prod(afree), prod(contr), prod(bfree)
	am := Reshape(Permute(a, order(la, batch, afree, contr)...), B, M, K)
	bm := Reshape(Permute(b, order(lb, batch, contr, bfree)...), B, K, N)
	res := MatMul(am, bm)
	labels := slices.Concat(batch, afree, bfree)
	dims := make([]int, len(labels))
	for i, l := range labels {
		dims[i] = size[l]
	}
	res = Reshape(res, dims...)
	return Permute(res, order(string(labels), []byte(out))...)
}

// einsum1 is Einsum for one operand: a diagonal for a repeated label, then
// the sums and the permutation.
func einsum1(x *Value, l, out string, size map[byte]int) *Value {
	for i := 0; i < len(l); i++ {
		j := strings.IndexByte(l[i+1:], l[i])
		if j < 0 {
			continue
		}
		j += i + 1
		// The diagonal of axes i and j: move them last, flatten them, and
		// pick the positions k·n + k.
		perm := make([]int, 0, len(l))
		rest := make([]byte, 0, len(l)-1)
		for k := range len(l) {
			if k != i && k != j {
				perm = append(perm, k)
				rest = append(rest, l[k])
			}
		}
		perm = append(perm, i, j)
		s := x.Shape()
		n := s[i]
		lead := make([]int, 0, len(l))
		for _, k := range perm[:len(perm)-2] {
			lead = append(lead, s[k])
		}
		x = Permute(x, perm...)
		x = Reshape(x, append(slices.Clone(lead), n*n)...)
		idx := make([]int, n)
		for k := range idx {
			idx[k] = k*n + k
		}
		x = IndexSelect(x, len(lead), idx)
		l = string(append(rest, l[i]))
		i = -1 // rescan
	}
	x, l = sumOut(x, l, out)
	return Permute(x, order(l, []byte(out))...)
}

// sumOut sums x over the axes whose labels are not in keep.
func sumOut(x *Value, l, keep string) (*Value, string) {
	var axes []int
	var rest []byte
	for i := range len(l) {
		if strings.IndexByte(keep, l[i]) < 0 {
			axes = append(axes, i)
		} else {
			rest = append(rest, l[i])
		}
	}
	if len(axes) == 0 {
		return x, l
	}
	return Sum(x, Axes(axes...)), string(rest)
}

// order returns the permutation that brings the axes labelled l into the
// order of the groups.
func order(l string, groups ...[]byte) []int {
	var p []int
	for _, g := range groups {
		for _, c := range g {
			p = append(p, strings.IndexByte(l, c))
		}
	}
	return p
}

func shapesOf(xs []*Value) [][]int {
	s := make([][]int, len(xs))
	for i, x := range xs {
		s[i] = x.Shape()
	}
	return s
}

// parseEinsum splits spec into the operands' labels and the output's.
func parseEinsum(spec string, n int) ([]string, string, error) {
	bad := func(format string, args ...any) error {
		return &Error{Op: "einsum", Err: ErrArgument, Msg: fmt.Sprintf("spec %q: ", spec) + fmt.Sprintf(format, args...)}
	}
	if n < 1 || n > 2 {
		return nil, "", bad("%d operands (one or two are supported)", n)
	}
	s := strings.ReplaceAll(spec, " ", "")
	lhs, out, ok := strings.Cut(s, "->")
	if !ok {
		return nil, "", bad("no \"->\" and output labels")
	}
	ins := strings.Split(lhs, ",")
	if len(ins) != n {
		return nil, "", bad("names %d operands, %d given", len(ins), n)
	}
	for _, part := range append(slices.Clone(ins), out) {
		for i := range len(part) {
			c := part[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return nil, "", bad("label %q is not a letter (ellipsis is not supported)", c)
			}
		}
	}
	for i := range len(out) {
		if strings.IndexByte(out[i+1:], out[i]) >= 0 {
			return nil, "", bad("output label %c repeated", out[i])
		}
		if !strings.ContainsRune(lhs, rune(out[i])) {
			return nil, "", bad("output label %c is in no operand", out[i])
		}
	}
	if n == 2 {
		for k, in := range ins {
			for i := range len(in) {
				if strings.IndexByte(in[i+1:], in[i]) >= 0 {
					return nil, "", bad("label %c repeated in operand %d (diagonals need one operand)", in[i], k)
				}
			}
		}
	}
	return ins, out, nil
}
