package datasets

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The Tiny Shakespeare corpus: data/tinyshakespeare/input.txt of the GitHub
// repository karpathy/char-rnn (MIT licence, Copyright (c) 2015 Andrej
// Karpathy; the text is Shakespeare's, in the public domain). See
// data/README.md.
//
//go:embed data/tinyshakespeare.txt.gz
var shakespeareGz []byte

// TinyShakespeareLen is the length in bytes (and characters: the text is
// ASCII) of the Tiny Shakespeare corpus.
const TinyShakespeareLen = 1_115_394

var shakespeareOnce struct {
	sync.Once
	text string
	err  error
}

// TinyShakespeare returns the Tiny Shakespeare corpus (Andrej Karpathy's
// char-rnn data set, MIT licence; the plays themselves are in the public
// domain; see data/README.md): 1,115,394 characters of ASCII text from
// Shakespeare's plays, each speech a speaker's name on its own line followed
// by the lines spoken, 65 distinct characters. It is decompressed once from
// the embedded gzip file; the string is shared. The error (a corrupt build)
// is an *Error wrapping ErrFormat.
func TinyShakespeare() (string, error) {
	shakespeareOnce.Do(func() { shakespeareOnce.text, shakespeareOnce.err = parseShakespeare(shakespeareGz) })
	return shakespeareOnce.text, shakespeareOnce.err
}

func parseShakespeare(gz []byte) (string, error) {
	bad := func(format string, args ...any) error {
		return &Error{Op: "tiny shakespeare", Err: ErrFormat, Msg: fmt.Sprintf(format, args...)}
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return "", bad("decompressing the embedded file: %v", err)
	}
	var b strings.Builder
	b.Grow(TinyShakespeareLen)
	if _, err := io.Copy(&b, zr); err != nil {
		return "", bad("decompressing the embedded file: %v", err)
	}
	s := b.String()
	if !utf8.ValidString(s) {
		return "", bad("the text is not valid UTF-8")
	}
	return s, nil
}

// CharVocab is a character-level vocabulary: the distinct characters of a
// text, sorted by code point, token i being the i-th of them (the encoding
// of nanoGPT's shakespeare_char). Build one with NewCharVocab or
// ParseCharVocab; it is read-only afterwards and safe for concurrent use.
type CharVocab struct {
	chars []rune
	ascii [utf8.RuneSelf]int32 // id+1 of each ASCII character, 0 when absent
	other map[rune]int         // ids of the non-ASCII characters
}

// NewCharVocab returns the vocabulary of the distinct characters of text.
// An empty text gives an empty vocabulary (Size 0).
func NewCharVocab(text string) *CharVocab {
	var seen [utf8.RuneSelf]bool
	set := map[rune]bool{}
	for _, r := range text {
		if r < utf8.RuneSelf {
			seen[r] = true
		} else {
			set[r] = true
		}
	}
	var chars []rune
	for r, ok := range seen {
		if ok {
			chars = append(chars, rune(r))
		}
	}
	for r := range set {
		chars = append(chars, r)
	}
	sort.Slice(chars, func(i, j int) bool { return chars[i] < chars[j] })
	return newVocab(chars)
}

// ParseCharVocab rebuilds the vocabulary whose String is s: its characters
// must be distinct and in increasing order (so that the ids are those of
// NewCharVocab), with no invalid UTF-8. Otherwise it returns an *Error
// wrapping ErrArgument.
func ParseCharVocab(s string) (*CharVocab, error) {
	bad := func(format string, args ...any) error {
		return &Error{Op: "char vocab", Err: ErrArgument, Msg: fmt.Sprintf(format, args...)}
	}
	if !utf8.ValidString(s) {
		return nil, bad("%q is not valid UTF-8", s)
	}
	chars := []rune(s)
	for i := 1; i < len(chars); i++ {
		if chars[i] <= chars[i-1] {
			return nil, bad("character %d (%s) does not come after %s: want distinct characters in increasing order", i, QuoteChar(chars[i]), QuoteChar(chars[i-1]))
		}
	}
	return newVocab(chars), nil
}

func newVocab(chars []rune) *CharVocab {
	v := &CharVocab{chars: chars}
	for i, r := range chars {
		if r < utf8.RuneSelf {
			v.ascii[r] = int32(i + 1)
		} else {
			if v.other == nil {
				v.other = map[rune]int{}
			}
			v.other[r] = i
		}
	}
	return v
}

// Size returns the number of characters (token ids 0..Size−1).
func (v *CharVocab) Size() int { return len(v.chars) }

// String returns the characters in id order: ParseCharVocab(v.String())
// rebuilds v.
func (v *CharVocab) String() string { return string(v.chars) }

// ID returns the token id of r, and false when r is not in the vocabulary.
func (v *CharVocab) ID(r rune) (int, bool) {
	if r >= 0 && r < utf8.RuneSelf {
		id := v.ascii[r]
		return int(id) - 1, id > 0
	}
	id, ok := v.other[r]
	return id, ok
}

// Char returns the character of token id; it panics with an *Error
// wrapping ErrArgument when id is outside 0..Size−1.
func (v *CharVocab) Char(id int) rune {
	if id < 0 || id >= len(v.chars) {
		panic(&Error{Op: "char vocab", Err: ErrArgument, Msg: fmt.Sprintf("token id %d outside 0..%d", id, len(v.chars)-1)})
	}
	return v.chars[id]
}

// Encode returns the token ids of the characters of s. A character outside
// the vocabulary (or invalid UTF-8) gives an *Error wrapping ErrArgument that
// names it and its position.
func (v *CharVocab) Encode(s string) ([]int, error) {
	ids := make([]int, 0, len(s))
	for i, r := range s {
		id, ok := v.ID(r)
		if !ok || (r == utf8.RuneError && !strings.HasPrefix(s[i:], string(utf8.RuneError))) {
			return nil, &Error{Op: "char vocab", Err: ErrArgument,
				Msg: fmt.Sprintf("character %s at byte %d is not in the vocabulary of %d characters", QuoteChar(r), i, len(v.chars))}
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Decode returns the text of the token ids; it panics with an *Error
// wrapping ErrArgument on an id outside 0..Size−1.
func (v *CharVocab) Decode(ids []int) string {
	var b strings.Builder
	b.Grow(len(ids))
	for _, id := range ids {
		b.WriteRune(v.Char(id))
	}
	return b.String()
}

// QuoteChar formats a character for an error message: Go-quoted ('a',
// '\n') with its code point, e.g. 'é' (U+00E9).
func QuoteChar(r rune) string {
	return strconv.QuoteRune(r) + fmt.Sprintf(" (U+%04X)", r)
}
