package main

import (
	"bytes"
	"strings"
	"testing"
)

// On a terminal the bar of the run's progress stays visible below each
// epoch's line, also when the epochs are shorter than the redraw interval
// (the default MLP's: the bar was drawn and erased within each epoch, so
// it never showed), and the last epoch leaves no bar behind.
func TestProgressBarShowsBetweenShortEpochs(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, tty: true, epochs: 3}
	for e := 1; e <= 3; e++ {
		for k := 1; k <= 4; k++ { // four batches in far less than 50 ms
			p.batch(e, k, 4, 0.5)
		}
		p.epoch(epochStats{Epoch: e, Loss: 0.5, TrainAcc: 0.9, TestAcc: 0.8})
		out := b.String()
		tail := out[strings.LastIndex(out, "\n")+1:]
		switch {
		case e < 3 && !strings.Contains(tail, "["+strings.Repeat("=", 8*e)+strings.Repeat(" ", 24-8*e)+"]"):
			t.Fatalf("after epoch %d of 3 the last line is %q, want a bar %d/24 full", e, tail, 8*e)
		case e == 3 && tail != "":
			t.Fatalf("after the last epoch a bar is left: %q", tail)
		}
	}
	if n := strings.Count(b.String(), "\n"); n != 3 {
		t.Errorf("%d lines for 3 epochs:\n%s", n, b.String())
	}
	// Not a terminal: the epoch lines alone.
	b.Reset()
	p = &progress{w: &b, epochs: 2}
	p.batch(1, 4, 4, 0.5)
	p.epoch(epochStats{Epoch: 1})
	if strings.Contains(b.String(), "[") || strings.Contains(b.String(), "\r") {
		t.Errorf("a bar without a terminal: %q", b.String())
	}
}
