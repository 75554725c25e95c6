package ad_test

import (
	"fmt"
	"os"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Walking a recorded graph from its output: each value's op, its operands
// and the bytes its op keeps for the backward pass. An operand that the
// graph did not keep (sum's operand here) is a handle whose op and shape are
// known but whose data is not.
func ExampleValue_Inputs() {
	w := ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4}, 2, 2))
	x := ad.Const(tensor.FromFloat64([]float64{1, -1}, 2, 1))
	y := ad.Sum(ad.Exp(ad.MatMul(w, x)))

	stack := []*ad.Value{y}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch {
		case v.Op() != "":
			fmt.Printf("%s %v, saves %d bytes\n", v.Op(), v.Shape(), v.SavedBytes())
		case v.RequiresGrad():
			fmt.Printf("var %v\n", v.Shape())
		default:
			fmt.Printf("const %v\n", v.Shape())
		}
		in := v.Inputs()
		for i := len(in) - 1; i >= 0; i-- {
			stack = append(stack, in[i])
		}
	}
	// Output:
	// sum [], saves 0 bytes
	// exp [2 1], saves 16 bytes
	// matmul [2 1], saves 16 bytes
	// var [2 2]
	// const [2 1]
}

// The graph of a small expression for Graphviz: pipe the output into
// "dot -Tsvg". The Var is filled, the constant is not.
func ExampleWriteDOT() {
	x := ad.Var(tensor.Scalar(tensor.Float64, 2))
	y := ad.Mul(ad.Sin(x), ad.Scalar(3))
	if err := ad.WriteDOT(os.Stdout, y); err != nil {
		fmt.Println(err)
	}
	// Output:
	// digraph adjoint {
	// 	node [fontname="Helvetica", fontsize=10];
	// 	edge [fontname="Helvetica", fontsize=9];
	// 	n0 [label="mul\nfloat64 []\nsaved 8 B", shape=box, peripheries=2];
	// 	n1 [label="sin\nfloat64 []\nsaved 0 B", shape=box];
	// 	n2 [label="const\nfloat64 []", shape=ellipse];
	// 	n3 [label="var\nfloat64 []", shape=ellipse, style=filled, fillcolor="#9ecae1"];
	// 	n1 -> n0 [label="0"];
	// 	n2 -> n0 [label="1"];
	// 	n3 -> n1;
	// }
}

// Naming the values of a graph: the Vars by name, an intermediate by what
// it stands for.
func ExampleWriteDOTOpts() {
	w := ad.Var(tensor.FromFloat64([]float64{0.5, -1}, 1, 2))
	x := ad.Const(tensor.FromFloat64([]float64{3, 4}, 2, 1))
	z := ad.MatMul(w, x)
	y := ad.Tanh(z)
	names := map[*ad.Value]string{w: "w", x: "x", z: "z"}
	if err := ad.WriteDOTOpts(os.Stdout, y, ad.DOTOptions{Names: names}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// digraph adjoint {
	// 	node [fontname="Helvetica", fontsize=10];
	// 	edge [fontname="Helvetica", fontsize=9];
	// 	n0 [label="tanh\nfloat64 [1 1]\nsaved 8 B", shape=box, peripheries=2];
	// 	n1 [label="z = matmul\nfloat64 [1 1]\nsaved 16 B", shape=box];
	// 	n2 [label="w\nfloat64 [1 2]", shape=ellipse, style=filled, fillcolor="#9ecae1"];
	// 	n3 [label="x\nfloat64 [2 1]", shape=ellipse];
	// 	n1 -> n0;
	// 	n2 -> n1 [label="0"];
	// 	n3 -> n1 [label="1"];
	// }
}
