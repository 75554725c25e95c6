// Package datasets provides small public data sets, embedded in the binary,
// for examples, tests and benchmarks: nothing is fetched at run time.
//
// Each data set has a loader that decodes the embedded file once and returns
// a shared, read-only value, and an error that names the line and field of
// any malformed record. The sources and licences are listed in
// data/README.md.
package datasets
