package tensor

import (
	"runtime"
	"testing"
)

// With TrackWrites, the last in-place write through the tensor or a view of
// it is recorded with its call stack; without it, nothing is.
func TestTrackWrites(t *testing.T) {
	x := New(Float64, 2, 3)
	x.Set(1, 0, 0)
	if x.LastWrite() != nil {
		t.Fatal("writes recorded without TrackWrites")
	}
	x.TrackWrites()
	v := x.Reshape(6)
	_, _, line, _ := runtime.Caller(0)
	v.SetFlat(4, 2) // through a view, one line below
	pcs := x.LastWrite()
	if pcs == nil {
		t.Fatal("no write recorded")
	}
	found := false
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Line == line+1 {
			found = true
		}
		if !more {
			break
		}
	}
	if !found {
		t.Fatalf("the write's line %d is not in the recorded stack", line+1)
	}
}
