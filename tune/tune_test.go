package tune_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tune"
)

// halfMC is this CPU's derived profile with the float32 row block halved
// (still a multiple of the register tile): a profile that differs from the
// derived one and that this CPU can use.
func halfMC(t *testing.T) tune.Profile {
	t.Helper()
	p := tune.Derived()
	tile := map[string]int{"avx512": 12, "avx2": 6}[p.F32.Kernel]
	if tile == 0 {
		tile = p.F32.MC // the portable kernel: keep its block, change the slab instead
		p.F32.SlabCols = 1024
	}
	p.F32.MC = max(p.F32.MC/2/tile*tile, tile)
	if p == tune.Derived() {
		t.Fatalf("could not make a profile other than the derived one from %+v", p)
	}
	return p
}

// wantErr fails unless err is a *tune.Error of the given kind whose text
// contains every one of parts.
func wantErr(t *testing.T, what string, err, kind error, parts ...string) {
	t.Helper()
	var te *tune.Error
	if !errors.Is(err, kind) || !errors.As(err, &te) || !errs.Module(err) {
		t.Errorf("%s: err = %v, want a *tune.Error of kind %v", what, err, kind)
		return
	}
	for _, s := range parts {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: %q does not name %q", what, err, s)
		}
	}
}

// The round trip: a profile saved is loaded back equal, used, and reported
// by Current with its source; Off goes back to the derived parameters.
func TestSaveLoadUse(t *testing.T) {
	defer tune.Off()
	path := filepath.Join(t.TempDir(), "sub", "profiles.json")
	p := halfMC(t)
	if err := tune.Save(path, p); err != nil {
		t.Fatal(err)
	}
	got, err := tune.Load(path)
	if err != nil || got != p {
		t.Fatalf("Load = %+v, %v; want %+v", got, err, p)
	}
	if err := tune.Use(got); err != nil {
		t.Fatal(err)
	}
	if cur, src := tune.Current(); cur != p || src != "tune.Use" {
		t.Errorf("after Use: Current = %+v, %q; want %+v, \"tune.Use\"", cur, src, p)
	}
	anyCPU := p
	anyCPU.CPU = ""
	if err := tune.Use(anyCPU); err != nil {
		t.Errorf("Use of a profile for any CPU: %v", err)
	}
	if cur, _ := tune.Current(); cur != p {
		t.Errorf("after Use of a profile for any CPU: Current = %+v, want %+v (this CPU's signature, its parameters)", cur, p)
	}
	tune.Off()
	if cur, src := tune.Current(); cur != tune.Derived() || !strings.Contains(src, "tune off") {
		t.Errorf("after Off: Current = %+v, %q; want the derived profile, tune off", cur, src)
	}
	if p.CPU != tune.Signature() {
		t.Errorf("Derived's CPU %q, Signature %q", p.CPU, tune.Signature())
	}
}

// A profile file keeps the profiles of several CPUs: Load picks this CPU's,
// else the one for any CPU, else reports the file's CPUs as foreign.
func TestLoadPicksThisCPU(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profiles.json")
	mine := halfMC(t)
	other := mine
	other.CPU = "amd64 GenuineIntel family 6 model 207 stepping 2 best avx512 use avx512 L1d 48K/12w L2 2048K L3 4096K"
	other.F64.NC *= 2
	if err := tune.Save(path, other); err != nil {
		t.Fatal(err)
	}
	_, err := tune.Load(path)
	wantErr(t, "a file of another CPU only", err, tune.ErrForeign, path, "family 6 model 207", tune.Signature(), "adjoint tune -o")

	anyCPU := tune.Derived()
	anyCPU.CPU = ""
	if err := tune.Save(path, anyCPU); err != nil {
		t.Fatal(err)
	}
	if got, err := tune.Load(path); err != nil || got != anyCPU {
		t.Errorf("with a profile for any CPU: Load = %+v, %v; want %+v", got, err, anyCPU)
	}
	if err := tune.Save(path, mine); err != nil {
		t.Fatal(err)
	}
	if got, err := tune.Load(path); err != nil || got != mine {
		t.Errorf("with this CPU's profile: Load = %+v, %v; want %+v", got, err, mine)
	}
	b, _ := os.ReadFile(path)
	for _, cpu := range []string{other.CPU, mine.CPU} {
		if !bytes.Contains(b, []byte(cpu)) {
			t.Errorf("Save dropped the profile of %q:\n%s", cpu, b)
		}
	}
	if got, err := tune.Parse(b); err != nil || got != mine {
		t.Errorf("Parse = %+v, %v; want %+v", got, err, mine)
	}
}

