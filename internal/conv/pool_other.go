//go:build purego || !amd64

package conv

// pool22F32 has no assembly here: maxPlane22 does every window in Go.
func pool22F32(out, back, x []float32, w, ow, oh int) int { return 0 }

// poolMask22F32 has no assembly here: poolMask22 does every window in Go.
func poolMask22F32(out []float32, wins []uint8, x []float32, w, pw, ph int) int { return 0 }

// unpool22F32 has no assembly here: unpool22 does every window in Go.
func unpool22F32(back, g []float32, wins []uint8, w, pw, ph int, relu bool) int { return 0 }
