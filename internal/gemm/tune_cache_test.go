package gemm

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/adjointgo/adjoint/internal/isa"
	"github.com/adjointgo/adjoint/internal/isa/isatest"
)

// Every candidate Tune may choose, alone and combined, computes the bits
// of the derived kernel: the kernels of equal kc (AVX-512 and AVX2 on an
// AVX-512 CPU), row blocks of half and twice the derived one, a column
// block of half, B packed by rows or panel by panel; products that cross
// every block, all transposes, beta 0 and not; and the narrowest slab of
// a split product, on two and three goroutines.
func TestTuneCandidatesBitIdentical(t *testing.T) {
	isatest.Level(t)
	k32, k64 := derivedKernels()
	tuneBits(t, k32)
	tuneBits(t, k64)
}

func tuneBits[T float](t *testing.T, ks []kernel[T]) {
	groups := candidates(ks)
	var vs []kernel[T]
	for _, g := range groups {
		vs = append(vs, g...)
	}
	// one combination: the last kernel (AVX2 on an AVX-512 CPU) with half
	// its row and column blocks, the other packing of B and swapNT
	combo := groups[0][len(groups[0])-1]
	combo = withSwap(withRows(withNC(withMC(combo, combo.mc/2), combo.nc/2), 8-combo.rowsB), !combo.swapNT)
	vs = append(vs, combo)
	t.Logf("%d kernels of kc %d; %d variants, e.g. %s", len(groups[0]), ks[0].kc, len(vs), blockName(&combo))
	rng := rand.New(rand.NewPCG(26, 4))
	def := ks[0]
	for _, p := range []problem{
		{false, false, 2*def.mc/2 + 40, def.nc/2 + 40, def.kc + 44, 0, 1, 0},
		{true, true, 37, 70, 300, 3, 1.5, 0.5},
		{false, true, 13, 33, 257, 1, 1, 1},
		{true, false, 130, 90, 520, 0, 2, 0},
		{false, true, 20, 100, 300, 1, 1.5, 0}, // swapped where swapNT is on
	} {
		a, lda, b, ldb, c, ldc := operands[T](p, rng)
		run := func(kn *kernel[T]) []T { return runOn(kn, 0, p, a, lda, b, ldb, c, ldc) }
		want := run(&def)
		for _, v := range vs {
			got := run(&v)
			for i := range want {
				if bitsOf(got[i]) != bitsOf(want[i]) {
					t.Fatalf("%s against %s, %v: C[%d] = %v, want %v", blockName(&v), blockName(&def), p, i, got[i], want[i])
				}
			}
		}
	}
	// The split's variants on two and three goroutines against one, on the
	// products Tune times them on (A packed: slabs or shared B blocks).
	defer SetThreads(0)
	for _, sp := range splitProducts(int(unsafe.Sizeof(T(0)))) {
		p := problem{sp.transA, sp.transB, sp.m, sp.n, sp.k + 44, 0, 1, 0}
		a, lda, b, ldb, c, ldc := operands[T](p, rng)
		run := func(kn *kernel[T], nt int) []T { return runOn(kn, nt, p, a, lda, b, ldb, c, ldc) }
		want := run(&def, 1)
		for _, v := range groups[slabGroup] {
			for _, nt := range []int{2, 3} {
				got := run(&v, nt)
				for i := range want {
					if bitsOf(got[i]) != bitsOf(want[i]) {
						t.Fatalf("slabCols %d, %d goroutines, %v: C[%d] = %v, one goroutine %v", v.slabCols, nt, p, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// A group's candidate, applied to the fastest kernel so far, changes only
// the parameter its group varies: a later group keeps what an earlier one
// chose (mutation: adopt taking all of the candidate's blocks, as it once
// did, fails the split and packing rows), and a kernel of its own comes
// with its own derived blocks.
func TestTuneAdoptKeepsEarlierChoices(t *testing.T) {
	k32, k64 := derivedKernels()
	adoptKeeps(t, k32)
	adoptKeeps(t, k64)
}

func adoptKeeps[T float](t *testing.T, ks []kernel[T]) {
	def := ks[0]
	groups := candidates(ks)
	// as if the earlier groups had chosen half the row and column blocks,
	// the other packing of B and a split (sameParams compares them all)
	best := withRows(withNC(withMC(def, def.mc/2), def.nc/2), 8-def.rowsB)
	best.slabCols = 256
	for gi, group := range groups {
		for _, v := range group {
			got := adopt(best, v, def)
			if v.name != def.name {
				if !sameParams(got, v) {
					t.Errorf("group %d, kernel %s: adopted %s, want its own derived blocks %s", gi, v.name, blockName(&got), blockName(&v))
				}
				continue
			}
			want := best
			switch {
			case v.mc != def.mc:
				want = withMC(best, best.mc*v.mc/def.mc)
			case v.nc != def.nc:
				want = withNC(best, best.nc*v.nc/def.nc)
			case v.rowsB != def.rowsB:
				want.rowsB = v.rowsB
			case v.slabCols != def.slabCols:
				want.slabCols = v.slabCols
			case v.swapNT != def.swapNT:
				want.swapNT = v.swapNT
			}
			if !sameParams(got, want) {
				t.Errorf("group %d: %s (slab %d) from best %s (slab %d) and candidate %s (slab %d), want %s (slab %d)", gi,
					blockName(&got), got.slabCols, blockName(&best), best.slabCols, blockName(&v), v.slabCols, blockName(&want), want.slabCols)
			}
		}
	}
}

// The packing of B is also timed on a weight read from beyond the L2
// cache of every CPU seen (1–2 MiB): several weights of 4 KiB rows, 8 MiB
// or more in all, distinct from each other in the buffers Tune times on.
func TestTuneColdProducts(t *testing.T) {
	for _, es := range []int{4, 8} {
		ps := groupProducts(rowsGroup, es)
		cold := 0
		for _, p := range ps {
			if p.weights > 1 {
				cold++
				if p.n*es != 4096 || p.weights*p.k*p.n*es < 8<<20 || p.transB {
					t.Errorf("es %d: cold product %+v: want rows of 4 KiB, row-major, 8 MiB of weights or more", es, p)
				}
			}
		}
		if cold == 0 {
			t.Errorf("es %d: the packing group is timed on %+v, no weight from beyond the cache", es, ps)
		}
		for _, gi := range []int{0, 1, 2} {
			for _, p := range groupProducts(gi, es) {
				if p.weights > 1 {
					t.Errorf("es %d: group %d is timed on the cold product %+v", es, gi, p)
				}
			}
		}
	}
	var ps []tuneProduct
	ps = append(ps, coldProducts(4)...)
	b := tuneBuffers[float32](ps)
	if p := ps[0]; len(b[1]) < p.weights*p.k*p.n {
		t.Errorf("B buffer of %d elements for %d weights of %d", len(b[1]), p.weights, p.k*p.n)
	}
}

// The row block is timed on a product whose rows make more than one block
// of each candidate but the largest, and of the derived mc of every
// kernel here, so that the candidates differ in what they time (on the
// in-cache products alone they did not: 384 rows or fewer).
func TestTuneMCProducts(t *testing.T) {
	k32, k64 := derivedKernels()
	check := func(name string, es, mc int, cands []int) {
		ps := groupProducts(mcGroup, es)
		if len(ps) == 0 {
			t.Fatalf("%s: no products for the row-block group", name)
		}
		for _, m := range cands {
			for _, p := range ps {
				if blocks := (p.m + m - 1) / m; blocks < 1 || m < mc*2 && blocks < 2 {
					t.Errorf("%s: mc %d (derived %d): %d rows of %+v make %d block(s)", name, m, mc, p.m, p, blocks)
				}
			}
		}
	}
	for _, kn := range k32 {
		var ms []int
		for _, v := range candidates([]kernel[float32]{kn})[mcGroup] {
			ms = append(ms, v.mc)
		}
		check("f32 "+kn.name, 4, kn.mc, ms)
	}
	for _, kn := range k64 {
		var ms []int
		for _, v := range candidates([]kernel[float64]{kn})[mcGroup] {
			ms = append(ms, v.mc)
		}
		check("f64 "+kn.name, 8, kn.mc, ms)
	}
}

// The cache file: a profile written is read back for its CPU; another
// CPU's, a corrupt file, a file of another version and a missing file are
// errors (ProfileError; ErrForeign for the foreign CPU) and leave the
// parameters alone; writing keeps the other CPUs' profiles.
func TestProfileCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", cacheFile)
	p := CurrentProfile()
	other := p
	other.CPU = "some other CPU"
	other.F32.MC = 2 * other.F32.MC
	if err := writeProfiles(path, other, true); err != nil {
		t.Fatal(err)
	}
	if err := writeProfiles(path, p, true); err != nil {
		t.Fatal(err)
	}
	if got, err := readCache(path, p.CPU); err != nil || got != p {
		t.Fatalf("readCache = %+v, %v; want %+v", got, err, p)
	}
	if got, err := readCache(path, other.CPU); err != nil || got != other {
		t.Fatalf("the other CPU's profile: %+v, %v", got, err)
	}
	var pe *ProfileError
	if _, err := readCache(path, "a third CPU"); !errors.Is(err, ErrForeign) || !errors.As(err, &pe) {
		t.Errorf("foreign CPU: err = %v, want ErrForeign", err)
	}
	for name, content := range map[string]string{
		"corrupt":       `{"version": 1, "profiles": {`,
		"other version": `{"version": 99, "profiles": {}}`,
		"not json":      "\x00\x01garbage",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readCache(path, p.CPU); !errors.As(err, &pe) || errors.Is(err, ErrForeign) {
			t.Errorf("%s file: err = %v, want a ProfileError", name, err)
		}
	}
	// a signature that matches the key but not the profile's own field is foreign
	doc := `{"version": 1, "profiles": {"` + p.CPU + `": {"cpu": "else", "f32": {}, "f64": {}}}}`
	os.WriteFile(path, []byte(doc), 0o644)
	if _, err := readCache(path, p.CPU); !errors.Is(err, ErrForeign) {
		t.Errorf("mislabelled profile: err = %v, want ErrForeign", err)
	}
	if _, err := readCache(filepath.Join(dir, "none.json"), p.CPU); !errors.As(err, &pe) {
		t.Errorf("missing file: err = %v", err)
	}
}

// A profile is applied only when its kernel is available with this CPU's
// kc and its blocks fit the kernel's tile; a rejected one changes nothing.
func TestSetProfile(t *testing.T) {
	defer selectKernels()
	good := CurrentProfile()
	good.F32.MC = good.F32.MC / 2 / f32.mr * f32.mr
	if err := applyProfile(good); err != nil || f32.mc != good.F32.MC {
		t.Fatalf("applyProfile(%+v) = %v, mc %d", good, err, f32.mc)
	}
	before := CurrentProfile()
	for name, edit := range map[string]func(p *Profile){
		"kc":     func(p *Profile) { p.F32.KC = 192 },
		"kernel": func(p *Profile) { p.F64.Kernel = "sse9" },
		"mc":     func(p *Profile) { p.F32.MC = f32.mr + 1 },
		"nc":     func(p *Profile) { p.F64.NC = 0 },
		"rowsB":  func(p *Profile) { p.F32.RowsB = -1 },
	} {
		p := good
		edit(&p)
		var pe *ProfileError
		if err := applyProfile(p); !errors.As(err, &pe) {
			t.Errorf("%s: applyProfile = %v, want a ProfileError", name, err)
		}
		if CurrentProfile() != before {
			t.Errorf("%s: a rejected profile changed the parameters", name)
		}
	}
}

// ADJOINT_TUNE's modes: off; now (measures, caches: the cold-start cost is
// logged); cache (reads it back); a fixed profile's file; a file that
// cannot be applied (a note, the derived parameters); and the derived
// parameters in a test binary when unset.
func TestAutoTuneModes(t *testing.T) {
	defer selectKernels()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	derived := CurrentProfile()
	if n := autoTune("off"); n != "tune off" || CurrentProfile() != derived {
		t.Errorf("off: note %q", n)
	}
	if n := autoTune(""); n != "" || CurrentProfile() != derived {
		t.Errorf("unset in a test: note %q, profile %+v", n, CurrentProfile())
	}
	t0 := time.Now()
	n := autoTune("now")
	cold := time.Since(t0)
	if !strings.HasPrefix(n, "tuned now") {
		t.Fatalf("now: note %q", n)
	}
	tuned := CurrentProfile()
	t.Logf("cold start %v on %s: %+v", cold, isa.ThisCPU(), tuned)
	selectKernels()
	if n := autoTune("cache"); n != "tuned (cache)" || CurrentProfile() != tuned {
		t.Errorf("cache: note %q, profile %+v, want %+v", n, CurrentProfile(), tuned)
	}
	path, _ := CachePath()
	os.WriteFile(path, []byte("{corrupt"), 0o644)
	selectKernels()
	if n := autoTune("cache"); n != "" || CurrentProfile() != derived {
		t.Errorf("corrupt cache: note %q, profile %+v", n, CurrentProfile())
	}
	fixed := derived
	fixed.F64.MC = derived.F64.MC / 2 / f64.mr * f64.mr
	file := filepath.Join(t.TempDir(), "profile.json")
	b, _ := jsonIndent(fixed)
	os.WriteFile(file, b, 0o644)
	if n := autoTune(file); !strings.HasPrefix(n, "fixed profile") || CurrentProfile() != fixed {
		t.Errorf("fixed: note %q, profile %+v", n, CurrentProfile())
	}
	selectKernels()
	fixed.F32.KC = 100
	b, _ = jsonIndent(fixed)
	os.WriteFile(file, b, 0o644)
	if n := autoTune(file); !strings.Contains(n, "not used") || CurrentProfile() != derived {
		t.Errorf("fixed with another kc: note %q, profile %+v", n, CurrentProfile())
	}
	// a set of profiles (WriteProfile's format) with this CPU's among
	// others is used; one with only another CPU's is not
	fixed.F32.KC = derived.F32.KC
	foreign := fixed
	foreign.CPU, foreign.F64.MC = "another CPU", derived.F64.MC
	set := filepath.Join(t.TempDir(), "set.json")
	if err := WriteProfile(set, foreign); err != nil {
		t.Fatal(err)
	}
	if n := autoTune(set); !strings.Contains(n, "not used") || !strings.Contains(n, "another CPU") || CurrentProfile() != derived {
		t.Errorf("fixed set without this CPU: note %q, profile %+v", n, CurrentProfile())
	}
	if err := WriteProfile(set, fixed); err != nil {
		t.Fatal(err)
	}
	if n := autoTune(set); n != "fixed profile "+set || CurrentProfile() != fixed {
		t.Errorf("fixed set: note %q, profile %+v, want %+v", n, CurrentProfile(), fixed)
	}
}

// jsonIndent is a file of one profile, the format "adjoint tune -o" wrote
// before it wrote sets of profiles (LoadProfile still reads it).
func jsonIndent(p Profile) ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "\t")
	return append(b, '\n'), err
}

// A candidate no faster than the best is not taken because the second
// kernel of each round finds the operands in cache: with timings in
// which whichever runs second is 10 % faster, the two trials (opposite
// orders) cannot both favour it, while a candidate truly 10 % faster
// than that bias is taken.
func TestTuneFasterOrderBias(t *testing.T) {
	best, v := f32, f32
	v.mc++ // a distinct kernel value to tell them apart
	clock := func(speed map[*kernel[float32]]float64) func(*kernel[float32]) time.Duration {
		calls := 0
		return func(kn *kernel[float32]) time.Duration {
			calls++
			d := 1000.0 * speed[kn]
			if calls%2 == 0 { // the second of the round: warm operands
				d *= 0.9
			}
			return time.Duration(d * float64(time.Microsecond))
		}
	}
	equal := map[*kernel[float32]]float64{&best: 1, &v: 1}
	if faster(&v, &best, clock(equal), false) && faster(&v, &best, clock(equal), true) {
		t.Error("an equally fast candidate was taken on the order's bias")
	}
	quicker := map[*kernel[float32]]float64{&best: 1, &v: 0.8}
	if !(faster(&v, &best, clock(quicker), false) && faster(&v, &best, clock(quicker), true)) {
		t.Error("a candidate 20 % faster was not taken")
	}
}
