package special_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/internal/special"
)

// The binary convention: the value, the two partials, and the Hessian's upper
// triangle ∂aa, ∂ax, ∂xx.
func ExampleGammaP() {
	v, g, h := special.GammaP(2, 3)
	fmt.Printf("P(2, 3) = %.6f\n", v)
	fmt.Printf("∂a = %.6f, ∂x = %.6f\n", g[0], g[1])
	fmt.Printf("∂aa = %.6f, ∂ax = %.6f, ∂xx = %.6f\n", h[0], h[1], h[2])
	// Output:
	// P(2, 3) = 0.800852
	// ∂a = -0.197425, ∂x = 0.149361
	// ∂aa = -0.079309, ∂ax = 0.100942, ∂xx = -0.099574
}

// Log1mExp keeps its relative accuracy next to 0, where log(1 − eˣ) computed
// directly would lose all digits.
func ExampleLog1mExp() {
	v, d, _ := special.Log1mExp(-1e-12)
	fmt.Printf("%.12f %.6g\n", v, d)
	// Output:
	// -27.631021115929 -1e+12
}
