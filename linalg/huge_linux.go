//go:build linux

package linalg

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of an x86-64 or arm64 transparent huge page.
const hugePage = 2 << 20

// adviseHuge asks the kernel to back the 2 MiB-aligned interior of buf
// with transparent huge pages (madvise MADV_HUGEPAGE; a hint, which
// changes no data and is ignored where THP is off), for buffers of at
// least two such pages. A large output fresh from the Go heap is memory
// the process has never touched or the runtime has given back: in 4 KiB
// pages, 2 000 page faults per 8 MB (the L of n = 1000, float64), which
// measured 20–50 ms on the test VM (Zen 5 family 26 model 2, THP in
// "madvise" mode), against a few faults with huge pages. Go's runtime does
// not advise its heap itself, so without this every fresh output pays
// them. Errors are ignored.
func adviseHuge[T float](buf []T) {
	var z T
	size := uintptr(len(buf)) * unsafe.Sizeof(z)
	if size < 2*hugePage {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(buf))
	lo := (uintptr(p) + hugePage - 1) &^ (hugePage - 1)
	hi := (uintptr(p) + size) &^ (hugePage - 1)
	if hi > lo {
		_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, lo-uintptr(p))), hi-lo), syscall.MADV_HUGEPAGE)
	}
}
