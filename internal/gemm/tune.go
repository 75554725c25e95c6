package gemm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/internal/isa"
)

// Tuning by measurement. The blocks derived from the cache sizes
// (blocking.go) and the rules that choose between packing and reading in
// place were measured on a few CPUs; on others a different micro-kernel
// (the AVX2 one on a core that splits 512-bit instructions), other row or
// column blocks, packing B by rows, or another split of a product across
// two goroutines may be faster. Tune times a short
// list of candidates on representative products and keeps the fastest:
// products in cache, for the packing of B also a layer's forward product
// against weights read from beyond the L2 cache (coldProducts), and for
// the row block a product with rows for several blocks (mcProducts).
// Only parameters that keep every product's summation order are tuned:
// the depth block kc is never changed (it decides where the partial sums
// are rounded), and a kernel whose kc differs from the derived one is not
// a candidate; the row block mc, the column block nc, the kernel at equal
// kc, the way B is packed and the split change no bit
// (TestTuneCandidatesBitIdentical).
//
// The winners are kept in a small JSON file under os.UserCacheDir()/adjoint,
// keyed by the CPU's signature (isa.Signature: vendor, family, model,
// stepping, instruction-set levels and cache sizes); an unreadable or
// corrupt file, or a profile of another CPU or one this build cannot apply,
// is ignored. A profile file (LoadProfile, WriteProfile, "adjoint tune -o")
// has the cache's format, so the cache is one too. The environment
// variable ADJOINT_TUNE, read at the first product, says what happens:
//
//	unset, "auto"  the cached profile of this CPU if there is one, else the
//	               candidates are timed at the first product (about 0.6 s
//	               once per CPU) and the winners cached; test binaries use
//	               the derived parameters in both cases
//	"cache"        the cached profile if there is one; never measure
//	"now"          measure at the first product even if cached, and cache
//	"off"          the derived parameters, no cache
//	a file path    this CPU's profile in that profile file (a fixed
//	               profile, as "adjoint tune -o" writes), or its profile for
//	               any CPU; if there is none or it cannot be applied, the
//	               derived parameters and a note in KernelName
//
// UseProfile and UseDerived (package tune's Use and Off) replace
// ADJOINT_TUNE's choice from a program.

// TuneEnv is the environment variable that controls tuning.
const TuneEnv = "ADJOINT_TUNE"

// KernelParams are the tuned parameters of one element type's kernel.
type KernelParams struct {
	Kernel string `json:"kernel"` // the micro-kernel: "avx512", "avx2" or "go"
	KC     int    `json:"kc"`     // the depth block it was measured with (must match the derived one)
	MC     int    `json:"mc"`     // rows of A per block (a multiple of the kernel's MR)
	NC     int    `json:"nc"`     // columns of B per block (a multiple of NR)
	RowsB  int    `json:"rowsB"`  // a row-major B packed this many rows at a time (0: panel by panel)
	// SlabCols is the narrowest column slab of a product split across
	// goroutines whose A is packed (0: the default, 512); narrower ones
	// share B blocks instead.
	SlabCols int `json:"slabCols,omitempty"`
	// SwapNT computes an A·Bᵀ whose B has many more rows than A as B·Aᵀ
	// and transposes the result (see swapsNT); the same bits either way.
	SwapNT bool `json:"swapNT,omitempty"`
}

// Profile is a set of parameters for both element types, with the
// signature of the CPU they were measured on (isa.Signature); an empty CPU
// marks a profile meant for any CPU.
type Profile struct {
	CPU string       `json:"cpu"`
	F32 KernelParams `json:"f32"`
	F64 KernelParams `json:"f64"`
}

