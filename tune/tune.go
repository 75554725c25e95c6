// Package tune controls how the matrix products of this module (every
// MatMul, Linear layer, convolution and attention, through package tensor)
// choose their kernel parameters on the CPU they run on.
//
// A product's results never depend on these parameters: only those that
// keep every product's summation order are chosen (the micro-kernel at
// equal depth block, the row and column blocks, how B is packed, the
// narrowest column slab of a product split across goroutines, whether a
// product A·Bᵀ with few rows of A runs as B·Aᵀ), and the
// depth block kc, which decides where partial sums are rounded, is never
// tuned. They decide speed only.
//
// By default a program's first matrix product looks for this CPU's
// [Profile] in a cache under the user's cache directory and, if there is
// none, times a short list of candidates (about 0.2–0.9 s, once per CPU)
// and caches the fastest. The environment variable ADJOINT_TUNE changes
// that without a rebuild: "off" (the parameters derived from the CPU's
// cache sizes), "cache" (never measure), "now" (measure again), or the path
// of a profile file. Test binaries use the derived parameters unless
// ADJOINT_TUNE is set to something other than "auto".
//
// This package does the same from code, and a call of [Use] or [Off]
// overrides ADJOINT_TUNE: [Off] for the derived parameters with no
// measurement, [Use] to install a fixed profile (one read with [Load] or
// [Parse], for instance from a file embedded in the program), [Current]
// for the parameters in use and where they came from, [Measure] to time
// the candidates now, and [Save] to write a profile file. A profile file
// holds profiles by CPU signature ([Signature]), in the format of the
// cache (which is itself a profile file); `adjoint tune -o FILE` adds this
// CPU's measured profile to FILE, so one file can carry the profiles of
// every CPU a program is deployed on.
//
// [Use] and [Off] change state shared by the whole process: call them at
// start-up, before any goroutine runs products, never concurrently with
// products.
package tune

import (
	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/isa"
)

// Params are the parameters of one element type's matrix products.
type Params struct {
	// Kernel is the micro-kernel: "avx512", "avx2" or "go" (the ones this
	// CPU and build have; see the errors of [Use]).
	Kernel string
	// KC is the depth block. It must equal the one derived for this CPU
	// (256 on every CPU seen so far): another would change results, so it
	// is never tuned and a profile with another is refused.
	KC int
	// MC is the number of rows of A per block, a multiple of the kernel's
	// register tile height (12 for avx512, 6 for avx2), at most 4096.
	MC int
	// NC is the number of columns of B per block, a multiple of the
	// kernel's register tile width, at most 65536.
	NC int
	// RowsB is how many rows of a row-major B are packed at a time (0:
	// panel by panel), at most 256.
	RowsB int
	// SlabCols is the narrowest column slab of a product split across
	// goroutines whose A is packed (0: the default, 512); narrower splits
	// share B blocks instead. At most 65536.
	SlabCols int
	// SwapNT computes a product A·Bᵀ of A with at most 128 rows and B with
	// at least twice as many (beta 0, no fused epilogue, 256 deep or more)
	// as B·Aᵀ and writes its transpose: the same bits, faster where packing B's transposed panels
	// costs more than reading B in place.
	SwapNT bool
}

// Profile is a set of [Params] for float32 and float64 products, with the
// signature of the CPU they are for.
type Profile struct {
	// CPU is the [Signature] of the CPU the profile was measured on. [Use]
	// and [Load] take a profile only on a CPU of that signature, or on any
	// CPU if CPU is empty (a profile meant to ship to CPUs not known in
	// advance: its parameters are still checked against each CPU's
	// kernels).
	CPU string
	F32 Params // the parameters of float32 products
	F64 Params // the parameters of float64 products
}

// Error is the error of every function of this package that fails: it
// names the file (Path, where there is one), the kind of problem (Kind,
// one of [ErrCorrupt], [ErrForeign], [ErrParams] and [ErrWrite], which
// errors.Is matches), what is wrong and what to do about it (Reason), and
// the underlying error of the file system or the JSON decoder (Err), if
// any. errors.As(err, new(*tune.Error)) holds for every such error.
type Error = gemm.ProfileError

