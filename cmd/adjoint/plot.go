package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/adjointgo/adjoint/internal/atomicfile"
)

// plotHistory draws the training loss and the train/test accuracy per epoch
// side by side into a PNG file.
func plotHistory(path string, h []epochStats) error {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".png" {
		return fmt.Errorf("%s: want a .png file name", path)
	}
	lp, ap, err := historyPlots(h)
	if err != nil {
		return err
	}
	const w, ht = 10 * vg.Inch, 4 * vg.Inch
	img := vgimg.New(w, ht)
	dc := draw.New(img)
	// Room on the outer edges too, so that the last tick label and the
	// legend stay inside the image.
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 8, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 6}
	canvases := plot.Align([][]*plot.Plot{{lp, ap}}, tiles, dc)
	lp.Draw(canvases[0][0])
	ap.Draw(canvases[0][1])
	png := vgimg.PngCanvas{Canvas: img}
	// through the one atomic writer: on a full disk, an existing PNG stays
	// whole (writing in place truncated it)
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := png.WriteTo(w)
		return err
	})
}

// historyPlots builds the two panels of plotHistory: the loss on a log
// scale and the accuracies, each with at least three labelled ticks, the
// data kept off the frame by a margin, and the legend inside the panel.
func historyPlots(h []epochStats) (lp, ap *plot.Plot, err error) {
	if len(h) == 0 {
		return nil, nil, fmt.Errorf("no epochs to plot")
	}
	loss := make(plotter.XYs, len(h))
	train := make(plotter.XYs, len(h))
	test := make(plotter.XYs, len(h))
	for i, s := range h {
		x := float64(s.Epoch)
		loss[i] = plotter.XY{X: x, Y: s.Loss}
		train[i] = plotter.XY{X: x, Y: s.TrainAcc}
		test[i] = plotter.XY{X: x, Y: s.TestAcc}
	}

	lp = plot.New()
	lp.Title.Text = "training loss"
	lp.X.Label.Text = "epoch"
	lp.Y.Label.Text = "cross-entropy"
	lp.Y.Scale = plot.LogScale{}
	lp.Y.Tick.Marker = logTicks{}
	lp.X.Tick.Marker = niceTicks{}
	ll, err := plotter.NewLine(loss)
	if err != nil {
		return nil, nil, err
	}
	ll.Color = plotter.DefaultLineStyle.Color
	lp.Add(ll, plotter.NewGrid())
	margin(&lp.X, false)
	margin(&lp.Y, true)

	ap = plot.New()
	ap.Title.Text = "accuracy"
	ap.X.Label.Text = "epoch"
	ap.Y.Label.Text = "fraction correct"
	ap.X.Tick.Marker = niceTicks{}
	ap.Y.Tick.Marker = niceTicks{}
	tl, err := plotter.NewLine(train)
	if err != nil {
		return nil, nil, err
	}
	vl, err := plotter.NewLine(test)
	if err != nil {
		return nil, nil, err
	}
	tl.Color = plotColor(0)
	vl.Color = plotColor(1)
	vl.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	ap.Add(tl, vl, plotter.NewGrid())
	ap.Legend.Add("train", tl)
	ap.Legend.Add("test", vl)
	ap.Legend.Top = false // bottom right, below the curves, inside the frame
	ap.Legend.XOffs = -vg.Millimeter * 3
	ap.Legend.YOffs = vg.Millimeter * 3
	margin(&ap.X, false)
	margin(&ap.Y, false)
	return lp, ap, nil
}

// margin widens an axis's range by 5 % of it on each side (by a factor on
// a log axis), so that no data point lies on the frame.
func margin(a *plot.Axis, log bool) {
	if log {
		if a.Min > 0 && a.Max > 0 {
			f := math.Pow(a.Max/a.Min, 0.05)
			f = max(f, 1.05)
			a.Min, a.Max = a.Min/f, a.Max*f
		}
		return
	}
	d := 0.05 * (a.Max - a.Min)
	if d == 0 {
		d = 0.05 * max(math.Abs(a.Max), 1)
	}
	a.Min, a.Max = a.Min-d, a.Max+d
}

// niceTicks labels a linear axis at multiples of 1, 2 or 5 × 10ᵏ, the
// step chosen so that 4 to 10 labels fall in the range, with unlabelled
// minor ticks between them.
type niceTicks struct{}

// Ticks implements plot.Ticker.
func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	step := 0.0
	for e := math.Floor(math.Log10(hi-lo)) - 1; step == 0; e++ {
		for _, m := range []float64{1, 2, 5} {
			s := m * math.Pow(10, e)
			if (hi-lo)/s <= 10 {
				step = s
				break
			}
		}
	}
	var ticks []plot.Tick
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	for k := math.Ceil(lo / step); k*step <= hi+1e-9*step; k++ {
		v := k * step
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		if m := v + step/2; m < hi {
			ticks = append(ticks, plot.Tick{Value: m})
		}
	}
	return ticks
}

// logTicks labels a log axis at 1, 2 and 5 × 10ᵏ, or at every digit when
// the range holds fewer than three of those, with minor ticks at the other
// digits.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	var all []float64
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for d := 1.0; d <= 9; d++ {
			if v := d * math.Pow(10, e); v >= lo && v <= hi {
				all = append(all, v)
			}
		}
	}
	major := func(v float64) bool {
		d := v / math.Pow(10, math.Floor(math.Log10(v)+1e-9))
		return math.Abs(d-1) < 1e-9 || math.Abs(d-2) < 1e-9 || math.Abs(d-5) < 1e-9
	}
	n := 0
	for _, v := range all {
		if major(v) {
			n++
		}
	}
	ticks := make([]plot.Tick, len(all))
	for i, v := range all {
		ticks[i].Value = v
		if n < 3 || major(v) {
			ticks[i].Label = strconv.FormatFloat(v, 'g', 3, 64)
		}
	}
	return ticks
}

func plotColor(i int) color.Color { return plotutil.Color(i) }
