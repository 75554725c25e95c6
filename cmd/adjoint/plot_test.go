package main

import (
	"math"
	"testing"

	"gonum.org/v1/plot"
)

func labelled(ts []plot.Tick) []float64 {
	var out []float64
	for _, t := range ts {
		if t.Label != "" {
			out = append(out, t.Value)
		}
	}
	return out
}

// The panels of the training plot: at least three labelled ticks on every
// axis (the accuracy panel had two, the loss panel one), the data off the
// frame, the legend inside it.
func TestHistoryPlots(t *testing.T) {
	var h []epochStats
	for e := 1; e <= 30; e++ {
		f := float64(e)
		h = append(h, epochStats{Epoch: e, Loss: 0.9 * math.Pow(f, -1.3), TrainAcc: 1 - 0.27/f, TestAcc: 0.975 - 0.04/f})
	}
	lp, ap, err := historyPlots(h)
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]*plot.Axis{"loss x": &lp.X, "loss y": &lp.Y, "accuracy x": &ap.X, "accuracy y": &ap.Y} {
		ls := labelled(a.Tick.Marker.Ticks(a.Min, a.Max))
		if len(ls) < 3 {
			t.Errorf("%s: labelled ticks %v in [%g, %g], want at least 3", name, ls, a.Min, a.Max)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range h {
		lo, hi = min(lo, s.TrainAcc, s.TestAcc), max(hi, s.TrainAcc, s.TestAcc)
	}
	if !(ap.Y.Min < lo && ap.Y.Max > hi && ap.X.Min < 1 && ap.X.Max > 30) {
		t.Errorf("accuracy axes [%g, %g] × [%g, %g] touch the data's [1, 30] × [%g, %g]", ap.X.Min, ap.X.Max, ap.Y.Min, ap.Y.Max, lo, hi)
	}
	if !(lp.Y.Min < h[29].Loss && lp.Y.Max > h[0].Loss) {
		t.Errorf("loss axis [%g, %g] touches the data [%g, %g]", lp.Y.Min, lp.Y.Max, h[29].Loss, h[0].Loss)
	}
	if ap.Legend.XOffs >= 0 || ap.Legend.YOffs <= 0 {
		t.Errorf("legend offsets %v, %v: not pulled inside the bottom-right corner", ap.Legend.XOffs, ap.Legend.YOffs)
	}
	// The tickers on ranges of their own: 1-2-5 steps, every digit on a
	// narrow log range.
	if got := labelled(niceTicks{}.Ticks(0.73, 0.99)); len(got) != 5 || math.Abs(got[0]-0.75) > 1e-12 || math.Abs(got[4]-0.95) > 1e-12 {
		t.Errorf("niceTicks(0.73, 0.99) labels %v, want 0.75 … 0.95 by 0.05", got)
	}
	if got := labelled(logTicks{}.Ticks(0.03, 0.08)); len(got) != 6 {
		t.Errorf("logTicks(0.03, 0.08) labels %v, want every digit 0.03 … 0.08", got)
	}
}
