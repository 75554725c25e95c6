package gemm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/adjointgo/adjoint/internal/isa"
)

// Tuning by measurement. The blocks derived from the cache sizes
// (blocking.go) and the rules that choose between packing and reading in
// place were measured on a few CPUs; on others a different micro-kernel
// (the AVX2 one on a core that splits 512-bit instructions), other row or
// column blocks, packing B by rows, or another split of a product across
// two goroutines may be faster. Tune times a short
// list of candidates on representative products and keeps the fastest.
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
// is ignored. The environment variable ADJOINT_TUNE, read at the first
// product, says what happens:
//
//	unset, "auto"  the cached profile of this CPU if there is one, else the
//	               candidates are timed at the first product (about 0.5 s
//	               once per CPU) and the winners cached; test binaries use
//	               the derived parameters unless ADJOINT_TUNE is set
//	"cache"        the cached profile if there is one; never measure
//	"now"          measure at the first product even if cached, and cache
//	"off"          the derived parameters, no cache
//	a file path    the profile in that file (a fixed profile, as written by
//	               "adjoint tune -o"), for whichever CPU; if it cannot be
//	               applied, the derived parameters and a note in KernelName
//
// SetProfile applies a profile from a program.

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
}

// Profile is a set of parameters for both element types, with the
// signature of the CPU they were measured on.
type Profile struct {
	CPU string       `json:"cpu"`
	F32 KernelParams `json:"f32"`
	F64 KernelParams `json:"f64"`
}

// ProfileError says why a profile or the cache file was not used.
type ProfileError struct {
	Path   string // the file, where one was read
	Reason string
	Err    error // the underlying error, if any
}

// Error gives the file, the reason and the underlying error.
func (e *ProfileError) Error() string {
	s := "gemm: profile"
	if e.Path != "" {
		s += " " + e.Path
	}
	s += ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error (ErrNoProfile for a cache without
// this CPU's profile).
func (e *ProfileError) Unwrap() error { return e.Err }

// ErrNoProfile is wrapped by the error of a cache without a profile for
// this CPU.
var ErrNoProfile = errors.New("no profile for this CPU")

// cacheFile is the cache's file name under os.UserCacheDir()/adjoint.
const cacheFile = "gemm-profiles.json"

// cacheVersion is the cache file's format; other versions are ignored.
const cacheVersion = 1

// cacheDoc is the cache file: profiles by CPU signature.
type cacheDoc struct {
	Version  int                `json:"version"`
	Profiles map[string]Profile `json:"profiles"`
}

// CachePath returns the cache file's path.
func CachePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", &ProfileError{Reason: "no user cache directory", Err: err}
	}
	return filepath.Join(dir, "adjoint", cacheFile), nil
}

// readCache reads the profile for signature sig from the cache file at
// path.
func readCache(path, sig string) (Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Profile{}, &ProfileError{Path: path, Reason: "unreadable", Err: err}
	}
	var doc cacheDoc
	if err := json.Unmarshal(b, &doc); err != nil || doc.Version != cacheVersion {
		return Profile{}, &ProfileError{Path: path, Reason: "corrupt or of another version", Err: err}
	}
	p, ok := doc.Profiles[sig]
	if !ok || p.CPU != sig {
		return Profile{}, &ProfileError{Path: path, Reason: "for " + sig, Err: ErrNoProfile}
	}
	return p, nil
}

// writeCache adds p to the cache file at path (keeping the other CPUs'
// profiles of a readable file), through a temporary file renamed over it.
func writeCache(path string, p Profile) error {
	doc := cacheDoc{Version: cacheVersion, Profiles: map[string]Profile{}}
	if b, err := os.ReadFile(path); err == nil {
		var old cacheDoc
		if json.Unmarshal(b, &old) == nil && old.Version == cacheVersion {
			for k, v := range old.Profiles {
				doc.Profiles[k] = v
			}
		}
	}
	doc.Profiles[p.CPU] = p
	b, err := json.MarshalIndent(doc, "", "\t")
	if err != nil {
		return &ProfileError{Path: path, Reason: "encoding", Err: err}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &ProfileError{Path: path, Reason: "cannot create its directory", Err: err}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), cacheFile+".*")
	if err != nil {
		return &ProfileError{Path: path, Reason: "cannot write", Err: err}
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return &ProfileError{Path: path, Reason: "cannot write", Err: err}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return &ProfileError{Path: path, Reason: "cannot write", Err: err}
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
	return writeCache(path, p)
}

// ReadProfile reads a profile (one Profile as JSON, such as "adjoint tune
// -o" writes) from a file.
func ReadProfile(path string) (Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Profile{}, &ProfileError{Path: path, Reason: "unreadable", Err: err}
	}
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return Profile{}, &ProfileError{Path: path, Reason: "corrupt", Err: err}
	}
	return p, nil
}

// tuned guards the parameters in use: f32 and f64 are replaced only
// under it, before the first product that reads them (ensureTuned) or by
// SetProfile, which must not run concurrently with products.
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
		p, err := ReadProfile(v)
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
		writeCache(path, p) // a cache that cannot be written costs the next process the measurement, nothing more
	}
	return fmt.Sprintf("tuned now (%v)", time.Since(t0).Round(time.Millisecond))
}

// CurrentProfile returns the parameters in use.
func CurrentProfile() Profile {
	return Profile{CPU: isa.Signature(), F32: paramsOf(&f32), F64: paramsOf(&f64)}
}

func paramsOf[T float](kn *kernel[T]) KernelParams {
	return KernelParams{Kernel: kn.name, KC: kn.kc, MC: kn.mc, NC: kn.nc, RowsB: kn.rowsB, SlabCols: kn.slabCols}
}