// The kinds of ProfileError (its Kind), for errors.Is.
var (
	// ErrCorrupt is the kind of error of a file that is not a readable
	// profile file: missing or unreadable, not JSON, of another format
	// version, or with fields a profile does not have.
	ErrCorrupt = errs.New("not a readable profile file")
	// ErrForeign is the kind of error of a profile measured on another CPU
	// (its signature is not this CPU's), or of a file without a profile
	// for this CPU.
	ErrForeign = errs.New("profile of another CPU")
	// ErrParams is the kind of error of parameters this CPU's kernels
	// cannot run with, or could run with only by changing results: a
	// micro-kernel this CPU or build lacks, a depth block kc other than
	// the derived one, blocks that are not multiples of the register tile
	// or out of range.
	ErrParams = errs.New("profile parameters not applicable")
	// ErrWrite is the kind of error of a profile file that cannot be
	// written.
	ErrWrite = errs.New("cannot write the profile file")
)

// ProfileError says why a profile, a profile file or the cache was not
// used. It wraps its Kind (ErrCorrupt, ErrForeign, ErrParams or ErrWrite)
// and Err.
type ProfileError struct {
	Path   string // the file, where one was read or written
	Kind   error  // ErrCorrupt, ErrForeign, ErrParams or ErrWrite
	Reason string // what is wrong, and what to do about it
	Err    error  // the underlying error (file system, JSON), if any
}

// Error gives the file, the kind, the reason and the underlying error.
func (e *ProfileError) Error() string {
	s := "tune: profile"
	if e.Path != "" {
		s += " " + e.Path
	}
	s += ": " + e.Kind.Error() + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the Kind and, if any, the underlying error.
func (e *ProfileError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// cacheFile is the cache's file name under os.UserCacheDir()/adjoint.
const cacheFile = "gemm-profiles.json"

// cacheVersion is the format of a profile file (the cache, and files
// Save writes); other versions are refused.
const cacheVersion = 1

// cacheDoc is a profile file: profiles by CPU signature.
type cacheDoc struct {
	Version  int                `json:"version"`
	Profiles map[string]Profile `json:"profiles"`
}

// CachePath returns the cache file's path.
func CachePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", &ProfileError{Kind: ErrWrite, Reason: "no user cache directory (set HOME or XDG_CACHE_HOME, or use a profile file)", Err: err}
	}
	return filepath.Join(dir, "adjoint", cacheFile), nil
}

// decodeProfiles parses a profile file: a set of profiles by CPU signature
// (the cache's format, which writeProfiles writes), or one profile (as
// "adjoint tune -o" wrote before it wrote sets), returned as a set of one
// keyed by its CPU. Unknown fields are refused: a misspelt field would
// otherwise read as zero.
func decodeProfiles(b []byte) (map[string]Profile, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, &ProfileError{Kind: ErrCorrupt, Reason: "not a JSON object (write it again with adjoint tune -o or tune.Save)", Err: err}
	}
	strict := func(v any) error {
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		return d.Decode(v)
	}
	if _, ok := fields["version"]; ok {
		var doc cacheDoc
		if err := strict(&doc); err != nil {
			return nil, &ProfileError{Kind: ErrCorrupt, Reason: "a malformed set of profiles", Err: err}
		}
		if doc.Version != cacheVersion {
			return nil, &ProfileError{Kind: ErrCorrupt, Reason: fmt.Sprintf("format version %d, this build reads %d (write it again with this build)", doc.Version, cacheVersion)}
		}
		return doc.Profiles, nil
	}
	_, f32 := fields["f32"]
	_, f64 := fields["f64"]
	var p Profile
	if err := strict(&p); err != nil || !f32 || !f64 {
		return nil, &ProfileError{Kind: ErrCorrupt, Reason: "neither a set of profiles (version, profiles) nor one profile (cpu, f32, f64)", Err: err}
	}
	return map[string]Profile{p.CPU: p}, nil
}

// pickProfile returns the profile of set for the CPU of signature sig:
// its own, else one for any CPU (an empty signature). A profile filed
// under another signature than its own is taken as foreign.
func pickProfile(set map[string]Profile, sig string) (Profile, error) {
	for _, key := range []string{sig, ""} {
		if p, ok := set[key]; ok && p.CPU == key {
			return p, nil
		}
	}
	var have []string
	for k := range set {
		have = append(have, fmt.Sprintf("%q", k))
	}
	slices.Sort(have)
	if len(have) > 3 {
		have = append(have[:3], fmt.Sprintf("and %d more", len(have)-3))
	}
	if len(have) == 0 {
		have = []string{"none"}
	}
	return Profile{}, &ProfileError{Kind: ErrForeign, Reason: fmt.Sprintf("this CPU is %q; the file has profiles for %s "+
		"(tune on this CPU: adjoint tune -o FILE adds its profile to FILE; or set a profile's cpu to \"\" to use it on any CPU)",
		sig, strings.Join(have, ", "))}
}

