package ad_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Under anomaly detection a ModifiedError names the line that saved the
// tensor and the line that wrote it in place afterwards.
func TestModifiedErrorNamesTheWrite(t *testing.T) {
	w := ad.Var(tensor.FromFloat64([]float64{1, 2, 3}, 3))
	x := ad.DetectAnomaly(ad.Var(tensor.FromFloat64([]float64{4, 5, 6}, 3)))
	y := ad.Sum(ad.Mul(x, w)) // mul saves w (for x's gradient)
	_, _, line, _ := runtime.Caller(0)
	w.Tensor().Set(10, 1) // the write, one line below
	err := y.Backward()
	var me *ad.ModifiedError
	if !errors.As(err, &me) {
		t.Fatalf("Backward after the write: %v", err)
	}
	want := "modified_site_test.go:" + itoa(line+1)
	if !strings.HasSuffix(me.ModifiedAt, want) || !strings.Contains(err.Error(), want) {
		t.Fatalf("ModifiedAt %q, error %q: want the write's line %s", me.ModifiedAt, err, want)
	}
	if !strings.Contains(me.Site, "modified_site_test.go:"+itoa(line-1)) {
		t.Fatalf("Site %q: want the mul's line %d", me.Site, line-1)
	}
	// Without anomaly detection nothing is tracked.
	w2 := ad.Var(tensor.FromFloat64([]float64{1, 2, 3}, 3))
	y2 := ad.Sum(ad.Mul(ad.Var(tensor.FromFloat64([]float64{4, 5, 6}, 3)), w2))
	w2.Tensor().Set(10, 1)
	if err := y2.Backward(); !errors.As(err, &me) || me.ModifiedAt != "" || me.Site != "" {
		t.Fatalf("without anomaly detection: %v (%+v)", err, me)
	}
}

func itoa(n int) string {
	s := ""
	for n > 0 || s == "" {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}
