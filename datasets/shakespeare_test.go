package datasets

import (
	"errors"
	"strings"
	"testing"
)

func TestTinyShakespeare(t *testing.T) {
	s, err := TinyShakespeare()
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != TinyShakespeareLen {
		t.Fatalf("%d bytes, want %d", len(s), TinyShakespeareLen)
	}
	if !strings.HasPrefix(s, "First Citizen:\nBefore we proceed any further, hear me speak.\n") {
		t.Fatalf("starts %q", s[:60])
	}
	if n := strings.Count(s, "\n"); n != 40000 {
		t.Fatalf("%d lines, want 40000", n)
	}
	v := NewCharVocab(s)
	const want = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	if v.Size() != 65 || v.String() != want {
		t.Fatalf("vocabulary %q (%d), want %q", v.String(), v.Size(), want)
	}
	ids, err := v.Encode(s[:1000])
	if err != nil {
		t.Fatal(err)
	}
	if v.Decode(ids) != s[:1000] {
		t.Fatal("decode(encode(s)) != s")
	}
	if id, ok := v.ID('\n'); !ok || id != 0 {
		t.Fatalf("newline has id %d, %v; want 0", id, ok)
	}
	if id, _ := v.ID('z'); id != 64 {
		t.Fatalf("z has id %d, want 64", id)
	}
	if _, err := parseShakespeare([]byte("not gzip")); !errors.Is(err, ErrFormat) {
		t.Fatalf("garbage: %v", err)
	}
}

func TestCharVocab(t *testing.T) {
	v := NewCharVocab("héllo, wörld")
	if got := v.String(); got != " ,dhlorwéö" {
		t.Fatalf("vocabulary %q", got)
	}
	p, err := ParseCharVocab(v.String())
	if err != nil || p.String() != v.String() {
		t.Fatalf("parse: %v, %v", p, err)
	}
	ids, err := p.Encode("wörld héllo")
	if err != nil || p.Decode(ids) != "wörld héllo" {
		t.Fatalf("round trip: %v %v", ids, err)
	}
	_, err = v.Encode("hllo!")
	var e *Error
	if !errors.Is(err, ErrArgument) || !errors.As(err, &e) || !strings.Contains(err.Error(), `'!' (U+0021) at byte 4`) {
		t.Fatalf("unknown character: %v", err)
	}
	if _, err := v.Encode("h\xffllo"); !errors.Is(err, ErrArgument) {
		t.Fatalf("invalid UTF-8: %v", err)
	}
	for _, s := range []string{"ba", "aa", "a\xff"} {
		if _, err := ParseCharVocab(s); !errors.Is(err, ErrArgument) {
			t.Errorf("ParseCharVocab(%q): %v, want ErrArgument", s, err)
		}
	}
	if err := catch(func() { v.Decode([]int{0, 10}) }); !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), "token id 10 outside 0..9") {
		t.Fatalf("decode out of range: %v", err)
	}
	if NewCharVocab("").Size() != 0 {
		t.Fatal("empty text, non-empty vocabulary")
	}
}