// SetProfile applies p (of any CPU: its signature is not checked) after
// checking it: its kernels must be available at the level in use, with
// the derived depth block kc, and its blocks multiples of the register
// tile. It must not run concurrently with products.
func SetProfile(p Profile) error {
	ensureTuned() // so that the first product does not override p
	return applyProfile(p)
}

func applyProfile(p Profile) error {
	k32, k64 := derivedKernels()
	s, err := withParams(k32, p.F32)
	if err != nil {
		return err
	}
	d, err := withParams(k64, p.F64)
	if err != nil {
		return err
	}
	f32, f64 = s, d
	return nil
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
// error when there is none, its kc differs from the default kernel's
// (ks[0]) or the blocks are out of range.
func withParams[T float](ks []kernel[T], kp KernelParams) (kernel[T], error) {
	def := ks[0]
	if kp.KC != def.kc {
		return def, &ProfileError{Reason: fmt.Sprintf("kc %d, this CPU's is %d: results would differ", kp.KC, def.kc)}
	}
	for _, kn := range ks {
		if kn.name != kp.Kernel || kn.kc != def.kc {
			continue
		}
		if kp.MC < kn.mr || kp.MC%kn.mr != 0 || kp.MC > 4096 || kp.NC < kn.nr || kp.NC%kn.nr != 0 || kp.NC > 1<<16 ||
			kp.RowsB < 0 || kp.RowsB > 256 || kp.SlabCols < 0 || kp.SlabCols > 1<<16 {
			return def, &ProfileError{Reason: fmt.Sprintf("blocks mc %d nc %d rowsB %d slabCols %d out of range for the %dx%d kernel",
				kp.MC, kp.NC, kp.RowsB, kp.SlabCols, kn.mr, kn.nr)}
		}
		kn.mc, kn.nc, kn.rowsB, kn.slabCols = kp.MC, kp.NC, kp.RowsB, kp.SlabCols
		return kn, nil
	}
	return def, &ProfileError{Reason: fmt.Sprintf("kernel %q with kc %d not available here", kp.Kernel, def.kc)}
}

// candidates lists the variants of kernel ks[0] that Tune times, in the
// order it tries them: the kernels of equal kc, then row blocks of half
// and twice the derived one, a column block of half, B packed by rows or
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
		{def, withSlab(def, 256), withSlab(def, 1024)},
	}
}

// slabGroup is the index in candidates of the group that varies the
// two-goroutine split, timed on two goroutines.
const slabGroup = 4

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
}

// tuneProducts are the products Tune times, but for the split.
var tuneProducts = []tuneProduct{{384, 384, 384, false, false}, {256, 512, 512, false, true}}

// splitProducts are the products the split is timed on: weight gradients
// Aᵀ·B whose A steps 4 KiB per depth step, so that A is packed and the
// narrowest slab decides between slabs and shared B blocks (n = 768: 256
// against 512 columns; 1280: 512 against 1024).
func splitProducts(es int) []tuneProduct {
	m := 4096 / es
	return []tuneProduct{{m, 768, 256, true, false}, {m, 1280, 256, true, false}}
}

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
// a variant only when it is at least 3 % faster than the best so far,
// timed interleaved with it (best of three rounds), and faster in two of
// the three rounds (a machine loaded by other work makes single timings
// unreliable; a wrong choice costs speed only, never a bit).
func tuneType[T float](ks []kernel[T]) kernel[T] {
	best := ks[0]
	es := int(unsafe.Sizeof(T(0)))
	bufs := tuneBuffers[T](append(splitProducts(es), tuneProducts...))
	for gi, group := range candidates(ks) {
		prods := tuneProducts
		if gi == slabGroup {
			if !split {
				continue
			}
			SetThreads(2)
			prods = splitProducts(es)
		}
		for _, v := range group {
			v = adopt(best, v)
			if sameParams(v, best) {
				continue
			}
			var tb, tv time.Duration
			wins := 0
			for range 3 {
				db, dv := timeKernel(&best, bufs, prods), timeKernel(&v, bufs, prods)
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
			if float64(tv) < 0.97*float64(tb) && wins >= 2 {
				best = v
			}
		}
		SetThreads(1)
	}
	return best
}

// split says whether this tuning run times the two-goroutine split (the
// program may use two or more).
var split bool

// adopt returns the candidate v with the parameters best has that v's
// group does not vary: v's kernel with best's blocks where v changes the
// kernel (the blocks scaled to its tile), else best with v's changes.
func adopt[T float](best, v kernel[T]) kernel[T] {
	if v.name != best.name {
		return v // a kernel of its own: its derived blocks
	}
	out := best
	out.mc, out.nc, out.rowsB, out.slabCols = v.mc, v.nc, v.rowsB, v.slabCols
	return out
}

func sameParams[T float](a, b kernel[T]) bool {
	return a.name == b.name && a.mc == b.mc && a.nc == b.nc && a.rowsB == b.rowsB && a.slabCols == b.slabCols
}

// tuneBuffers returns operands large enough for every product of ps.
func tuneBuffers[T float](ps []tuneProduct) (b [3][]T) {
	size := 0
	for _, p := range ps {
		size = max(size, p.m*p.k, p.k*p.n, p.m*p.n)
	}
	for i := range b {
		b[i] = make([]T, size)
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
		gemm(kn, s.transA, s.transB, s.m, s.n, s.k, 1, bufs[0], lda, bufs[1], ldb, 0, bufs[2], s.n)
		total += time.Since(t0)
	}
	return total
}

// MarshalProfile encodes p as ReadProfile (and ADJOINT_TUNE=FILE) reads it.
func MarshalProfile(p Profile) ([]byte, error) { return jsonIndent(p) }

// jsonIndent is a profile as "adjoint tune -o" writes it.
func jsonIndent(p Profile) ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "\t")
	return append(b, '\n'), err
}
