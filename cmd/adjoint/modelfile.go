package main

import (
	"fmt"

	"github.com/adjointgo/adjoint/safetensors"
)

// maxModelFile bounds the size of a model file that eval and generate
// read: the largest GPT the limits allow (maxGPTParams parameters) stored
// as float64, and the header's 100 MB.
const maxModelFile = maxGPTParams*8 + 100<<20

// readModel reads the model file at path for eval and generate. It is the
// one way the commands read a model: a regular file only (a device such as
// /dev/zero or /dev/urandom, a FIFO or a directory is refused before it is
// opened for reading, so that nothing is read without end and nothing
// blocks), of at most maxModelFile bytes and never more than its size,
// fully validated by package safetensors, and with finite weights unless
// allowNonFinite: a NaN or infinite weight makes every prediction NaN, which
// would print as an accuracy or a sample rather than an error. Errors are
// one line naming the path.
func readModel(path string, allowNonFinite bool) (*safetensors.File, error) {
	f, err := safetensors.ReadFileLimit(path, maxModelFile)
	if err != nil {
		return nil, err
	}
	if !allowNonFinite {
		if err := f.CheckFinite(); err != nil {
			return nil, fmt.Errorf("%w (the model diverged or the file is corrupted; --allow-nonfinite loads it anyway)", err)
		}
	}
	return f, nil
}
