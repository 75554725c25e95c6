//go:build purego || !amd64

package vec

func dotF32Asm(a, b []float32) (float32, int) { return 0, 0 }
func dotF64Asm(a, b []float64) (float64, int) { return 0, 0 }
