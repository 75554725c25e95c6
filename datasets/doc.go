// Package datasets provides small public data sets, embedded in the binary,
// for examples, tests and benchmarks: nothing is fetched at run time.
//
// Each data set has a loader that decodes the embedded file once and returns
// a shared, read-only value, and an error that names the line and field of
// any malformed record (an *[Error] wrapping [ErrFormat]). The sources and
// licences are listed in data/README.md.
//
// The helpers for splitting and batching panic on arguments they cannot
// use, with an *Error wrapping [ErrArgument] or [ErrShape]; ad.Try turns
// such a panic into a returned error. [Batcher.SetState], whose argument
// comes from a checkpoint file, returns that error instead.
package datasets