// readCache reads the profile for signature sig from the profile file at
// path.
func readCache(path, sig string) (Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Profile{}, &ProfileError{Path: path, Kind: ErrCorrupt, Reason: "unreadable", Err: err}
	}
	p, err := ParseProfile(b, sig)
	if pe, ok := err.(*ProfileError); ok {
		pe.Path = path
	}
	return p, err
}

// ParseProfile returns the profile for the CPU of signature sig in the
// contents of a profile file (see LoadProfile).
func ParseProfile(b []byte, sig string) (Profile, error) {
	set, err := decodeProfiles(b)
	if err != nil {
		return Profile{}, err
	}
	return pickProfile(set, sig)
}

// LoadProfile reads this CPU's profile from a profile file: a set of
// profiles by CPU signature (the cache's format, which WriteProfile and
// "adjoint tune -o" write), or a file of one profile. It is an error
// (ErrCorrupt) when the file is not a readable profile file, and
// (ErrForeign) when it holds no profile for this CPU's signature nor one
// for any CPU. The parameters are not checked: UseProfile does that.
func LoadProfile(path string) (Profile, error) { return readCache(path, isa.Signature()) }

// writeProfiles adds p to the profile file at path (keeping the other
// CPUs' profiles), through a temporary file renamed over it. An existing
// file that is not a profile file is overwritten when overwrite is set
// (the cache: a corrupt cache is worth nothing), else refused.
func writeProfiles(path string, p Profile, overwrite bool) error {
	doc := cacheDoc{Version: cacheVersion, Profiles: map[string]Profile{}}
	if b, err := os.ReadFile(path); err == nil {
		old, err := decodeProfiles(b)
		if err != nil && !overwrite {
			pe := err.(*ProfileError)
			pe.Path, pe.Reason = path, pe.Reason+"; not overwritten (remove it or choose another path)"
			return pe
		}
		maps.Copy(doc.Profiles, old)
	} else if !errors.Is(err, fs.ErrNotExist) && !overwrite {
		return &ProfileError{Path: path, Kind: ErrCorrupt, Reason: "unreadable; not overwritten", Err: err}
	}
	doc.Profiles[p.CPU] = p
	b, err := json.MarshalIndent(doc, "", "\t")
	if err != nil {
		return &ProfileError{Path: path, Kind: ErrWrite, Reason: "encoding", Err: err}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &ProfileError{Path: path, Kind: ErrWrite, Reason: "cannot create its directory", Err: err}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return &ProfileError{Path: path, Kind: ErrWrite, Reason: "cannot create a file beside it", Err: err}
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return &ProfileError{Path: path, Kind: ErrWrite, Reason: "cannot write", Err: err}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return &ProfileError{Path: path, Kind: ErrWrite, Reason: "cannot write", Err: err}
	}
	return nil
}

// SaveProfile adds p to the cache file (CachePath), where the first
// product of a later process on a CPU of p's signature finds it.
func SaveProfile(p Profile) error {
	path, err := CachePath()
	if err != nil {
		return err
	}
	return writeProfiles(path, p, true)
}

// WriteProfile adds p to the profile file at path, keeping the profiles
// of other CPUs already in it, and creates the file if there is none. It
// refuses (ErrCorrupt) to overwrite a file that is not a profile file, and
// (ErrParams) a profile that could not be applied: fully checked when p
// is for this CPU, else only the checks that hold on every CPU.
func WriteProfile(path string, p Profile) error {
	var err error
	if p.CPU == isa.Signature() {
		_, _, err = resolve(p)
	} else {
		err = errors.Join(plausible("f32", p.F32), plausible("f64", p.F64))
	}
	if err != nil {
		return err
	}
	return writeProfiles(path, p, false)
}

