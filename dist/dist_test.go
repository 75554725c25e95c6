package dist

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/adjointgo/adjoint/tensor"
)

// The tests hold for any number of ranks: run them alone (a world of one)
// and under mpirun with the mpi tag:
//
//	go test -c -tags mpi -o /tmp/dist.test ./dist
//	mpirun -np 2 /tmp/dist.test
//
// Each rank checks the results it sees.

var world *World

func TestMain(m *testing.M) {
	w, err := Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	world = w
	code := m.Run()
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	// MPI starts once per process: after Close, Init and the collectives
	// are refused.
	if _, err := Init(); !errors.Is(err, ErrClosed) {
		fmt.Fprintln(os.Stderr, "Init after Close:", err)
		code = 1
	}
	if err := w.Barrier(); !errors.Is(err, ErrClosed) {
		fmt.Fprintln(os.Stderr, "Barrier after Close:", err)
		code = 1
	}
	os.Exit(code)
}

// filled returns a tensor of n elements whose element i on rank r is
// r + 1 + i/2 (exact in float32 and float64 for the sizes used).
func filled(d tensor.DType, n, r int) *tensor.Tensor {
	t := tensor.New(d, n)
	for i := range n {
		t.SetFlat(i, float64(r+1)+float64(i)/2)
	}
	return t
}

func TestAllReduce(t *testing.T) {
	p, r := world.Size(), world.Rank()
	for _, d := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, n := range []int{0, 1, 7, 1000} {
			for _, op := range []Op{Sum, Mean, Max, Min} {
				x := filled(d, n, r)
				v := x.Version()
				if err := world.AllReduce(x, op); err != nil {
					t.Fatalf("%v %d %v: %v", d, n, op, err)
				}
				if n > 0 && x.Version() == v {
					t.Errorf("%v %d %v: the version was not bumped", d, n, op)
				}
				for i := range n {
					h := float64(i) / 2
					want := map[Op]float64{
						Sum:  float64(p*(p+1))/2 + float64(p)*h,
						Mean: float64(p+1)/2 + h,
						Max:  float64(p) + h,
						Min:  1 + h,
					}[op]
					if got := x.AtFlat(i); got != want {
						t.Fatalf("%v n=%d %v: element %d is %v, want %v", d, n, op, i, got, want)
					}
				}
			}
		}
	}
}

// Requests complete in the order they were started; the caller computes
// between IAllReduce and Wait.
func TestIAllReduce(t *testing.T) {
	p, r := world.Size(), world.Rank()
	xs := []*tensor.Tensor{filled(tensor.Float32, 5, r), filled(tensor.Float64, 3, r), filled(tensor.Float64, 0, r)}
	var reqs []*Request
	for _, x := range xs {
		q, err := world.IAllReduce(x, Sum)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, q)
	}
	for i, q := range reqs {
		if err := q.Wait(); err != nil {
			t.Fatal(err)
		}
		for k := range xs[i].Len() {
			if want := float64(p*(p+1))/2 + float64(p)*float64(k)/2; xs[i].AtFlat(k) != want {
				t.Errorf("request %d element %d: %v, want %v", i, k, xs[i].AtFlat(k), want)
			}
		}
	}
	if err := reqs[0].Wait(); !errors.Is(err, ErrArgument) {
		t.Errorf("second Wait: %v, want ErrArgument", err)
	}
}

func TestBroadcastAllGatherBarrier(t *testing.T) {
	p, r := world.Size(), world.Rank()
	root := p - 1
	x := filled(tensor.Float64, 4, r)
	if err := world.Broadcast(x, root); err != nil {
		t.Fatal(err)
	}
	if want := filled(tensor.Float64, 4, root); !slices.Equal(x.Data(), want.Data()) {
		t.Errorf("broadcast from %d: %v, want %v", root, x.Data(), want.Data())
	}
	src := filled(tensor.Float32, 3, r)
	dst := tensor.New(tensor.Float32, p, 3)
	if err := world.AllGather(dst, src); err != nil {
		t.Fatal(err)
	}
	for q := range p {
		for i := range 3 {
			if want := float64(q+1) + float64(i)/2; dst.At(q, i) != want {
				t.Errorf("all-gather [%d %d] = %v, want %v", q, i, dst.At(q, i), want)
			}
		}
	}
	if err := world.Barrier(); err != nil {
		t.Fatal(err)
	}
}

// Misuse is found before any MPI call, on every rank alike (so the ranks
// stay in step).
func TestMisuse(t *testing.T) {
	x := tensor.New(tensor.Float64, 3)
	cases := map[string]func() error{
		"nil tensor":         func() error { return world.AllReduce(nil, Sum) },
		"unknown op":         func() error { return world.AllReduce(x, Op(9)) },
		"unknown op (async)": func() error { _, err := world.IAllReduce(x, Op(-1)); return err },
		"root out of range":  func() error { return world.Broadcast(x, world.Size()) },
		"negative root":      func() error { return world.Broadcast(x, -1) },
		"gather shape":       func() error { return world.AllGather(tensor.New(tensor.Float64, 3), x) },
		"gather dtype":       func() error { return world.AllGather(tensor.New(tensor.Float32, world.Size(), 3), x) },
		"gather nil":         func() error { return world.AllGather(nil, x) },
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, ErrArgument) {
			t.Errorf("%s: %v, want ErrArgument", name, err)
		}
	}
	if w, err := Init(); w != world || err != nil {
		t.Errorf("second Init: %v, %v; want the same World", w, err)
	}
}

// A rank that does not take part makes the others' collective time out
// with ErrTimeout instead of hanging: rank 0 waits 100 ms while the others
// arrive after 1 s; then every rank meets in a barrier, rank 0's abandoned
// request having been matched by the late ones.
func TestTimeout(t *testing.T) {
	if world.Size() < 2 {
		t.Skip("needs two ranks or more (run under mpirun)")
	}
	x := tensor.New(tensor.Float64, 4)
	if world.Rank() == 0 {
		world.SetTimeout(100 * time.Millisecond)
		err := world.AllReduce(x, Sum)
		world.SetTimeout(0)
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("rank 0: %v, want ErrTimeout", err)
		}
	} else {
		time.Sleep(time.Second)
		if err := world.AllReduce(x, Sum); err != nil {
			t.Error(err)
		}
	}
	if err := world.Barrier(); err != nil {
		t.Fatal(err)
	}
}