// Misuse: a profile for another CPU, parameters out of range or that
// would change results, a kernel this CPU lacks. Each is a typed error
// that names the problem, and changes nothing.
func TestUseRefuses(t *testing.T) {
	defer tune.Off()
	good := halfMC(t)
	if err := tune.Use(good); err != nil {
		t.Fatal(err)
	}
	foreign := good
	foreign.CPU = "arm64 unknown CPU best generic use generic"
	wantErr(t, "another CPU", tune.Use(foreign), tune.ErrForeign, foreign.CPU, tune.Signature())

	for _, c := range []struct {
		name  string
		edit  func(p *tune.Profile)
		parts []string
	}{
		{"kc", func(p *tune.Profile) { p.F32.KC = p.F32.KC / 2 }, []string{"f32: kc", "results would differ"}},
		{"kernel", func(p *tune.Profile) { p.F64.Kernel = "sse9" }, []string{`f64: kernel "sse9"`, "these are"}},
		{"no kernel", func(p *tune.Profile) { p.F64 = tune.Params{} }, []string{"f64"}},
		{"mc not a multiple", func(p *tune.Profile) { p.F32.MC++ }, []string{"f32: blocks", "multiple"}},
		{"mc 0", func(p *tune.Profile) { p.F32.MC = 0 }, []string{"mc 0"}},
		{"mc huge", func(p *tune.Profile) { p.F32.MC = 1 << 20 }, []string{"out of range"}},
		{"nc negative", func(p *tune.Profile) { p.F64.NC = -p.F64.NC }, []string{"f64: blocks"}},
		{"rowsB", func(p *tune.Profile) { p.F32.RowsB = 257 }, []string{"rowsB 257"}},
		{"slab", func(p *tune.Profile) { p.F64.SlabCols = -1 }, []string{"slabCols -1"}},
	} {
		p := good
		c.edit(&p)
		wantErr(t, c.name, tune.Use(p), tune.ErrParams, c.parts...)
		// Save checks as Use does for this CPU's profile...
		path := filepath.Join(t.TempDir(), "p.json")
		wantErr(t, c.name+" (Save)", tune.Save(path, p), tune.ErrParams)
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: Save of a refused profile wrote %s", c.name, path)
		}
	}
	if cur, src := tune.Current(); cur != good || src != "tune.Use" {
		t.Errorf("refused profiles changed the parameters: %+v (%s), want %+v", cur, src, good)
	}
	// ... and only what holds on every CPU for another CPU's.
	path := filepath.Join(t.TempDir(), "p.json")
	odd := foreign
	odd.F32.Kernel = "neon"
	if err := tune.Save(path, odd); err != nil {
		t.Errorf("Save of another CPU's plausible profile: %v", err)
	}
	odd.F32.MC = 0
	wantErr(t, "another CPU's mc 0 (Save)", tune.Save(path, odd), tune.ErrParams, "mc 0")
}

// Files that are not profile files: Load says so (ErrCorrupt, the file
// system's error kept), and Save will not overwrite them.
func TestCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	_, err := tune.Load(filepath.Join(dir, "missing.json"))
	wantErr(t, "missing file", err, tune.ErrCorrupt, "missing.json", "unreadable")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v does not wrap fs.ErrNotExist", err)
	}
	for name, content := range map[string]string{
		"truncated":     `{"version": 1, "profiles": {`,
		"not JSON":      "\x00\x01garbage",
		"an array":      `[1, 2]`,
		"empty":         ``,
		"other version": `{"version": 99, "profiles": {}}`,
		"unknown field": `{"version": 1, "profiles": {}, "extra": true}`,
		"misspelt":      `{"cpu": "", "f32": {"kernel": "avx2", "kc": 256, "mcc": 60}, "f64": {}}`,
		"wrong type":    `{"version": 1, "profiles": {"x": {"cpu": 3}}}`,
		"null":          `null`,
		"no fields":     `{}`,
		"no f64":        `{"cpu": "", "f32": {"kernel": "go"}}`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := tune.Load(path)
		wantErr(t, name, err, tune.ErrCorrupt, path)
		_, err = tune.Parse([]byte(content))
		wantErr(t, name+" (Parse)", err, tune.ErrCorrupt)
		wantErr(t, name+" (Save over it)", tune.Save(path, tune.Derived()), tune.ErrCorrupt, "not overwritten")
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Errorf("%s: Save overwrote a file that is not a profile file", name)
		}
	}
	// a directory where the file should be
	wantErr(t, "a directory", tune.Save(dir, tune.Derived()), tune.ErrCorrupt, dir)
}

// A profile filed under another signature than its own is foreign, not
// this CPU's.
func TestMislabelledProfile(t *testing.T) {
	doc := `{"version": 1, "profiles": {"` + tune.Signature() + `": {"cpu": "else", "f32": {}, "f64": {}}}}`
	_, err := tune.Parse([]byte(doc))
	wantErr(t, "mislabelled", err, tune.ErrForeign)
}

// FuzzParse: any bytes are a profile or a typed error, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version": 1, "profiles": {"": {"cpu": "", "f32": {"kernel": "go", "kc": 256, "mc": 64, "nc": 512, "rowsB": 0}, "f64": {}}}}`))
	f.Add([]byte(`{"cpu": "x", "f32": {}, "f64": {}}`))
	f.Add([]byte(`{"version": 1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := tune.Parse(b)
		if err != nil {
			var te *tune.Error
			if !errors.As(err, &te) {
				t.Fatalf("Parse(%q): untyped error %v", b, err)
			}
			return
		}
		if p.CPU != "" && p.CPU != tune.Signature() {
			t.Fatalf("Parse(%q) = a profile for %q on %q", b, p.CPU, tune.Signature())
		}
	})
}
