package datasets

import (
	"bytes"
	"compress/gzip"
	"math"
	"strings"
	"testing"
)

func TestLoadBreastCancer(t *testing.T) {
	d, err := LoadBreastCancer()
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 569 || len(d.X) != 569*BreastCancerFeatures {
		t.Fatalf("%d rows, %d values; want 569, %d", d.Len(), len(d.X), 569*BreastCancerFeatures)
	}
	count := [2]int{}
	for _, c := range d.Y {
		count[c]++
	}
	if count != [2]int{212, 357} {
		t.Errorf("class counts %v, want [212 357]", count)
	}
	if d.Classes[0] != "malignant" || d.Classes[1] != "benign" {
		t.Errorf("classes %v", d.Classes)
	}
	// The first record of the file.
	r := d.Row(0)
	if r[0] != 17.99 || r[1] != 10.38 || r[29] != 0.1189 || d.Y[0] != 0 {
		t.Errorf("row 0 = %v, class %d", r, d.Y[0])
	}
	if again, _ := LoadBreastCancer(); again != d {
		t.Error("second load decoded the file again")
	}

	s := d.Standardized()
	for j := 0; j < BreastCancerFeatures; j++ {
		var mean, sq float64
		for i := 0; i < s.Len(); i++ {
			mean += s.Row(i)[j]
		}
		mean /= float64(s.Len())
		for i := 0; i < s.Len(); i++ {
			sq += (s.Row(i)[j] - mean) * (s.Row(i)[j] - mean)
		}
		if sd := math.Sqrt(sq / float64(s.Len())); math.Abs(mean) > 1e-12 || math.Abs(sd-1) > 1e-12 {
			t.Errorf("standardized feature %d: mean %g, sd %g", j, mean, sd)
		}
	}
	if d.X[0] != 17.99 {
		t.Error("Standardized modified the shared data")
	}
}

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestParseBreastCancerErrors(t *testing.T) {
	row := strings.Repeat("1.5,", BreastCancerFeatures)
	for _, c := range []struct {
		name, file, want string
	}{
		{"not gzip", "", "gzip"},
		{"empty", "\x00", "empty file"},
		{"short header", "1,30\n", "line 1: header has 2 fields"},
		{"bad header", "x,30,a,b\n", "line 1: header"},
		{"features", "1,29,a,b\n", "line 1: header says 29 features"},
		{"fields", "1,30,a,b\n1,2,3\n", "line 2: 3 fields, want 31"},
		{"number", "1,30,a,b\n" + strings.Replace(row, "1.5", "abc", 1) + "0\n", "line 2 field 1: \"abc\""},
		{"NaN", "1,30,a,b\n" + strings.Replace(row, "1.5", "NaN", 1) + "0\n", "line 2 field 1"},
		{"class", "1,30,a,b\n" + row + "2\n", "line 2 field 31: class \"2\""},
		{"rows", "2,30,a,b\n" + row + "1\n", "1 rows, header says 2"},
	} {
		data := gz(c.file)
		if c.name == "not gzip" {
			data = []byte("plain text")
		}
		if c.name == "empty" {
			data = gz("")
		}
		_, err := parseBreastCancer(data)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "datasets: breast cancer: ") {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
	d, err := parseBreastCancer(gz("1,30,a,b\n" + row + "1\n"))
	if err != nil || d.Len() != 1 || d.Row(0)[29] != 1.5 {
		t.Errorf("one-row file: %v, %v", d, err)
	}
}
