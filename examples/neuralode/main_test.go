package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The short form: 80 iterations (about a second; 20 under the race
// detector), the loss falling by at least 5× (3×), and the plot written
// where asked (a temporary directory).
func TestRun(t *testing.T) {
	var out bytes.Buffer
	png := filepath.Join(t.TempDir(), "fit.png")
	c := config{iters: 80, want: 5, out: png, seed: 1}
	if raceShort {
		c.iters, c.want = 20, 3
	}
	res, err := run(&out, c)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !(res.after*c.want <= res.before) {
		t.Errorf("loss %.4f → %.4f, want a fall of %g× or more", res.before, res.after, c.want)
	}
	for _, s := range []string{"batch loss", "whole-trajectory loss after training", "self-check passed"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("no %q in the output:\n%s", s, out.String())
		}
	}
	b, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%s is not a PNG file", png)
	}
}

// The self-check fails, with an error (main exits non-zero), when the loss
// does not fall by the factor asked for; bad flags are errors too.
func TestSelfCheckFails(t *testing.T) {
	var out bytes.Buffer
	_, err := run(&out, config{iters: 2, want: 1e6, seed: 1})
	if err == nil || !strings.Contains(err.Error(), "self-check failed") {
		t.Errorf("got %v, want a failed self-check\n%s", err, out.String())
	}
	if _, err := run(&out, config{iters: 0, want: 10}); err == nil {
		t.Error("-iters 0 accepted")
	}
	if _, err := run(&out, config{iters: 1, want: 1, out: filepath.Join(t.TempDir(), "fit.jpg"), seed: 1}); err == nil {
		t.Error("a .jpg plot path accepted")
	}
}