// plausible checks what holds for the parameters of every kernel on every
// CPU: a kernel name, a positive depth block, positive blocks within
// withParams's limits.
func plausible(dt string, kp KernelParams) error {
	if kp.Kernel == "" || kp.KC < 1 || kp.MC < 1 || kp.MC > 4096 || kp.NC < 1 || kp.NC > 1<<16 ||
		kp.RowsB < 0 || kp.RowsB > 256 || kp.SlabCols < 0 || kp.SlabCols > 1<<16 {
		return &ProfileError{Kind: ErrParams, Reason: fmt.Sprintf("%s: kernel %q kc %d mc %d nc %d rowsB %d slabCols %d: "+
			"a kernel name and kc, mc (≤ 4096) and nc (≤ 65536) ≥ 1, rowsB in [0, 256] and slabCols in [0, 65536] are needed",
			dt, kp.Kernel, kp.KC, kp.MC, kp.NC, kp.RowsB, kp.SlabCols)}
	}
	return nil
}

// tuned guards the parameters in use: f32 and f64 are replaced only
// under it, before the first product that reads them (ensureTuned) or by
// UseProfile and UseDerived, which must not run concurrently with
// products.
var (
	tuneOnce sync.Once
	tuneNote string // how the parameters in use were chosen, for KernelName
)

// ensureTuned applies ADJOINT_TUNE's choice once, at the first product.
func ensureTuned() { tuneOnce.Do(func() { tuneNote = autoTune(os.Getenv(TuneEnv)) }) }

// autoTune does what ADJOINT_TUNE's value v asks and returns the note.
func autoTune(v string) string {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "off":
		return "tune off"
	case "", "auto", "cache", "now":
	default:
		p, err := LoadProfile(v)
		if err == nil {
			err = applyProfile(p)
		}
		if err != nil {
			return "fixed profile not used: " + err.Error()
		}
		return "fixed profile " + v
	}
	mode := strings.ToLower(v)
	if (mode == "" || mode == "auto") && testing.Testing() {
		return "" // tests get the derived parameters unless asked
	}
	path, err := CachePath()
	if err == nil && mode != "now" {
		var p Profile
		if p, err = readCache(path, isa.Signature()); err == nil {
			if err = applyProfile(p); err == nil {
				return "tuned (cache)"
			}
		}
	}
	if mode == "cache" {
		return ""
	}
	t0 := time.Now()
	p := tune()
	if err := applyProfile(p); err != nil {
		return "tuning failed: " + err.Error()
	}
	if path != "" {
		writeProfiles(path, p, true) // a cache that cannot be written costs the next process the measurement, nothing more
	}
	return fmt.Sprintf("tuned now (%v)", time.Since(t0).Round(time.Millisecond))
}

// CurrentProfile returns the parameters in use (without applying
// ADJOINT_TUNE first: see ActiveProfile).
func CurrentProfile() Profile {
	return Profile{CPU: isa.Signature(), F32: paramsOf(&f32), F64: paramsOf(&f64)}
}

// ActiveProfile returns the parameters every product uses from now on,
// applying ADJOINT_TUNE's choice first if no product has yet (which may
// mean timing the candidates), and says how they were chosen.
func ActiveProfile() (Profile, string) {
	ensureTuned()
	src := tuneNote
	if src == "" {
		why := "a test binary tunes only when ADJOINT_TUNE is set"
		if strings.EqualFold(strings.TrimSpace(os.Getenv(TuneEnv)), "cache") {
			why = "ADJOINT_TUNE=cache and the cache has no profile for this CPU"
		}
		src = "derived from the cache sizes, not tuned (" + why + ")"
	}
	return CurrentProfile(), src
}

// DerivedProfile returns the parameters derived from the CPU's cache
// sizes, which a product uses when nothing is tuned.
func DerivedProfile() Profile {
	k32, k64 := derivedKernels()
	return Profile{CPU: isa.Signature(), F32: paramsOf(&k32[0]), F64: paramsOf(&k64[0])}
}