// The kinds of [Error]; errors.Is(err, tune.ErrForeign) and so on.
var (
	// ErrCorrupt: a file that is not a readable profile file (missing,
	// unreadable, not JSON, another format version, unknown fields), or
	// one [Save] will not overwrite because it is not a profile file.
	ErrCorrupt = gemm.ErrCorrupt
	// ErrForeign: a profile measured on another CPU, or a profile file
	// with no profile for this CPU (nor one for any CPU).
	ErrForeign = gemm.ErrForeign
	// ErrParams: parameters this CPU's kernels cannot run with (a
	// micro-kernel this CPU or build lacks, blocks out of range or not
	// multiples of the register tile), or only by changing results (a
	// depth block KC other than this CPU's).
	ErrParams = gemm.ErrParams
	// ErrWrite: a profile file that cannot be written.
	ErrWrite = gemm.ErrWrite
)

// Signature returns this CPU's signature, as profiles are keyed by: the
// architecture, vendor, family, model and stepping, the best instruction
// set level and the one in use (ADJOINT_CPU may cap it), and the cache
// sizes, e.g. "amd64 AuthenticAMD family 26 model 2 stepping 1 best avx512
// use avx512 L1d 48K/12w L2 1024K L3 2048K". Machines of equal signatures
// are taken to want the same parameters.
func Signature() string { return isa.Signature() }

// Current returns the parameters every matrix product uses from now on
// and says how they were chosen ("tuned (cache)", "tuned now (…)", "tune
// off", "fixed profile FILE", "tune.Use", "derived from the cache sizes,
// not tuned (…)", …). If no product has run yet, it first does what a first
// product does: in a program with ADJOINT_TUNE unset and no cached profile
// for this CPU, that is the measurement (0.2–0.9 s, once per CPU).
func Current() (Profile, string) {
	p, src := gemm.ActiveProfile()
	return fromGemm(p), src
}

// Derived returns the parameters derived from this CPU's cache sizes,
// which products use when nothing is tuned ([Off]).
func Derived() Profile { return fromGemm(gemm.DerivedProfile()) }

// Measure times the candidate parameters on this CPU (0.2–0.9 s; on two
// goroutines as well where GOMAXPROCS allows) and returns the fastest,
// without using it or writing any file: pass it to [Use] or [Save].
func Measure() Profile { return fromGemm(gemm.Tune()) }

// Use makes every later matrix product use p, in place of ADJOINT_TUNE's
// choice and of any profile used before. It returns an *[Error] and changes
// nothing when p is for another CPU ([ErrForeign]: its CPU is neither
// empty nor this CPU's [Signature]) or when this CPU's kernels cannot run
// with its parameters ([ErrParams]). Call it before products run, never
// concurrently with them.
func Use(p Profile) error { return gemm.UseProfile(toGemm(p), "tune.Use") }

// Off makes every later matrix product use the parameters derived from
// this CPU's cache sizes ([Derived]), in place of ADJOINT_TUNE's choice and
// of any profile used before, and nothing is measured or cached. Call it
// before products run, never concurrently with them.
func Off() { gemm.UseDerived("tune off (tune.Off)") }

// Load reads this CPU's profile from a profile file: one [Save] or
// `adjoint tune -o` wrote (profiles by CPU signature, the cache's format),
// or a file of one profile. It returns the profile for this CPU's
// [Signature], else the file's profile for any CPU (an empty signature),
// else an *[Error] of kind [ErrForeign] that lists the file's CPUs; and
// one of kind [ErrCorrupt] for a file that is missing or not a profile
// file. The parameters are checked by [Use], not here.
func Load(path string) (Profile, error) {
	p, err := gemm.LoadProfile(path)
	return fromGemm(p), err
}

// Parse is [Load] of a profile file's contents (from an embedded file, for
// instance).
func Parse(data []byte) (Profile, error) {
	p, err := gemm.ParseProfile(data, isa.Signature())
	return fromGemm(p), err
}

// Save adds p to the profile file at path under p's CPU signature,
// keeping the profiles of other CPUs already in it (so that one file can
// serve several kinds of machine), and creates the file if there is none.
// It returns an *[Error] of kind [ErrParams] for parameters that could not
// be used (all the checks of [Use] when p is for this CPU, else those that
// hold on every CPU), [ErrCorrupt] when a file at path is not a profile
// file (it is left alone), and [ErrWrite] when the file cannot be written.
// The file is replaced atomically.
func Save(path string, p Profile) error { return gemm.WriteProfile(path, toGemm(p)) }

func fromGemm(p gemm.Profile) Profile {
	return Profile{CPU: p.CPU, F32: Params(p.F32), F64: Params(p.F64)}
}

func toGemm(p Profile) gemm.Profile {
	return gemm.Profile{CPU: p.CPU, F32: gemm.KernelParams(p.F32), F64: gemm.KernelParams(p.F64)}
}
