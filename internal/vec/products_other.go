//go:build purego || !amd64

package vec

func scaledProduct3F32Asm(d0, d1, d2, g, a, b, c []float32, s float32) int { return 0 }
func scaledProduct3F64Asm(d0, d1, d2, g, a, b, c []float64, s float64) int { return 0 }
func tanhGradVJPF32Asm(dg, dy, gg, g, y []float32, s float32) int          { return 0 }
func tanhGradVJPF64Asm(dg, dy, gg, g, y []float64, s float64) int          { return 0 }