func paramsOf[T float](kn *kernel[T]) KernelParams {
	return KernelParams{Kernel: kn.name, KC: kn.kc, MC: kn.mc, NC: kn.nc, RowsB: kn.rowsB, SlabCols: kn.slabCols, SwapNT: kn.swapNT}
}

// UseProfile checks p and, if it passes, makes every later product use it,
// in place of ADJOINT_TUNE's choice; note says where it came from (for
// KernelName and ActiveProfile). p must be for this CPU (isa.Signature) or
// for any CPU (an empty signature, ErrForeign otherwise), and its kernels
// available at the level in use with the derived depth block kc, its
// blocks multiples of the register tile (ErrParams otherwise). A refused
// profile changes nothing. It must not run concurrently with products.
func UseProfile(p Profile, note string) error {
	if sig := isa.Signature(); p.CPU != "" && p.CPU != sig {
		return &ProfileError{Kind: ErrForeign, Reason: fmt.Sprintf("measured on %q, this CPU is %q "+
			"(tune on this CPU, or set the profile's CPU to \"\" to use its parameters on any CPU)", p.CPU, sig)}
	}
	s, d, err := resolve(p)
	if err != nil {
		return err
	}
	tuneOnce.Do(func() {}) // the program's choice replaces ADJOINT_TUNE's
	f32, f64, tuneNote = s, d, note
	return nil
}

// UseDerived makes every later product use the derived parameters, in
// place of ADJOINT_TUNE's choice; note as for UseProfile. It must not run
// concurrently with products.
func UseDerived(note string) {
	tuneOnce.Do(func() {})
	k32, k64 := derivedKernels()
	f32, f64, tuneNote = k32[0], k64[0], note
}

// applyProfile checks p's parameters (not its CPU) and puts them in use.
func applyProfile(p Profile) error {
	s, d, err := resolve(p)
	if err != nil {
		return err
	}
	f32, f64 = s, d
	return nil
}

// resolve returns the kernels with p's parameters, or the error of the
// first that this CPU cannot run.
func resolve(p Profile) (kernel[float32], kernel[float64], error) {
	k32, k64 := derivedKernels()
	s, err := withParams("f32", k32, p.F32)
	if err != nil {
		return s, kernel[float64]{}, err
	}
	d, err := withParams("f64", k64, p.F64)
	return s, d, err
}

// derivedKernels lists the kernels available at the level in use, the
// default (derived) one first.
func derivedKernels() ([]kernel[float32], []kernel[float64]) {
	k32, k64 := allKernels()
	// allKernels lists the generic kernel first and the best last
	k32 = append([]kernel[float32]{k32[len(k32)-1]}, k32[:len(k32)-1]...)
	k64 = append([]kernel[float64]{k64[len(k64)-1]}, k64[:len(k64)-1]...)
	return k32, k64
}

// withParams returns the kernel of ks named by kp with kp's blocks, or an
// error (ErrParams) when there is none, its kc differs from the default
// kernel's (ks[0]) or the blocks are out of range; dt names the element
// type in the error.
func withParams[T float](dt string, ks []kernel[T], kp KernelParams) (kernel[T], error) {
	def := ks[0]
	if kp.KC != def.kc {
		return def, &ProfileError{Kind: ErrParams, Reason: fmt.Sprintf("%s: kc %d, this CPU's is %d: results would differ "+
			"(kc is never tuned; take the profile adjoint tune writes on this CPU)", dt, kp.KC, def.kc)}
	}
	for _, kn := range ks {
		if kn.name != kp.Kernel || kn.kc != def.kc {
			continue
		}
		if kp.MC < kn.mr || kp.MC%kn.mr != 0 || kp.MC > 4096 || kp.NC < kn.nr || kp.NC%kn.nr != 0 || kp.NC > 1<<16 ||
			kp.RowsB < 0 || kp.RowsB > 256 || kp.SlabCols < 0 || kp.SlabCols > 1<<16 {
			return def, &ProfileError{Kind: ErrParams, Reason: fmt.Sprintf("%s: blocks mc %d nc %d rowsB %d slabCols %d out of range for the %dx%d %s kernel "+
				"(mc a multiple of %d up to 4096, nc a multiple of %d up to 65536, rowsB 0 to 256, slabCols 0 to 65536)",
				dt, kp.MC, kp.NC, kp.RowsB, kp.SlabCols, kn.mr, kn.nr, kn.name, kn.mr, kn.nr)}
		}
		kn.mc, kn.nc, kn.rowsB, kn.slabCols, kn.swapNT = kp.MC, kp.NC, kp.RowsB, kp.SlabCols, kp.SwapNT
		return kn, nil
	}
	var names []string
	for _, kn := range ks {
		if kn.kc == def.kc && !slices.Contains(names, kn.name) {
			names = append(names, fmt.Sprintf("%q", kn.name))
		}
	}
	return def, &ProfileError{Kind: ErrParams, Reason: fmt.Sprintf("%s: kernel %q not available with kc %d on this CPU and build (these are: %s)",
		dt, kp.Kernel, def.kc, strings.Join(names, ", "))}
}

