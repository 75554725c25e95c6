// Package niltest holds the module's table test of the public constructors
// and entry points called with nil or zero-value arguments: each must work
// or fail with a typed error of the module (one ad.Try returns), never with
// a nil-pointer panic. It has no code of its own.
package niltest
