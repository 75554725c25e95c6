package tune_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/adjointgo/adjoint/tune"
)

// A program that ships fixed parameters instead of measuring at start-up:
// a profile file (written on each kind of machine by `adjoint tune -o
// FILE`, or by tune.Save(FILE, tune.Measure())) is loaded and used; a
// profile of another CPU is refused; Off goes back to the parameters
// derived from the CPU's cache sizes.
func Example() {
	dir, err := os.MkdirTemp("", "tune-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "profiles.json")

	// Here Derived stands for a measured profile: Measure takes 0.2–0.9 s.
	if err := tune.Save(file, tune.Derived()); err != nil {
		fmt.Println(err)
		return
	}
	p, err := tune.Load(file)
	if err != nil {
		fmt.Println(err) // a missing or corrupt file, or none for this CPU
		return
	}
	if err := tune.Use(p); err != nil {
		fmt.Println(err)
		return
	}
	_, source := tune.Current()
	fmt.Println("in use:", source)

	p.CPU = "amd64 ExampleVendor family 0 model 0 stepping 0 best avx2 use avx2 L1d 32K/8w L2 512K L3 8192K"
	err = tune.Use(p)
	fmt.Println("another CPU's profile refused:", errors.Is(err, tune.ErrForeign))

	tune.Off()
	_, source = tune.Current()
	fmt.Println("in use:", source)
	// Output:
	// in use: tune.Use
	// another CPU's profile refused: true
	// in use: tune off (tune.Off)
}