// candidates lists the variants of kernel ks[0] that Tune times, in the
// order it tries them: the kernels of equal kc, then row blocks of half
// and twice the derived one (timed on mcProducts), a column block of half, B packed by rows or
// panel by panel, and (where two goroutines may run) the narrowest column
// slab of a split product of 256 and 1024 columns instead of 512. Tune varies one parameter at a time from the best so
// far; the tests run every candidate and their combinations.
func candidates[T float](ks []kernel[T]) [][]kernel[T] {
	def := ks[0]
	var kernels []kernel[T]
	for _, kn := range ks {
		if kn.kc == def.kc && kn.direct == def.direct {
			kernels = append(kernels, kn)
		}
	}
	return [][]kernel[T]{
		kernels,
		{def, withMC(def, def.mc/2), withMC(def, 2*def.mc)},
		{def, withNC(def, def.nc/2)},
		{def, withRows(def, 8-def.rowsB)}, // 0 ↔ 8
		{def, withSwap(def, !def.swapNT)},
		{def, withSlab(def, 256), withSlab(def, 1024)},
	}
}

// mcGroup is the index in candidates of the group that varies the row
// block mc, timed on mcProducts.
const mcGroup = 1

// swapGroup is the index in candidates of the group that varies swapNT,
// timed on swapProducts.
const swapGroup = 4

// slabGroup is the index in candidates of the group that varies the
// two-goroutine split, timed on two goroutines.
const slabGroup = 5

// rowsGroup is the index in candidates of the group that varies the way
// B is packed, timed on coldProducts as well.
const rowsGroup = 3

func withSwap[T float](kn kernel[T], on bool) kernel[T] {
	kn.swapNT = on
	return kn
}

func withSlab[T float](kn kernel[T], cols int) kernel[T] {
	kn.slabCols = cols
	return kn
}

func withMC[T float](kn kernel[T], mc int) kernel[T] {
	kn.mc = min(max(mc/kn.mr*kn.mr, kn.mr), 4096/kn.mr*kn.mr)
	return kn
}

func withNC[T float](kn kernel[T], nc int) kernel[T] {
	kn.nc = max(nc/kn.nr*kn.nr, kn.nr)
	return kn
}

func withRows[T float](kn kernel[T], rows int) kernel[T] {
	kn.rowsB = rows
	return kn
}

// tuneProduct is one product Tune times: m×k times k×n, A or B transposed
// or not (the forward and backward products of a layer).
type tuneProduct struct {
	m, n, k        int
	transA, transB bool
	weights        int // distinct B operands multiplied in turn (0: one)
}

// tuneProducts are the products Tune times, their operands in cache, but
// for the split (splitProducts), the row block (mcProducts), swapNT
// (swapProducts) and the packing of B (coldProducts as well).
var tuneProducts = []tuneProduct{{m: 384, n: 384, k: 384}, {m: 256, n: 512, k: 512, transB: true}}

// splitProducts are the products the split is timed on: weight gradients
// Aᵀ·B whose A steps 4 KiB per depth step, so that A is packed and the
// narrowest slab decides between slabs and shared B blocks (n = 768: 256
// against 512 columns; 1280: 512 against 1024).
func splitProducts(es int) []tuneProduct {
	m := 4096 / es
	return []tuneProduct{{m: m, n: 768, k: 256, transA: true}, {m: m, n: 1280, k: 256, transA: true}}
}

