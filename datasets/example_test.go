package datasets_test

import (
	"fmt"
	"slices"

	"github.com/adjointgo/adjoint/datasets"
)

// The digits: 1,797 images of 8×8 pixels, labels 0 to 9 (the counts of
// data/README.md), split into training and held-out rows.
func ExampleLoadDigits() {
	d, err := datasets.LoadDigits()
	if err != nil {
		fmt.Println(err)
		return
	}
	train, test := d.Split(0.2, 1)
	lo, hi := d.Y[0], d.Y[0]
	for _, y := range d.Y {
		lo, hi = min(lo, y), max(hi, y)
	}
	fmt.Println(d.Len(), d.X.Shape(), d.X.DType(), lo, hi)
	fmt.Println(train.Len()+test.Len() == d.Len(), test.Len() > 300)
	// Output:
	// 1797 [1797 64] float32 0 9
	// true true
}

// The breast-cancer data: 569 rows of 30 features and two classes.
func ExampleLoadBreastCancer() {
	d, err := datasets.LoadBreastCancer()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Len(), len(d.Row(0)), d.Classes)
	// Output: 569 30 [malignant benign]
}

// Tiny Shakespeare, 1,115,394 characters of 65 distinct ones, encoded for
// a character-level model.
func ExampleTinyShakespeare() {
	text, err := datasets.TinyShakespeare()
	if err != nil {
		fmt.Println(err)
		return
	}
	v := datasets.NewCharVocab(text)
	ids, err := v.Encode("ROMEO:")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(text), v.Size(), v.Decode(ids))
	// Output: 1115394 65 ROMEO:
}

// A Batcher walks shuffled minibatches of row indices, the last one short.
func ExampleBatcher() {
	b := datasets.NewBatcher(10, 4, true, 1)
	n := 0
	for {
		idx, ok := b.Next()
		if !ok {
			break
		}
		n += len(idx)
		fmt.Print(len(idx), " ")
	}
	fmt.Println(n, b.Batches())
	// Output: 4 4 2 10 3
}

// A checkpoint saves a Batcher's State; a new batcher given it by SetState
// carries on with the batches the saved one would have given.
func ExampleBatcher_State() {
	a := datasets.NewBatcher(10, 4, true, 1)
	a.Next()
	saved := a.State()
	b := datasets.NewBatcher(10, 4, true, 1)
	if err := b.SetState(saved); err != nil {
		fmt.Println(err)
		return
	}
	x, _ := a.Next()
	y, _ := b.Next()
	fmt.Println(saved.Pos, slices.Equal(x, y))
	// Output: 4 true
}
