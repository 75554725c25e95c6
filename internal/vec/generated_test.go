//go:build amd64 && !purego

package vec

import (
	"testing"

	"github.com/adjointgo/adjoint/internal/gentest"
)

// TestGenerated reruns the package's generators and compares their output
// with the committed files, byte for byte.
func TestGenerated(t *testing.T) {
	for _, g := range []struct {
		script, stdout string
		files          []string
	}{
		{"_gen/asmgen.py", "vec_amd64.s", []string{"vec_amd64.s"}},
		{"_gen/normgen.py", "norm_amd64.s", []string{"norm_amd64.s"}},
		{"_gen/adamgen.py", "", []string{"adam_amd64.s"}},
		{"_gen/gogen.py", "", []string{"vec_gen.go", "asm_amd64.go", "asm_other.go"}},
	} {
		t.Run(g.script, func(t *testing.T) { gentest.Run(t, g.script, g.stdout, g.files) })
	}
}