// coldProducts are the products the way B is packed is timed on besides
// tuneProducts: a layer's forward pass h·W, 64 rows of h against a weight
// that comes from beyond the L2 cache, as each weight does once per pass
// of a training step. Six distinct 512-deep weights with rows of 4 KiB
// (1024 float32 or 512 float64 columns, 12 MiB in all) are multiplied in
// turn. Packed panel by panel, such a B is read 2 cache lines from each of
// kc pages at a time, which the hardware prefetchers of some cores do not
// follow; packed by rows, it is read row by row. On a 5th-generation Xeon
// (family 6 model 207) by rows was 7–15 % faster on these products and
// lost on the products in cache, so the in-cache products alone chose
// wrong there.
func coldProducts(es int) []tuneProduct {
	return []tuneProduct{{m: 64, n: 4096 / es, k: 512, weights: 6}}
}

// mcProducts are the products the row block mc is timed on: a weight
// gradient Aᵀ·B with 8 KiB of A per depth step (A packed: 2048 float32 or
// 1024 float64 rows), so that its rows make two blocks of the derived mc
// on the CPUs seen (1020 rows of float32 against a 2 MiB L2, 504 of
// float64), four of half of it and one of twice it. The products of
// tuneProducts have 384 rows or fewer, one block of any candidate: timed
// on them alone, mc was chosen by noise (twice the derived one, for
// float32 on the family 6 model 207 Xeon, where it was 0.89–1.0× the time
// of the derived one on the 2048² and weight-gradient products).
func mcProducts(es int) []tuneProduct {
	return []tuneProduct{{m: 8192 / es, n: 512, k: 128, transA: true}}
}

// swapProducts are the products swapNT is timed on: A·Bᵀ with 64 rows of
// A against 1024 of B, 512 deep (a narrow batch's input gradient G·Wᵀ, a
// convolution's weight gradient G·colsᵀ), in cache.
var swapProducts = []tuneProduct{{m: 64, n: 1024, k: 512, transB: true}}

// Tune times the candidates on one goroutine (the split on two, where the
// program may use two) and returns the fastest profile, leaving the
// parameters in use unchanged.
func Tune() Profile { return tune() }

func tune() Profile {
	saved := threads.Load()
	defer threads.Store(saved)
	split = min(Threads(), 2) > 1 && runtime.GOMAXPROCS(0) > 1
	SetThreads(1)
	k32, k64 := derivedKernels()
	return Profile{CPU: isa.Signature(), F32: paramsOf(ptr(tuneType(k32))), F64: paramsOf(ptr(tuneType(k64)))}
}

func ptr[T any](v T) *T { return &v }

// tuneType varies one parameter at a time from the derived kernel, taking
// a variant only when it is faster than the best so far twice in a row,
// the two trials starting in opposite orders (see faster: a machine loaded
// by other work, or a VM whose speed drifts, makes single timings
// unreliable; a wrong choice costs speed only, never a bit).
func tuneType[T float](ks []kernel[T]) kernel[T] {
	best := ks[0]
	es := int(unsafe.Sizeof(T(0)))
	bufs := tuneBuffers[T](slices.Concat(splitProducts(es), tuneProducts, coldProducts(es), swapProducts, mcProducts(es)))
	for gi, group := range candidates(ks) {
		prods := groupProducts(gi, es)
		if gi == slabGroup {
			if !split {
				continue
			}
			SetThreads(2)
		}
		for _, v := range group {
			v = adopt(best, v, ks[0])
			if sameParams(v, best) {
				continue
			}
			timed := func(kn *kernel[T]) time.Duration { return timeKernel(kn, bufs, prods) }
			if faster(&v, &best, timed, false) && faster(&v, &best, timed, true) {
				best = v
			}
		}
		SetThreads(1)
	}
	return best
}

