#!/usr/bin/env python3
"""Generates kernel_amd64.s, the GEMM micro-kernels and the routines beside them
(B panel row copies, in-register transposes, outer-product rows); run from
internal/gemm: python3 _gen/asmgen.py > kernel_amd64.s.

Each kernel computes an MR×NR tile of alpha·A·B + beta·C from an A panel
(element (i, p) at a[i·rsa + p·csa]: packed, rsa = 1 and csa = MR, or read
in place from a row-major A or Aᵀ) and a packed B panel (kc steps of NR
values); vectors run along N, A values are broadcast. Rows ≥ mr are not stored and
columns ≥ nr are masked off. Written for this project; see kernel_amd64.go.
"""

out = []
def e(s=""): out.append(s)

def kernel(name, isa, dt, MR, nvec, unroll=2, pfb=0, pfc=False):
    # isa: "avx512" or "avx2"; dt: "s" (float32) or "d" (float64)
    es = 4 if dt == "s" else 8
    vbytes = 64 if isa == "avx512" else 32
    lanes = vbytes // es
    NR = nvec * lanes
    R = "Z" if isa == "avx512" else "Y"
    ps = "PS" if dt == "s" else "PD"
    bc = "VBROADCASTSS" if dt == "s" else "VBROADCASTSD"
    mov = "VMOVUPS" if dt == "s" else "VMOVUPD"
    nacc = MR * nvec
    breg = [f"{R}{nacc + v}" for v in range(nvec)]
    areg = [f"{R}{nacc + nvec}", f"{R}{nacc + nvec + 1}"]
    assert nacc + nvec + 2 <= (32 if isa == "avx512" else 16)
    acc = lambda i, v: f"{R}{i * nvec + v}"
    # frame: k, a, rsa, csa, b, c, ldc, alpha, beta, mr, mask
    off = 56
    alpha_off = off; off += es
    beta_off = off; off += es
    off = (off + 7) // 8 * 8
    mr_off = off; off += 8
    mask_off = off
    if isa == "avx512":
        masksize = 4; masktype = "uint32"
    else:
        masksize = 8; masktype = "ptr"
    argsize = mask_off + masksize
    astep, bstep = MR * es, NR * es
    e(f"// func {name}(k int, a *{'float32' if dt == 's' else 'float64'}, rsa, csa int, b, c *{'float32' if dt == 's' else 'float64'}, ldc int, alpha, beta {'float32' if dt == 's' else 'float64'}, mr int, mask {'uint32' if isa == 'avx512' else ('*int32' if dt == 's' else '*int64')})")
    e(f"TEXT ·{name}(SB), NOSPLIT, $0-{argsize}")
    e("\tMOVQ k+0(FP), CX")
    e("\tMOVQ a+8(FP), AX")
    e("\tMOVQ rsa+16(FP), R11")
    e(f"\tSHLQ ${2 if es == 4 else 3}, R11")
    e("\tMOVQ csa+24(FP), R13")
    e(f"\tSHLQ ${2 if es == 4 else 3}, R13")
    e("\tLEAQ (R11)(R11*2), R12")
    # A rows in groups of g, one base register per group
    g = 4 if MR % 4 == 0 else 3
    bases = ["AX", "R9", "R10"][:MR // g]
    assert len(bases) * g == MR
    for j in range(1, len(bases)):
        step = "(R11*4)" if g == 4 else "(R12*1)"
        e(f"\tLEAQ ({bases[j - 1]}){step}, {bases[j]}")
    rowaddr = lambda i: f"({bases[i // g]})" + ["", "(R11*1)", "(R11*2)", "(R12*1)"][i % g]
    e("\tMOVQ b+32(FP), BX")
    if pfc:
        # Start fetching the C tile (rows ldc apart, often a page apart) so
        # that the update at the end does not wait for it.
        e("\tMOVQ c+40(FP), DI")
        e("\tMOVQ ldc+48(FP), SI")
        e(f"\tSHLQ ${2 if es == 4 else 3}, SI")
        e("\tLEAQ (SI)(SI*2), R8")
        for i in range(0, MR, 3):
            for r, addr in enumerate(["(DI)", "(DI)(SI*1)", "(DI)(SI*2)"]):
                if i + r < MR:
                    for line in range(0, NR * es, 64):
                        e(f"\tPREFETCHT1 {line}{addr}")
            if i + 3 < MR:
                e("\tADDQ R8, DI")
    for i in range(MR):
        for v in range(nvec):
            r = acc(i, v)
            e(f"\tVPXOR{'D' if isa == 'avx512' else ''} {r}, {r}, {r}")
    def kstep(u):
        bo = u * bstep
        for v in range(nvec):
            e(f"\t{mov} {bo + v * vbytes}(BX), {breg[v]}")
        for i in range(MR):
            ar = areg[i % 2]
            e(f"\t{bc} {rowaddr(i)}, {ar}")
            for v in range(nvec):
                e(f"\tVFMADD231{ps} {breg[v]}, {ar}, {acc(i, v)}")
        for b in bases:
            e(f"\tADDQ R13, {b}")
    ush = {1: 0, 2: 1, 4: 2}[unroll]
    e("\tMOVQ CX, DX")
    if ush:
        e(f"\tSHRQ ${ush}, CX")
        e(f"\tJZ {name}_tail")
    e("\tPCALIGN $32")
    e(f"{name}_loop:")
    for u in range(unroll):
        if pfb and u % 2 == 0:
            e(f"\tPREFETCHT0 {pfb + u * bstep}(BX)")
        kstep(u)
    e(f"\tADDQ ${unroll * bstep}, BX")
    e("\tDECQ CX")
    e(f"\tJNZ {name}_loop")
    e(f"{name}_tail:")
    if ush:
        e(f"\tANDQ ${unroll - 1}, DX")
        e(f"\tJZ {name}_store")
        e(f"{name}_tail1:")
        kstep(0)
        e(f"\tADDQ ${bstep}, BX")
        e("\tDECQ DX")
        e(f"\tJNZ {name}_tail1")
    e(f"{name}_store:")
    e(f"\t{bc} alpha+{alpha_off}(FP), {areg[0]}")
    for i in range(MR):
        for v in range(nvec):
            e(f"\tVMUL{ps} {areg[0]}, {acc(i, v)}, {acc(i, v)}")
    e("\tMOVQ c+40(FP), DI")
    e("\tMOVQ ldc+48(FP), SI")
    e(f"\tSHLQ ${2 if es == 4 else 3}, SI")
    e(f"\tMOVQ mr+{mr_off}(FP), CX")
    # full-width or masked?
    if isa == "avx512":
        e(f"\tMOVL mask+{mask_off}(FP), DX")
        full = (1 << NR) - 1
        e(f"\tCMPL DX, ${full if full < 2**31 else full - 2**32}")
        e(f"\tJEQ {name}_full")
        for v in range(nvec):
            e(f"\tKMOVW DX, K{v + 1}")
            if v + 1 < nvec:
                e(f"\tSHRL ${lanes}, DX")
    else:
        e(f"\tMOVQ mask+{mask_off}(FP), DX")
        e("\tTESTQ DX, DX")
        e(f"\tJZ {name}_full")
        # masks into the B registers (free now)
        for v in range(nvec):
            e(f"\tVMOVDQU {v * vbytes}(DX), {breg[v]}")
    # beta test
    def betatest(label0):
        if dt == "s":
            e(f"\tMOVL beta+{beta_off}(FP), DX")
            e("\tTESTL $0x7fffffff, DX")
        else:
            e(f"\tMOVQ beta+{beta_off}(FP), DX")
            e("\tSHLQ $1, DX")
        e(f"\tJZ {label0}")
        e(f"\t{bc} beta+{beta_off}(FP), {areg[0]}")
    tmp = areg[1]
    def rows(masked, withbeta, label):
        e(f"{label}:")
        for i in range(MR):
            for v in range(nvec):
                a = acc(i, v)
                addr = f"{v * vbytes}(DI)"
                if withbeta:
                    if not masked:
                        e(f"\tVFMADD231{ps} {addr}, {areg[0]}, {a}")
                    elif isa == "avx512":
                        e(f"\t{mov}.Z {addr}, K{v + 1}, {tmp}")
                        e(f"\tVFMADD231{ps} {areg[0]}, {tmp}, {a}")
                    else:
                        e(f"\tVMASKMOV{ps} {addr}, {breg[v]}, {tmp}")
                        e(f"\tVFMADD231{ps} {areg[0]}, {tmp}, {a}")
                if not masked:
                    e(f"\t{mov} {a}, {addr}")
                elif isa == "avx512":
                    e(f"\t{mov} {a}, K{v + 1}, {addr}")
                else:
                    e(f"\tVMASKMOV{ps} {a}, {breg[v]}, {addr}")
            if i + 1 < MR:
                e("\tDECQ CX")
                e(f"\tJZ {name}_ret")
                e("\tADDQ SI, DI")
        e(f"\tJMP {name}_ret")
    # masked path
    betatest(f"{name}_m0")
    rows(True, True, f"{name}_mb")
    rows(True, False, f"{name}_m0")
    e(f"{name}_full:")
    betatest(f"{name}_f0")
    rows(False, True, f"{name}_fb")
    rows(False, False, f"{name}_f0")
    e(f"{name}_ret:")
    if isa == "avx512":
        # VZEROUPPER leaves Z16–Z31 alone; clear them too so that no dirty
        # 512-bit state outlives the call.
        for r in range(16, 32):
            e(f"\tVPXORD Z{r}, Z{r}, Z{r}")
    e("\tVZEROUPPER")
    e("\tRET")
    e()


def copyrows(name, dt, isa="avx512"):
    # dst[p*stride + i] = src[p*ld + i] for kc rows. AVX-512: the lanes i in
    # gmask, 0 for the other lanes in smask (one masked 512-bit move a row).
    # AVX2: the 64 bytes of each row (16 float32 or 8 float64: a whole AVX2
    # B panel row), two 256-bit moves a row; no masks, so only whole rows
    # (see copyAsm).
    es = 4 if dt == "s" else 8
    ty = "float32" if dt == "s" else "float64"
    mv = "VMOVUPS" if es == 4 else "VMOVUPD"
    masks = isa == "avx512"
    e(f"// func {name}(dst *{ty}, stride int, src *{ty}, ld int, {'gmask, smask uint32, ' if masks else ''}kc int)")
    e(f"TEXT ·{name}(SB), NOSPLIT, $0-{48 if masks else 40}")
    e("\tMOVQ dst+0(FP), DI")
    e("\tMOVQ stride+8(FP), DX")
    e(f"\tSHLQ ${2 if es == 4 else 3}, DX")
    e("\tMOVQ src+16(FP), SI")
    e("\tMOVQ ld+24(FP), AX")
    e(f"\tSHLQ ${2 if es == 4 else 3}, AX")
    if masks:
        e("\tMOVL gmask+32(FP), BX")
        e("\tKMOVW BX, K1")
        e("\tMOVL smask+36(FP), BX")
        e("\tKMOVW BX, K2")
    e(f"\tMOVQ kc+{40 if masks else 32}(FP), CX")
    e("\tTESTQ CX, CX")
    e(f"\tJZ {name}_done")
    e(f"{name}_loop:")
    if masks:
        e(f"\t{mv}.Z (SI), K1, Z0")
        e(f"\t{mv} Z0, K2, (DI)")
    else:
        e(f"\t{mv} (SI), Y0")
        e(f"\t{mv} 32(SI), Y1")
        e(f"\t{mv} Y0, (DI)")
        e(f"\t{mv} Y1, 32(DI)")
    e("\tADDQ AX, SI")
    e("\tADDQ DX, DI")
    e("\tDECQ CX")
    e(f"\tJNZ {name}_loop")
    e(f"{name}_done:")
    e("\tVZEROUPPER")
    e("\tRET")
    e()


def transpose(isa, dt):
    """The in-register transpose of one VL×VL block: rows loaded in
    row(i) come out as columns in col(c). Returns (lines, row, col)."""
    L = []
    if isa == "avx512" and dt == "s":
        # 16×16: pairs of rows interleaved (32-bit), then pairs of those
        # (64-bit), then 128-bit quarters swapped twice.
        r = lambda i: f"Z{i}"
        t = lambda i: f"Z{16 + i}"
        for i in range(8):
            L.append(f"\tVUNPCKLPS {r(2*i+1)}, {r(2*i)}, {t(2*i)}")
            L.append(f"\tVUNPCKHPS {r(2*i+1)}, {r(2*i)}, {t(2*i+1)}")
        for g in range(4):
            a0, a1, b0, b1 = t(4*g), t(4*g+1), t(4*g+2), t(4*g+3)
            L.append(f"\tVUNPCKLPD {b0}, {a0}, {r(4*g)}")
            L.append(f"\tVUNPCKHPD {b0}, {a0}, {r(4*g+1)}")
            L.append(f"\tVUNPCKLPD {b1}, {a1}, {r(4*g+2)}")
            L.append(f"\tVUNPCKHPD {b1}, {a1}, {r(4*g+3)}")
        for h in range(2):
            for c in range(4):
                a, b = r(8*h+c), r(8*h+4+c)
                L.append(f"\tVSHUFF32X4 $0x88, {b}, {a}, {t(8*h+2*c)}")
                L.append(f"\tVSHUFF32X4 $0xdd, {b}, {a}, {t(8*h+2*c+1)}")
        for c in range(4):
            for k, base in ((0, c), (1, c + 4)):
                a, b = t(2*c+k), t(8+2*c+k)
                L.append(f"\tVSHUFF32X4 $0x88, {b}, {a}, {r(base)}")
                L.append(f"\tVSHUFF32X4 $0xdd, {b}, {a}, {r(base+8)}")
        return L, r, r
    if isa == "avx512":
        # 8×8 float64: pairs of rows interleaved (128-bit lane k of t(2i)
        # holds column 2k of rows 2i, 2i+1; of t(2i+1), column 2k+1), then
        # two rounds of 128-bit lane selection.
        r = lambda i: f"Z{i}"
        t = lambda i: f"Z{8 + i}"
        for i in range(4):
            L.append(f"\tVUNPCKLPD {r(2*i+1)}, {r(2*i)}, {t(2*i)}")
            L.append(f"\tVUNPCKHPD {r(2*i+1)}, {r(2*i)}, {t(2*i+1)}")
        for e in range(2):
            # r(4e): columns e, 4+e of rows 0-3; r(4e+1): columns 2+e, 6+e;
            # r(4e+2), r(4e+3): the same of rows 4-7.
            L.append(f"\tVSHUFF64X2 $0x88, {t(2+e)}, {t(e)}, {r(4*e)}")
            L.append(f"\tVSHUFF64X2 $0xdd, {t(2+e)}, {t(e)}, {r(4*e+1)}")
            L.append(f"\tVSHUFF64X2 $0x88, {t(6+e)}, {t(4+e)}, {r(4*e+2)}")
            L.append(f"\tVSHUFF64X2 $0xdd, {t(6+e)}, {t(4+e)}, {r(4*e+3)}")
        for e in range(2):
            L.append(f"\tVSHUFF64X2 $0x88, {r(4*e+2)}, {r(4*e)}, {t(e)}")
            L.append(f"\tVSHUFF64X2 $0xdd, {r(4*e+2)}, {r(4*e)}, {t(4+e)}")
            L.append(f"\tVSHUFF64X2 $0x88, {r(4*e+3)}, {r(4*e+1)}, {t(2+e)}")
            L.append(f"\tVSHUFF64X2 $0xdd, {r(4*e+3)}, {r(4*e+1)}, {t(6+e)}")
        return L, r, t
    if dt == "s":
        # 8×8 float32 in YMM: 32-bit and 64-bit interleaves, then the
        # 128-bit halves exchanged.
        r = lambda i: f"Y{i}"
        t = lambda i: f"Y{8 + i}"
        for i in range(4):
            L.append(f"\tVUNPCKLPS {r(2*i+1)}, {r(2*i)}, {t(2*i)}")
            L.append(f"\tVUNPCKHPS {r(2*i+1)}, {r(2*i)}, {t(2*i+1)}")
        for g in range(2):
            a0, a1, b0, b1 = t(4*g), t(4*g+1), t(4*g+2), t(4*g+3)
            L.append(f"\tVSHUFPS $0x44, {b0}, {a0}, {r(4*g)}")
            L.append(f"\tVSHUFPS $0xee, {b0}, {a0}, {r(4*g+1)}")
            L.append(f"\tVSHUFPS $0x44, {b1}, {a1}, {r(4*g+2)}")
            L.append(f"\tVSHUFPS $0xee, {b1}, {a1}, {r(4*g+3)}")
        for c in range(4):
            L.append(f"\tVPERM2F128 $0x20, {r(4+c)}, {r(c)}, {t(c)}")
            L.append(f"\tVPERM2F128 $0x31, {r(4+c)}, {r(c)}, {t(4+c)}")
        return L, r, t
    # 4×4 float64 in YMM: 64-bit interleaves, then the halves exchanged.
    r = lambda i: f"Y{i}"
    t = lambda i: f"Y{4 + i}"
    for i in range(2):
        L.append(f"\tVUNPCKLPD {r(2*i+1)}, {r(2*i)}, {t(2*i)}")
        L.append(f"\tVUNPCKHPD {r(2*i+1)}, {r(2*i)}, {t(2*i+1)}")
    for e in range(2):
        L.append(f"\tVPERM2F128 $0x20, {t(2+e)}, {t(e)}, {r(e)}")
        L.append(f"\tVPERM2F128 $0x31, {t(2+e)}, {t(e)}, {r(2+e)}")
    return L, r, r


# trans prefetches each row PF bytes ahead of the block it loads (two cache
# lines for AVX-512 float32): the rows of a transposed operand are ld apart,
# one stream each, and the CNN's weight-gradient step measured 3–4 % faster
# with it than without (bench/gemm-tuning.md §13).
PF = 128

def trans(name, isa, dt, W=0):
    # dst[p*W + i] = src[offs[i] + p] for i < VL, p < kc, W the panel width
    # (the kernel's NR by default; MR for the A panels, whose width need not
    # be a multiple of VL: a wider vector's extra lanes spill into the next
    # step, which the caller arranges to be stored later; offs in bytes):
    # VL rows of a transposed operand packed VL steps at a
    # time, each block transposed in registers (a gather per step was the
    # slowest part of packing Bᵀ). The last kc mod VL steps are loaded
    # under a mask (AVX-512 lane mask, AVX2 mask vector) and only their
    # columns stored. A block of fewer rows repeats its last row's offset
    # and passes rmask, VL lanes of all-ones for the rows present, zeros
    # for the padding; it is ANDed into the columns before they are stored
    # (nil: all rows present).
    es = 4 if dt == "s" else 8
    ty = "float32" if dt == "s" else "float64"
    vb = 64 if isa == "avx512" else 32
    VL = vb // es
    W = W or 2 * VL
    lg = VL.bit_length() - 1
    mv = "VMOVUPS" if es == 4 else "VMOVUPD"
    mty = "int32" if es == 4 else "int64"
    tm = "mask uint32" if isa == "avx512" else f"mask *{mty}"
    e(f"// func {name}(dst, src *{ty}, offs *int, kc int, {tm}, rmask *{mty})")
    e(f"TEXT ·{name}(SB), NOSPLIT, $0-48")
    e("\tMOVQ dst+0(FP), DI")
    e("\tMOVQ src+8(FP), SI")
    e("\tMOVQ offs+16(FP), R8")
    e("\tMOVQ kc+24(FP), CX")
    e("\tMOVQ rmask+40(FP), R11")
    e("\tMOVQ CX, DX")
    e(f"\tANDQ ${VL - 1}, DX")
    e(f"\tSHRQ ${lg}, CX")
    e(f"\tJZ {name}_tail")
    body, row, col = transpose(isa, dt)
    # a register the columns do not occupy, for the row mask
    free = {("avx512", "s"): "Z16", ("avx512", "d"): "Z0", ("avx2", "s"): "Y0", ("avx2", "d"): "Y4"}[(isa, dt)]
    assert free not in [col(c) for c in range(VL)]

    def rowmask(label):
        e("\tTESTQ R11, R11")
        e(f"\tJZ {label}")
        if isa == "avx512":
            e(f"\tVMOVDQU32 (R11), {free}")
            for c in range(VL):
                e(f"\tVPANDD {free}, {col(c)}, {col(c)}")
        else:
            e(f"\tVMOVDQU (R11), {free}")
            for c in range(VL):
                e(f"\tVANDPS {free}, {col(c)}, {col(c)}")
        e(f"{label}:")

    e(f"{name}_loop:")
    for i in range(VL):
        e(f"\tMOVQ {8 * i}(R8), BX")
        e(f"\t{mv} (SI)(BX*1), {row(i)}")
        if PF:
            e(f"\tPREFETCHT0 {PF}(SI)(BX*1)")
    for l in body:
        e(l)
    rowmask(f"{name}_store")
    for c in range(VL):
        e(f"\t{mv} {col(c)}, {c * W * es}(DI)")
    e(f"\tADDQ ${VL * es}, SI")
    e(f"\tADDQ ${VL * W * es}, DI")
    e("\tDECQ CX")
    e(f"\tJNZ {name}_loop")
    e(f"{name}_tail:")
    e("\tTESTQ DX, DX")
    e(f"\tJZ {name}_done")
    if isa == "avx512":
        e("\tMOVL mask+32(FP), BX")
        e("\tKMOVW BX, K1")
        for i in range(VL):
            e(f"\tMOVQ {8 * i}(R8), BX")
            e(f"\t{mv}.Z (SI)(BX*1), K1, {row(i)}")
    else:
        # the mask lives in the last register, free until the transpose
        mreg = "Y15"
        e("\tMOVQ mask+32(FP), BX")
        e(f"\tVMOVDQU (BX), {mreg}")
        mm = "VMASKMOVPS" if es == 4 else "VMASKMOVPD"
        for i in range(VL):
            e(f"\tMOVQ {8 * i}(R8), BX")
            e(f"\t{mm} (SI)(BX*1), {mreg}, {row(i)}")
    for l in body:
        e(l)
    rowmask(f"{name}_tstore")
    # columns c < DX (1 ≤ DX < VL) only: the panel ends there
    for c in range(VL - 1):
        e(f"\t{mv} {col(c)}, {c * W * es}(DI)")
        if c < VL - 2:
            e(f"\tCMPQ DX, ${c + 1}")
            e(f"\tJEQ {name}_done")
    e(f"{name}_done:")
    e("\tVZEROUPPER")
    e("\tRET")
    e()

def outerrow(isa, dt):
    # dst[j] = fma(s, b[j], +0) over n elements, 64 bytes (one 512-bit or
    # two 256-bit vectors) a step: the rows of an outer product (outer.go),
    # with the bits a micro-kernel gives a product of depth 1. stream
    # selects non-temporal stores (see storeFence).
    es = 4 if dt == "s" else 8
    ty = "float32" if dt == "s" else "float64"
    wide = isa == "avx512"
    name = f"outerRow{dt.upper()}{512 if wide else 256}"
    lab = f"{dt}{512 if wide else 256}"
    sfx = "PS" if es == 4 else "PD"
    regs = ["Z1"] if wide else ["Y1", "Y2"]
    e(f"// func {name}(dst, b *{ty}, s {ty}, n int, stream bool)")
    e(f"TEXT ·{name}(SB), NOSPLIT, $0-33")
    e("\tMOVQ dst+0(FP), DI")
    e("\tMOVQ b+8(FP), SI")
    e(f"\tVBROADCASTS{'S' if es == 4 else 'D'} s+16(FP), {'Z0' if wide else 'Y0'}")
    e("\tMOVQ n+24(FP), CX")
    e(f"\tSHRQ ${4 if es == 4 else 3}, CX")
    e("\tMOVBLZX stream+32(FP), AX")
    e("\tTESTQ AX, AX")
    e(f"\tJZ {lab}plain")
    for kind, store in (("nt", f"VMOVNT{sfx}"), ("plain", f"VMOVU{sfx}")):
        e(f"{lab}{kind}:")
        for r in regs:
            e(f"\t{('VPXORD' if es == 4 else 'VPXORQ') + ' ' if wide else 'VXOR' + sfx + ' '}{r}, {r}, {r}")
        for i, r in enumerate(regs):
            e(f"\tVFMADD231{sfx} {f'{32 * i}' if i else ''}(SI), {'Z0' if wide else 'Y0'}, {r}")
        for i, r in enumerate(regs):
            e(f"\t{store} {r}, {f'{32 * i}' if i else ''}(DI)")
        e("\tADDQ $64, SI")
        e("\tADDQ $64, DI")
        e("\tDECQ CX")
        e(f"\tJNZ {lab}{kind}")
        e("\tVZEROUPPER")
        e("\tRET")
    e()


e("// Code generated by _gen/asmgen.py; DO NOT EDIT.")
e()
e("//go:build !purego")
e()
e('#include "textflag.h"')
e()
kernel("sgemmAVX512", "avx512", "s", 12, 2, unroll=4, pfc=True)
kernel("dgemmAVX512", "avx512", "d", 12, 2, unroll=4, pfc=True)
kernel("sgemmAVX2", "avx2", "s", 6, 2, unroll=4, pfc=True)
kernel("dgemmAVX2", "avx2", "d", 6, 2, unroll=4, pfc=True)
# Narrower AVX-512 kernels for a last panel of at most 4 or 8 rows, so that
# the 12-row kernel does not compute rows that are thrown away.
kernel("sgemmAVX512x4", "avx512", "s", 4, 2, unroll=4, pfc=True)
kernel("sgemmAVX512x8", "avx512", "s", 8, 2, unroll=4, pfc=True)
kernel("dgemmAVX512x4", "avx512", "d", 4, 2, unroll=4, pfc=True)
kernel("dgemmAVX512x8", "avx512", "d", 8, 2, unroll=4, pfc=True)
# And AVX2 ones for a last panel of at most 3 or 4 rows of the 6-row kernels
# (the common widths 64, 256 and 1024 leave 4, and 128 and 512 leave 2).
kernel("sgemmAVX2x3", "avx2", "s", 3, 2, unroll=4, pfc=True)
kernel("sgemmAVX2x4", "avx2", "s", 4, 2, unroll=4, pfc=True)
kernel("dgemmAVX2x3", "avx2", "d", 3, 2, unroll=4, pfc=True)
kernel("dgemmAVX2x4", "avx2", "d", 4, 2, unroll=4, pfc=True)
copyrows("copyAVX512S", "s")
copyrows("copyAVX512D", "d")
copyrows("copyAVX2S", "s", "avx2")
copyrows("copyAVX2D", "d", "avx2")
trans("transAVX512S", "avx512", "s")
trans("transAVX512D", "avx512", "d")
trans("transAVX2S", "avx2", "s")
trans("transAVX2D", "avx2", "d")
trans("transAVX512S12", "avx512", "s", 12)
trans("transAVX512D12", "avx512", "d", 12)
trans("transAVX2D12", "avx2", "d", 12)
trans("transAVX2S6", "avx2", "s", 6)
trans("transAVX2D6", "avx2", "d", 6)
for line in """The rows of an outer product (see outer.go): dst[j] = fma(s, b[j], +0),
the bits a micro-kernel gives a product of depth 1, for n elements, n a
multiple of 64 bytes' worth, dst aligned to 64 bytes. With stream set the
stores are non-temporal (they bypass the caches: the rows are not read
again soon); storeFence orders them before later stores, once a product's
rows are written (a fence after every row drained the write-combining
buffers each time: 2.4 times slower).""".split("\n"):
    e("// " + line)
e()
e("// func storeFence()")
e("TEXT ·storeFence(SB), NOSPLIT, $0-0")
e("\tSFENCE")
e("\tRET")
e()
for isa in ("avx512", "avx2"):
    for dt in "sd":
        outerrow(isa, dt)
print("\n".join(out))
