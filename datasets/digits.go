package datasets

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/adjointgo/adjoint/tensor"
)

//go:embed data/digits.csv.gz
var digitsCSV []byte

// Digits holds the optical-recognition-of-handwritten-digits data set (UCI,
// CC BY 4.0; see data/README.md): 1,797 grey-scale 8×8 images of the digits
// 0 to 9, embedded in the binary.
type Digits struct {
	// X holds one image per row, shape [N 64], float32, row-major pixels
	// scaled from 0..16 to 0..1.
	X *tensor.Tensor
	// Y holds the label (0..9) of each row.
	Y []int
}

// DigitsClasses is the number of classes of the digits data set.
const DigitsClasses = 10

// DigitsFeatures is the number of pixels of a digits image.
const DigitsFeatures = 64

var digitsOnce struct {
	sync.Once
	d   *Digits
	err error
}

// LoadDigits returns the digits data set, decoded once from the embedded
// file. The caller must not modify the result; use Subset for a private copy.
func LoadDigits() (*Digits, error) {
	digitsOnce.Do(func() { digitsOnce.d, digitsOnce.err = parseDigits(digitsCSV) })
	return digitsOnce.d, digitsOnce.err
}

func parseDigits(gz []byte) (*Digits, error) {
	bad := func(format string, args ...any) error {
		return &Error{Op: "digits", Err: ErrFormat, Msg: fmt.Sprintf(format, args...)}
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, bad("decompressing the embedded file: %v", err)
	}
	r := csv.NewReader(zr)
	r.FieldsPerRecord = DigitsFeatures + 1
	r.ReuseRecord = true
	var x []float32
	var y []int
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, bad("%v", err)
		}
		for j, f := range rec {
			v, err := strconv.Atoi(f)
			if err != nil {
				return nil, bad("line %d field %d: %v", line, j+1, err)
			}
			if j == DigitsFeatures {
				if v < 0 || v >= DigitsClasses {
					return nil, bad("line %d: label %d out of range 0..9", line, v)
				}
				y = append(y, v)
				continue
			}
			if v < 0 || v > 16 {
				return nil, bad("line %d field %d: pixel %d out of range 0..16", line, j+1, v)
			}
			x = append(x, float32(v)/16)
		}
	}
	return &Digits{X: tensor.FromFloat32(x, len(y), DigitsFeatures), Y: y}, nil
}

// Len returns the number of images.
func (d *Digits) Len() int { return len(d.Y) }

// Subset returns a copy of the rows idx, in that order.
func (d *Digits) Subset(idx []int) *Digits {
	return &Digits{X: GatherRows(nil, d.X, idx), Y: GatherInts(nil, d.Y, idx)}
}

// Split divides the data set into a training and a test part with
// SplitIndices(d.Len(), testFrac, seed): the same seed gives the same split.
func (d *Digits) Split(testFrac float64, seed uint64) (train, test *Digits) {
	tr, te := SplitIndices(d.Len(), testFrac, seed)
	return d.Subset(tr), d.Subset(te)
}
