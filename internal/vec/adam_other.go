//go:build purego || !amd64

package vec

func adamF32Asm(p, g, m, v []float32, k *AdamF32, decoupled bool) int { return 0 }
func adamF64Asm(p, g, m, v []float64, k *AdamF64, decoupled bool) int { return 0 }