// faster reports whether v is at least 3 % faster than best, each timed by
// timed, interleaved over three rounds (best of each), and faster
// in two of the three. The order alternates from round to round, v first
// in the first round when vFirst is set: the products share their
// operands, so the second kernel of a round finds them in cache where the
// first brought them, and with best always first a candidate was favoured
// (most on coldProducts, whose weights the first run reads from memory).
func faster[T float](v, best *kernel[T], timed func(*kernel[T]) time.Duration, vFirst bool) bool {
	var tb, tv time.Duration
	wins := 0
	for r := range 3 {
		var db, dv time.Duration
		if (r%2 == 0) != vFirst {
			db = timed(best)
			dv = timed(v)
		} else {
			dv = timed(v)
			db = timed(best)
		}
		if tb == 0 || db < tb {
			tb = db
		}
		if tv == 0 || dv < tv {
			tv = dv
		}
		if dv < db {
			wins++
		}
	}
	return float64(tv) < 0.97*float64(tb) && wins >= 2
}

// split says whether this tuning run times the two-goroutine split (the
// program may use two or more).
var split bool

// adopt returns the candidate v of a group built from the derived kernel
// def, applied to best, the fastest so far: v itself where v changes the
// kernel (its own derived blocks), else best with the one parameter v's
// group varies (the one v has other than def's: the row or column block by
// the same factor, scaled to best's tile, or the packing of B or the
// split as v has it). The other parameters stay best's, so that a later
// group keeps what an earlier one chose (it once took all of v's, which
// put the derived values back: a winning split undid the packing of B a
// group before had chosen, and a candidate of the packing group also
// differed from best in its blocks).
func adopt[T float](best, v, def kernel[T]) kernel[T] {
	if v.name != def.name {
		return v // a kernel of its own: its derived blocks
	}
	out := best
	if v.mc != def.mc {
		out = withMC(out, out.mc*v.mc/def.mc)
	}
	if v.nc != def.nc {
		out = withNC(out, out.nc*v.nc/def.nc)
	}
	if v.rowsB != def.rowsB {
		out.rowsB = v.rowsB
	}
	if v.slabCols != def.slabCols {
		out.slabCols = v.slabCols
	}
	if v.swapNT != def.swapNT {
		out.swapNT = v.swapNT
	}
	return out
}

func sameParams[T float](a, b kernel[T]) bool {
	return a.name == b.name && a.mc == b.mc && a.nc == b.nc && a.rowsB == b.rowsB && a.slabCols == b.slabCols && a.swapNT == b.swapNT
}

// groupProducts returns the products group gi of candidates is timed on,
// for elements of es bytes.
func groupProducts(gi, es int) []tuneProduct {
	switch gi {
	case slabGroup:
		return splitProducts(es)
	case rowsGroup:
		return slices.Concat(tuneProducts, coldProducts(es))
	case swapGroup:
		return swapProducts
	case mcGroup:
		return mcProducts(es)
	}
	return tuneProducts
}

// tuneBuffers returns operands large enough for every product of ps (B
// as many times over as a product's weights).
func tuneBuffers[T float](ps []tuneProduct) (b [3][]T) {
	var size [3]int
	for _, p := range ps {
		size[0] = max(size[0], p.m*p.k)
		size[1] = max(size[1], p.k*p.n*max(p.weights, 1))
		size[2] = max(size[2], p.m*p.n)
	}
	for i := range b {
		b[i] = make([]T, size[i])
		for j := range b[i] {
			b[i][j] = T(float64(j%17)/16 - 0.5)
		}
	}
	return b
}

// timeKernel returns the time kn takes for the products ps.
func timeKernel[T float](kn *kernel[T], bufs [3][]T, ps []tuneProduct) time.Duration {
	var total time.Duration
	for _, s := range ps {
		lda, ldb := s.k, s.n
		if s.transA {
			lda = s.m
		}
		if s.transB {
			ldb = s.k
		}
		t0 := time.Now()
		for w := range max(s.weights, 1) {
			gemm(kn, s.transA, s.transB, s.m, s.n, s.k, 1, bufs[0], lda, bufs[1][w*s.k*s.n:], ldb, 0, bufs[2], s.n)
		}
		total += time.Since(t0)
	}
	return total
}
