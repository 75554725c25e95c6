package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

//go:embed data/breast_cancer.csv.gz
var breastCancerCSV []byte

// BreastCancerFeatures is the number of features of the breast-cancer data
// set.
const BreastCancerFeatures = 30

// BreastCancer holds the Wisconsin diagnostic breast-cancer data set (UCI,
// CC BY 4.0; see data/README.md): 569 tumours described by 30 real-valued
// features, each labelled malignant (0) or benign (1). It is the classic
// real data for logistic regression.
type BreastCancer struct {
	// X holds one row of BreastCancerFeatures values per tumour,
	// row-major, in float64.
	X []float64
	// Y holds the class of each row: 0 = malignant, 1 = benign.
	Y []int
	// Classes names the classes: {"malignant", "benign"}.
	Classes []string
}

var breastCancerOnce struct {
	sync.Once
	d   *BreastCancer
	err error
}

// LoadBreastCancer returns the breast-cancer data set, decoded once from the
// embedded file. The caller must not modify the result; use
// [BreastCancer.Standardized] or copy it.
func LoadBreastCancer() (*BreastCancer, error) {
	breastCancerOnce.Do(func() {
		breastCancerOnce.d, breastCancerOnce.err = parseBreastCancer(breastCancerCSV)
	})
	return breastCancerOnce.d, breastCancerOnce.err
}

// parseBreastCancer decodes the gzipped CSV: a header "rows,features,class0,
// class1" and then rows of features followed by the class.
func parseBreastCancer(gz []byte) (*BreastCancer, error) {
	bad := func(format string, args ...any) error {
		return &Error{Op: "breast cancer", Err: ErrFormat, Msg: fmt.Sprintf(format, args...)}
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, bad("decompressing the embedded file: %v", err)
	}
	sc := bufio.NewScanner(zr)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, bad("%v", err)
		}
		return nil, bad("empty file")
	}
	head := strings.Split(strings.TrimSpace(sc.Text()), ",")
	if len(head) != 4 {
		return nil, bad("line 1: header has %d fields, want 4 (rows, features, two class names)", len(head))
	}
	rows, err1 := strconv.Atoi(head[0])
	feats, err2 := strconv.Atoi(head[1])
	if err1 != nil || err2 != nil || rows < 0 {
		return nil, bad("line 1: header %q: rows and features must be integers", sc.Text())
	}
	if feats != BreastCancerFeatures {
		return nil, bad("line 1: header says %d features, want %d", feats, BreastCancerFeatures)
	}
	d := &BreastCancer{
		X:       make([]float64, 0, rows*feats),
		Y:       make([]int, 0, rows),
		Classes: []string{head[2], head[3]},
	}
	line := 1
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		fields := strings.Split(text, ",")
		if len(fields) != feats+1 {
			return nil, bad("line %d: %d fields, want %d", line, len(fields), feats+1)
		}
		for j, f := range fields[:feats] {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, bad("line %d field %d: %q is not a finite number", line, j+1, f)
			}
			d.X = append(d.X, v)
		}
		c, err := strconv.Atoi(fields[feats])
		if err != nil || c < 0 || c > 1 {
			return nil, bad("line %d field %d: class %q, want 0 or 1", line, feats+1, fields[feats])
		}
		d.Y = append(d.Y, c)
	}
	if err := sc.Err(); err != nil {
		return nil, bad("line %d: %v", line+1, err)
	}
	if len(d.Y) != rows {
		return nil, bad("%d rows, header says %d", len(d.Y), rows)
	}
	return d, nil
}

// Len returns the number of rows.
func (d *BreastCancer) Len() int { return len(d.Y) }

// Row returns the features of row i (a view into X).
func (d *BreastCancer) Row(i int) []float64 {
	return d.X[i*BreastCancerFeatures : (i+1)*BreastCancerFeatures : (i+1)*BreastCancerFeatures]
}

// Standardized returns a copy whose features have mean 0 and standard
// deviation 1 over the rows (features that are constant are only centred).
// Logistic regression converges much faster on standardised features.
func (d *BreastCancer) Standardized() *BreastCancer {
	n := d.Len()
	s := &BreastCancer{
		X:       make([]float64, len(d.X)),
		Y:       append([]int(nil), d.Y...),
		Classes: append([]string(nil), d.Classes...),
	}
	if n == 0 {
		return s
	}
	for j := 0; j < BreastCancerFeatures; j++ {
		var mean, sq float64
		for i := 0; i < n; i++ {
			mean += d.X[i*BreastCancerFeatures+j]
		}
		mean /= float64(n)
		for i := 0; i < n; i++ {
			c := d.X[i*BreastCancerFeatures+j] - mean
			sq += c * c
		}
		sd := math.Sqrt(sq / float64(n))
		if sd == 0 {
			sd = 1
		}
		for i := 0; i < n; i++ {
			s.X[i*BreastCancerFeatures+j] = (d.X[i*BreastCancerFeatures+j] - mean) / sd
		}
	}
	return s
}
