// Package errs is the one error convention of the module. Every package
// declares its sentinel errors with New; every error a package panics with
// or returns wraps one of them (errors.Is works on it), and Module reports
// whether an error is one of the module's own. ad.Try recovers exactly
// those panics, whichever package raised them, and re-panics anything else
// (a runtime error is a bug, not an input mistake).
package errs

import "errors"

// sentinel is the type of every sentinel error of the module.
type sentinel struct{ msg string }

func (s *sentinel) Error() string { return s.msg }

// New returns a new sentinel error with the given text.
func New(msg string) error { return &sentinel{msg} }

// Module reports whether err wraps a sentinel made by New: an error of this
// module, as opposed to a runtime panic or a foreign error.
func Module(err error) bool {
	var s *sentinel
	return errors.As(err, &s)
}

// Catch runs f and returns the error it panicked with, or nil; a panic with
// a value that is not an error propagates. Tests of the packages use it to
// inspect the typed errors their functions panic with.
func Catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	f()
	return nil
}
