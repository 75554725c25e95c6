package main

import (
	"fmt"
	"gonum.org/v1/plot/plotutil"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"github.com/adjointgo/adjoint/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotHistory draws the training loss and the train/test accuracy per epoch
// side by side into a PNG file.
func plotHistory(path string, h []epochStats) error {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".png" {
		return fmt.Errorf("%s: want a .png file name", path)
	}
	if len(h) == 0 {
		return fmt.Errorf("no epochs to plot")
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

	lp := plot.New()
	lp.Title.Text = "training loss"
	lp.X.Label.Text = "epoch"
	lp.Y.Label.Text = "cross-entropy"
	lp.Y.Scale = plot.LogScale{}
	lp.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	ll, err := plotter.NewLine(loss)
	if err != nil {
		return err
	}
	ll.Color = plotter.DefaultLineStyle.Color
	lp.Add(ll, plotter.NewGrid())

	ap := plot.New()
	ap.Title.Text = "accuracy"
	ap.X.Label.Text = "epoch"
	ap.Y.Label.Text = "fraction correct"
	tl, err := plotter.NewLine(train)
	if err != nil {
		return err
	}
	vl, err := plotter.NewLine(test)
	if err != nil {
		return err
	}
	tl.Color = plotColor(0)
	vl.Color = plotColor(1)
	vl.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	ap.Add(tl, vl, plotter.NewGrid())
	ap.Legend.Add("train", tl)
	ap.Legend.Add("test", vl)
	ap.Legend.Top = false // bottom right, below the curves

	const w, ht = 10 * vg.Inch, 4 * vg.Inch
	img := vgimg.New(w, ht)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2}
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

func plotColor(i int) color.Color { return plotutil.Color(i) }
