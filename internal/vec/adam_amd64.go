//go:build !purego

package vec

//go:noescape
func adamF32AVX2(p, grad, m, v *float32, n int, k *AdamF32, decoupled bool)

//go:noescape
func adamF64AVX2(p, grad, m, v *float64, n int, k *AdamF64, decoupled bool)

func adamF32Asm(p, g, m, v []float32, k *AdamF32, decoupled bool) int {
	n := len(p) &^ 7
	if !useAVX2 || n == 0 {
		return 0
	}
	_, _, _ = g[n-1], m[n-1], v[n-1]
	adamF32AVX2(&p[0], &g[0], &m[0], &v[0], n, k, decoupled)
	return n
}

func adamF64Asm(p, g, m, v []float64, k *AdamF64, decoupled bool) int {
	n := len(p) &^ 3
	if !useAVX2 || n == 0 {
		return 0
	}
	_, _, _ = g[n-1], m[n-1], v[n-1]
	adamF64AVX2(&p[0], &g[0], &m[0], &v[0], n, k, decoupled)
	return n
}
