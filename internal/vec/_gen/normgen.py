#!/usr/bin/env python3
"""Generates norm_amd64.s (run from internal/vec: python3 _gen/normgen.py > norm_amd64.s).

The fused LayerNorm/RMSNorm row kernels for float32 (see norm.go). Every
value is widened to float64 and every operation is the one the Go kernels
in package internal/rownorm perform, in the same order, without FMA: the row sums keep
four partial sums (lane k of a 4-lane float64 vector takes the columns
j ≡ k mod 4, the columns past the last multiple of four go to lane 0 one
by one) and end as (s0 + s1) + (s2 + s3). So the results are the same to
the bit as the Go loops'.

Rows go four at a time (then one at a time): the four rows' partial sums
are independent chains, which hides the latency of the additions, and
gamma, beta and the dgamma/dbeta accumulators are loaded once for the four.
"""

out = []


def e(s=""):
    out.append(s)


def ins(s):
    e("\t" + s)


# x, g, y and dx are addressed row by row from two row pointers and the row
# stride DX: rows 0 and 1 from P0, rows 2 and 3 from P2.
def row(p0, p2, r):
    return [f"({p0})", f"({p0})(DX*1)", f"({p2})", f"({p2})(DX*1)"][r]


# ---------------------------------------------------------------------------
# forward

# Arguments (ABI0): x+0 y+8 gamma+16 beta+24 stats+32 scratch+40 rows+48
# c+56 eps+64 flags+72. flags: 1 = rms (no mean, stats hold rstd only),
# 2 = beta present. The first pass over a row group widens x to float64 in
# the scratch (4 columns of each of the n rows, n*32 bytes a chunk; one
# column, n*8 bytes, in the tail); the later passes read it there.
# Frame: 0 xg, 8 yg, 16 stats pointer, 24 rows left, 32 C as float64,
# 40 eps, 48 1.0, 56 flags; per row r: MEAN r*32+64, RSTD r*32+192,
# PART r*32+320 (the four partial sums).
FXG, FYG, FST, FROWS, FCF, FEPS, FONE, FFLAGS = 0, 8, 16, 24, 32, 40, 48, 56


def MEAN(r):
    return f"{64 + 32 * r}(SP)"


def RSTD(r):
    return f"{192 + 32 * r}(SP)"


def PART(r, k=0):
    return f"{320 + 32 * r + 8 * k}(SP)"


def fwd_body(n, L, z=False):
    """Statistics and y for n rows (4 or 1) at xg/yg; L labels this copy.
    z: the passes that read the widened x from the scratch take the rows in
    pairs, one 512-bit vector holding columns j..j+3 of rows 2p and 2p+1
    (the same lanes, so the same partial sums, as two 256-bit vectors)."""
    rows = range(n)
    z = z and n == 4

    def pointers():
        ins(f"MOVQ {FXG}(SP), SI")
        if n == 4:
            ins("LEAQ (SI)(DX*2), R8")
        ins("MOVQ scratch+40(FP), R13")

    def advance(w):
        ins(f"ADDQ ${4 * w}, SI")
        if n == 4:
            ins(f"ADDQ ${4 * w}, R8")
        ins(f"ADDQ ${8 * w * n}, R13")

    def reduce_part(r, dst, tmp):
        # dst holds s0 (with the tail); (s0 + s1) + (s2 + s3)
        ins(f"VADDSD {PART(r, 1)}, X{dst}, X{dst}")
        ins(f"VMOVSD {PART(r, 2)}, X{tmp}")
        ins(f"VADDSD {PART(r, 3)}, X{tmp}, X{tmp}")
        ins(f"VADDSD X{tmp}, X{dst}, X{dst}")

    def load_x(V, w, r, dst, conv):
        # x of row r, widened: from x (and stored to the scratch) or from the scratch
        if conv:
            if w == 4:
                ins(f"VCVTPS2PD {row('SI', 'R8', r)}, {V}{dst}")
                ins(f"VMOVUPD {V}{dst}, {32 * r}(R13)")
            else:
                ins(f"VCVTSS2SD {row('SI', 'R8', r)}, {V}{dst}, {V}{dst}")
                ins(f"VMOVSD {V}{dst}, {8 * r}(R13)")
        else:
            ins(f"{'VMOVUPD' if w == 4 else 'VMOVSD'} {8 * w * r}(R13), {V}{dst}")

    def loops(M, vec_step, tail_step, before_tail):
        ins("MOVQ BX, CX")
        ins("SHRQ $2, CX")
        ins(f"JZ {M}_tail")
        e(f"{M}_loop:")
        vec_step()
        advance(4)
        ins("DECQ CX")
        ins(f"JNZ {M}_loop")
        e(f"{M}_tail:")
        before_tail()
        ins("MOVQ BX, CX")
        ins("ANDQ $3, CX")
        ins(f"JZ {M}_end")
        e(f"{M}_tloop:")
        tail_step()
        advance(1)
        ins("DECQ CX")
        ins(f"JNZ {M}_tloop")
        e(f"{M}_end:")

    def park():
        # the partial sums to the frame, s0 back to X{r} for the tail
        for r in rows:
            ins(f"VMOVUPD Y{r}, {PART(r)}")
        for r in rows:
            ins(f"VMOVSD {PART(r)}, X{r}")

    # pass A: the mean (skipped for rms: mean 0)
    ins(f"TESTQ $1, {FFLAGS}(SP)")
    ins(f"JNZ {L}_nomean")
    pointers()
    for r in rows:
        ins(f"VXORPD Y{r}, Y{r}, Y{r}")

    def a_step(V, w, sfx):
        def f():
            for r in rows:
                load_x(V, w, r, 4 + r, True)
            for r in rows:
                ins(f"VADD{sfx} {V}{4 + r}, {V}{r}, {V}{r}")
        return f
    loops(f"{L}_a", a_step("Y", 4, "PD"), a_step("X", 1, "SD"), park)
    for r in rows:
        reduce_part(r, r, 4 + r)
        ins(f"VDIVSD {FCF}(SP), X{r}, X{r}")
        ins(f"VBROADCASTSD X{r}, Y{r}")
        ins(f"VMOVUPD Y{r}, {MEAN(r)}")
    ins(f"JMP {L}_var")
    e(f"{L}_nomean:")
    ins("VXORPD Y0, Y0, Y0")
    for r in rows:
        ins(f"VMOVUPD Y0, {MEAN(r)}")

    # pass B: Σ (x − mean)², rstd = 1/√(ss/C + eps); for rms it is the
    # first pass and widens x into the scratch
    for conv in (True, False):
        if conv:
            ins(f"JMP {L}_bc")  # rms arrives here from _nomean
        else:
            e(f"{L}_var:")
        e(f"{L}_b{'c' if conv else 'l'}:")
        pointers()
        for r in rows:
            ins(f"VXORPD Y{r}, Y{r}, Y{r}")

        def b_step(V, w, sfx, conv=conv):
            def f():
                for r in rows:
                    load_x(V, w, r, 4 + r, conv)
                if not conv:
                    # (the converting pass is rms's, whose mean is 0, and
                    # x − 0 is x to the bit, so it skips the subtraction)
                    for r in rows:
                        ins(f"VSUB{sfx} {MEAN(r)}, {V}{4 + r}, {V}{4 + r}")
                for r in rows:
                    ins(f"VMUL{sfx} {V}{4 + r}, {V}{4 + r}, {V}{4 + r}")
                for r in rows:
                    ins(f"VADD{sfx} {V}{4 + r}, {V}{r}, {V}{r}")
            return f

        def b_zstep():
            for q in range(2):
                ins(f"VMOVUPD {64 * q}(R13), Z{4 + q}")
            for q in range(2):
                ins(f"VSUBPD {MEAN(2 * q)}, Z{4 + q}, Z{4 + q}")
            for q in range(2):
                ins(f"VMULPD Z{4 + q}, Z{4 + q}, Z{4 + q}")
            for q in range(2):
                ins(f"VADDPD Z{4 + q}, Z{q}, Z{q}")

        def b_zpark():
            # Z0 = rows 0, 1 and Z1 = rows 2, 3: PART is row after row
            for q in range(2):
                ins(f"VMOVUPD Z{q}, {PART(2 * q)}")
            for r in rows:
                ins(f"VMOVSD {PART(r)}, X{r}")
        if z and not conv:
            for q in range(2):
                ins(f"VPXORQ Z{q}, Z{q}, Z{q}")  # AVX-512F (VXORPD on Z needs DQ)
            loops(f"{L}_bl", b_zstep, b_step("X", 1, "SD"), b_zpark)
        else:
            loops(f"{L}_b{'c' if conv else 'l'}", b_step("Y", 4, "PD"), b_step("X", 1, "SD"), park)
        ins(f"JMP {L}_bred")
    e(f"{L}_bred:")
    ins(f"MOVQ {FST}(SP), AX")
    for r in rows:
        reduce_part(r, r, 4 + r)
        ins(f"VDIVSD {FCF}(SP), X{r}, X{r}")
        ins(f"VADDSD {FEPS}(SP), X{r}, X{r}")
        ins(f"VSQRTSD X{r}, X{r}, X{r}")
        ins(f"VMOVSD {FONE}(SP), X{4 + r}")
        ins(f"VDIVSD X{r}, X{4 + r}, X{4 + r}")
        ins(f"VBROADCASTSD X{4 + r}, Y{r}")
        ins(f"VMOVUPD Y{r}, {RSTD(r)}")
    # the statistics: (mean, rstd) per row, or rstd alone for rms
    ins(f"TESTQ $1, {FFLAGS}(SP)")
    ins(f"JNZ {L}_strms")
    for r in rows:
        ins(f"VMOVSD {MEAN(r)}, X8")
        ins(f"VMOVSD X8, {16 * r}(AX)")
        ins(f"VMOVSD X{4 + r}, {16 * r + 8}(AX)")
    ins(f"JMP {L}_y")
    e(f"{L}_strms:")
    for r in rows:
        ins(f"VMOVSD X{4 + r}, {8 * r}(AX)")

    # pass C: y = (x − mean)·rstd·gamma (+ beta); SI and R8 walk y here
    e(f"{L}_y:")
    for beta in (True, False):
        M = f"{L}_yb" if beta else f"{L}_yn"
        if beta:
            ins(f"TESTQ $2, {FFLAGS}(SP)")
            ins(f"JZ {L}_yn")
        else:
            e(f"{L}_yn:")
        ins(f"MOVQ {FYG}(SP), SI")
        if n == 4:
            ins("LEAQ (SI)(DX*2), R8")
        ins("MOVQ scratch+40(FP), R13")
        ins("MOVQ gamma+16(FP), R10")
        if beta:
            ins("MOVQ beta+24(FP), R11")

        def c_step(V, w, sfx, beta=beta):
            def f():
                if w == 4:
                    ins("VCVTPS2PD (R10), Y8")
                    if beta:
                        ins("VCVTPS2PD (R11), Y9")
                else:
                    ins("VCVTSS2SD (R10), X8, X8")
                    if beta:
                        ins("VCVTSS2SD (R11), X9, X9")
                for r in rows:
                    load_x(V, w, r, r, False)
                for r in rows:
                    ins(f"VSUB{sfx} {MEAN(r)}, {V}{r}, {V}{r}")
                for r in rows:
                    ins(f"VMUL{sfx} {RSTD(r)}, {V}{r}, {V}{r}")
                for r in rows:
                    ins(f"VMUL{sfx} {V}8, {V}{r}, {V}{r}")
                if beta:
                    for r in rows:
                        ins(f"VADD{sfx} {V}9, {V}{r}, {V}{r}")
                for r in rows:
                    if w == 4:
                        ins(f"VCVTPD2PSY Y{r}, X{r}")
                        ins(f"VMOVUPS X{r}, {row('SI', 'R8', r)}")
                    else:
                        ins(f"VCVTSD2SS X{r}, X{r}, X{r}")
                        ins(f"VMOVSS X{r}, {row('SI', 'R8', r)}")
                ins(f"ADDQ ${4 * w}, R10")
                if beta:
                    ins(f"ADDQ ${4 * w}, R11")
            return f

        def c_zstep(beta=beta):
            # gamma (and beta) widened and doubled: the same columns for both rows
            ins("VCVTPS2PD (R10), Y8")
            ins("VINSERTF64X4 $1, Y8, Z8, Z8")
            if beta:
                ins("VCVTPS2PD (R11), Y9")
                ins("VINSERTF64X4 $1, Y9, Z9, Z9")
            for q in range(2):
                ins(f"VMOVUPD {64 * q}(R13), Z{q}")
            for q in range(2):
                ins(f"VSUBPD {MEAN(2 * q)}, Z{q}, Z{q}")
            for q in range(2):
                ins(f"VMULPD {RSTD(2 * q)}, Z{q}, Z{q}")
            for q in range(2):
                ins(f"VMULPD Z8, Z{q}, Z{q}")
            if beta:
                for q in range(2):
                    ins(f"VADDPD Z9, Z{q}, Z{q}")
            for q in range(2):
                ins(f"VCVTPD2PS Z{q}, Y{q}")
                ins(f"VMOVUPS X{q}, {row('SI', 'R8', 2 * q)}")
                ins(f"VEXTRACTF128 $1, Y{q}, {row('SI', 'R8', 2 * q + 1)}")
            ins("ADDQ $16, R10")
            if beta:
                ins("ADDQ $16, R11")
        loops(M, c_zstep if z else c_step("Y", 4, "PD"), c_step("X", 1, "SD"), lambda: None)
        ins(f"JMP {L}_done")
    e(f"{L}_done:")


def forward(z):
    name = "normFwdF32AVX512" if z else "normFwdF32AVX2"
    e(f"// func {name}(x, y, gamma, beta *float32, stats, scratch *float64, rows, c int, eps float64, flags int)")
    e(f"TEXT ·{name}(SB), 0, $448-80")
    ins("MOVQ x+0(FP), AX")
    ins(f"MOVQ AX, {FXG}(SP)")
    ins("MOVQ y+8(FP), AX")
    ins(f"MOVQ AX, {FYG}(SP)")
    ins("MOVQ stats+32(FP), AX")
    ins(f"MOVQ AX, {FST}(SP)")
    ins("MOVQ rows+48(FP), AX")
    ins(f"MOVQ AX, {FROWS}(SP)")
    ins("MOVQ flags+72(FP), AX")
    ins(f"MOVQ AX, {FFLAGS}(SP)")
    ins("MOVQ c+56(FP), BX")  # BX: C for the whole call
    ins("CVTSQ2SD BX, X0")
    ins(f"MOVSD X0, {FCF}(SP)")
    ins("MOVSD eps+64(FP), X0")
    ins(f"MOVSD X0, {FEPS}(SP)")
    ins("MOVQ $0x3ff0000000000000, AX")
    ins(f"MOVQ AX, {FONE}(SP)")
    ins("LEAQ (BX*4), DX")  # DX: the row stride in bytes
    # the stats advance by 8 bytes a row (rms) or 16
    ins("MOVQ $8, R12")
    ins(f"TESTQ $1, {FFLAGS}(SP)")
    ins("JNZ fwd_st8")
    ins("MOVQ $16, R12")
    e("fwd_st8:")
    e("fwd_g4:")
    ins(f"CMPQ {FROWS}(SP), $4")
    ins("JLT fwd_g1")
    fwd_body(4, "f4", z)
    ins("LEAQ (DX)(DX*1), AX")
    ins("SHLQ $1, AX")
    ins(f"ADDQ AX, {FXG}(SP)")
    ins(f"ADDQ AX, {FYG}(SP)")
    ins("LEAQ (R12*4), AX")
    ins(f"ADDQ AX, {FST}(SP)")
    ins(f"SUBQ $4, {FROWS}(SP)")
    ins("JMP fwd_g4")
    e("fwd_g1:")
    ins(f"CMPQ {FROWS}(SP), $0")
    ins("JEQ fwd_end")
    fwd_body(1, "f1")
    ins(f"ADDQ DX, {FXG}(SP)")
    ins(f"ADDQ DX, {FYG}(SP)")
    ins(f"ADDQ R12, {FST}(SP)")
    ins(f"DECQ {FROWS}(SP)")
    ins("JMP fwd_g1")
    e("fwd_end:")
    ins("VZEROUPPER")
    ins("RET")
    e()


# ---------------------------------------------------------------------------
# backward

# Arguments: x+0 g+8 gamma+16 dx+24 stats+32 accG+40 accB+48 scratch+56
# rows+64 c+72 flags+80. flags: 1 = rms, 2 = dx wanted.
# Frame: 0 xg, 8 gg, 16 dxg, 24 stats pointer, 32 rows left, 40 C as
# float64, 48 flags; per row r (32 bytes each, broadcast): MEAN 64, RSTD
# 192, MU 320, MUX 448, and the partial sums of Σu (PS 576) and Σu·x̂ (PD 704).
BXG, BGG, BDXG, BST, BROWS, BCF, BFLAGS = 0, 8, 16, 24, 32, 40, 48


def slot(base, r, k=0):
    return f"{base + 32 * r + 8 * k}(SP)"


def bwd_body(n, L, z=False):
    rows = range(n)
    z = z and n == 4
    BMEAN, BRSTD, BMU, BMUX, BPS, BPD = 64, 192, 320, 448, 576, 704
    # the row statistics, broadcast
    ins(f"MOVQ {BST}(SP), AX")
    ins(f"TESTQ $1, {BFLAGS}(SP)")
    ins(f"JNZ {L}_strms")
    for r in rows:
        ins(f"VBROADCASTSD {16 * r}(AX), Y0")
        ins(f"VMOVUPD Y0, {slot(BMEAN, r)}")
        ins(f"VBROADCASTSD {16 * r + 8}(AX), Y0")
        ins(f"VMOVUPD Y0, {slot(BRSTD, r)}")
    ins(f"JMP {L}_p1")
    e(f"{L}_strms:")
    ins("VXORPD Y1, Y1, Y1")
    for r in rows:
        ins(f"VMOVUPD Y1, {slot(BMEAN, r)}")
        ins(f"VBROADCASTSD {8 * r}(AX), Y0")
        ins(f"VMOVUPD Y0, {slot(BRSTD, r)}")

    # pass 1: x̂ and u = g·gamma to the scratch, dgamma += g·x̂, dbeta += g,
    # Σu and Σu·x̂. Scratch chunk: x̂ of the n rows then u of the n rows,
    # 4 columns each (n*64 bytes), or 1 column each in the tail (n*16).
    e(f"{L}_p1:")
    ins(f"MOVQ {BXG}(SP), SI")
    ins(f"MOVQ {BGG}(SP), DI")
    if n == 4:
        ins("LEAQ (SI)(DX*2), R8")
        ins("LEAQ (DI)(DX*2), R9")
    ins("MOVQ gamma+16(FP), R10")
    ins("MOVQ accG+40(FP), R11")
    ins("MOVQ accB+48(FP), R12")
    ins("MOVQ scratch+56(FP), R13")
    for r in rows:
        ins(f"VXORPD Y{r}, Y{r}, Y{r}")
        ins(f"VXORPD Y{4 + r}, Y{4 + r}, Y{4 + r}")
    ins("MOVQ BX, CX")
    ins("SHRQ $2, CX")
    ins(f"JZ {L}_1tail")
    ptr4 = ["SI", "DI", "R10"] + (["R8", "R9"] if n == 4 else [])

    def step(V, w, ld, st, sfx):
        # one chunk of w columns (4: vector, 1: scalar); V: register prefix
        if w == 4:
            ins(f"VCVTPS2PD (R10), {V}8")
        else:
            ins(f"VCVTSS2SD (R10), {V}8, {V}8")
        ins(f"{ld} (R11), {V}9")
        ins(f"{ld} (R12), {V}10")
        for r in rows:
            if w == 4:
                ins(f"VCVTPS2PD {row('SI', 'R8', r)}, {V}11")
            else:
                ins(f"VCVTSS2SD {row('SI', 'R8', r)}, {V}11, {V}11")
            ins(f"VSUB{sfx} {slot(BMEAN, r)}, {V}11, {V}11")
            ins(f"VMUL{sfx} {slot(BRSTD, r)}, {V}11, {V}11")  # x̂
            if w == 4:
                ins(f"VCVTPS2PD {row('DI', 'R9', r)}, {V}12")
            else:
                ins(f"VCVTSS2SD {row('DI', 'R9', r)}, {V}12, {V}12")
            ins(f"VMUL{sfx} {V}11, {V}12, {V}13")  # g·x̂
            ins(f"VADD{sfx} {V}13, {V}9, {V}9")
            ins(f"VADD{sfx} {V}12, {V}10, {V}10")
            ins(f"{st} {V}11, {8 * w * r}(R13)")
            ins(f"VMUL{sfx} {V}8, {V}12, {V}13")  # u = g·gamma
            ins(f"{st} {V}13, {8 * w * (n + r)}(R13)")
            ins(f"VADD{sfx} {V}13, {V}{r}, {V}{r}")
            ins(f"VMUL{sfx} {V}11, {V}13, {V}14")
            ins(f"VADD{sfx} {V}14, {V}{4 + r}, {V}{4 + r}")
        ins(f"{st} {V}9, (R11)")
        ins(f"{st} {V}10, (R12)")
        for p in ptr4:
            ins(f"ADDQ ${4 * w}, {p}")
        ins(f"ADDQ ${8 * w}, R11")
        ins(f"ADDQ ${8 * w}, R12")
        ins(f"ADDQ ${16 * w * n}, R13")

    e(f"{L}_1loop:")
    step("Y", 4, "VMOVUPD", "VMOVUPD", "PD")
    ins("DECQ CX")
    ins(f"JNZ {L}_1loop")
    e(f"{L}_1tail:")
    for r in rows:
        ins(f"VMOVUPD Y{r}, {slot(BPS, r)}")
        ins(f"VMOVUPD Y{4 + r}, {slot(BPD, r)}")
    for r in rows:
        ins(f"VMOVSD {slot(BPS, r)}, X{r}")
        ins(f"VMOVSD {slot(BPD, r)}, X{4 + r}")
    ins("MOVQ BX, CX")
    ins("ANDQ $3, CX")
    ins(f"JZ {L}_1red")
    e(f"{L}_1tloop:")
    step("X", 1, "VMOVSD", "VMOVSD", "SD")
    ins("DECQ CX")
    ins(f"JNZ {L}_1tloop")
    e(f"{L}_1red:")
    for r in rows:
        for acc, base, dst in ((r, BPS, BMU), (4 + r, BPD, BMUX)):
            ins(f"VADDSD {slot(base, r, 1)}, X{acc}, X{acc}")
            ins(f"VMOVSD {slot(base, r, 2)}, X8")
            ins(f"VADDSD {slot(base, r, 3)}, X8, X8")
            ins(f"VADDSD X8, X{acc}, X{acc}")
            ins(f"VDIVSD {BCF}(SP), X{acc}, X{acc}")
            ins(f"VBROADCASTSD X{acc}, Y{acc}")
            ins(f"VMOVUPD Y{acc}, {slot(dst, r)}")
    # rms: mean(u) is not subtracted
    ins(f"TESTQ $1, {BFLAGS}(SP)")
    ins(f"JZ {L}_p2")
    ins("VXORPD Y0, Y0, Y0")
    for r in rows:
        ins(f"VMOVUPD Y0, {slot(BMU, r)}")

    # pass 2: dx = rstd·((u − mean(u)) − x̂·mean(u·x̂))
    e(f"{L}_p2:")
    ins(f"TESTQ $2, {BFLAGS}(SP)")
    ins(f"JZ {L}_done")
    ins(f"MOVQ {BDXG}(SP), SI")
    if n == 4:
        ins("LEAQ (SI)(DX*2), R8")
    ins("MOVQ scratch+56(FP), R13")
    ins("MOVQ BX, CX")
    ins("SHRQ $2, CX")
    ins(f"JZ {L}_2tail")

    def step2(V, w, ld, sfx):
        for r in rows:
            ins(f"{ld} {8 * w * (n + r)}(R13), {V}{r}")
            ins(f"VSUB{sfx} {slot(BMU, r)}, {V}{r}, {V}{r}")
            ins(f"{ld} {8 * w * r}(R13), {V}{4 + r}")
            ins(f"VMUL{sfx} {slot(BMUX, r)}, {V}{4 + r}, {V}{4 + r}")
            ins(f"VSUB{sfx} {V}{4 + r}, {V}{r}, {V}{r}")
            ins(f"VMUL{sfx} {slot(BRSTD, r)}, {V}{r}, {V}{r}")
            if w == 4:
                ins(f"VCVTPD2PSY Y{r}, X{r}")
                ins(f"VMOVUPS X{r}, {row('SI', 'R8', r)}")
            else:
                ins(f"VCVTSD2SS X{r}, X{r}, X{r}")
                ins(f"VMOVSS X{r}, {row('SI', 'R8', r)}")
        ins(f"ADDQ ${4 * w}, SI")
        if n == 4:
            ins(f"ADDQ ${4 * w}, R8")
        ins(f"ADDQ ${16 * w * n}, R13")

    def zstep2():
        # rows in pairs, as in the forward pass
        for q in range(2):
            ins(f"VMOVUPD {32 * (n + 2 * q)}(R13), Z{q}")
            ins(f"VSUBPD {slot(BMU, 2 * q)}, Z{q}, Z{q}")
            ins(f"VMOVUPD {64 * q}(R13), Z{4 + q}")
            ins(f"VMULPD {slot(BMUX, 2 * q)}, Z{4 + q}, Z{4 + q}")
            ins(f"VSUBPD Z{4 + q}, Z{q}, Z{q}")
            ins(f"VMULPD {slot(BRSTD, 2 * q)}, Z{q}, Z{q}")
            ins(f"VCVTPD2PS Z{q}, Y{q}")
            ins(f"VMOVUPS X{q}, {row('SI', 'R8', 2 * q)}")
            ins(f"VEXTRACTF128 $1, Y{q}, {row('SI', 'R8', 2 * q + 1)}")
        ins("ADDQ $16, SI")
        ins("ADDQ $16, R8")
        ins(f"ADDQ ${16 * 4 * n}, R13")

    e(f"{L}_2loop:")
    if z:
        zstep2()
    else:
        step2("Y", 4, "VMOVUPD", "PD")
    ins("DECQ CX")
    ins(f"JNZ {L}_2loop")
    e(f"{L}_2tail:")
    ins("MOVQ BX, CX")
    ins("ANDQ $3, CX")
    ins(f"JZ {L}_done")
    e(f"{L}_2tloop:")
    step2("X", 1, "VMOVSD", "SD")
    ins("DECQ CX")
    ins(f"JNZ {L}_2tloop")
    e(f"{L}_done:")


def backward(z):
    name = "normBwdF32AVX512" if z else "normBwdF32AVX2"
    e(f"// func {name}(x, g, gamma, dx *float32, stats, accG, accB, scratch *float64, rows, c, flags int)")
    e(f"TEXT ·{name}(SB), 0, $832-88")
    for arg, off, slot_ in (("x", 0, BXG), ("dy", 8, BGG), ("dx", 24, BDXG), ("stats", 32, BST),
                            ("rows", 64, BROWS), ("flags", 80, BFLAGS)):
        ins(f"MOVQ {arg}+{off}(FP), AX")
        ins(f"MOVQ AX, {slot_}(SP)")
    ins("MOVQ c+72(FP), BX")
    ins("CVTSQ2SD BX, X0")
    ins(f"MOVSD X0, {BCF}(SP)")
    ins("LEAQ (BX*4), DX")
    e("bwd_g4:")
    ins(f"CMPQ {BROWS}(SP), $4")
    ins("JLT bwd_g1")
    bwd_body(4, "b4", z)
    ins("LEAQ (DX)(DX*1), AX")
    ins("SHLQ $1, AX")
    for s in (BXG, BGG, BDXG):
        ins(f"ADDQ AX, {s}(SP)")
    ins(f"TESTQ $1, {BFLAGS}(SP)")
    ins("JNZ bwd_g4rms")
    ins(f"ADDQ $64, {BST}(SP)")
    ins("JMP bwd_g4next")
    e("bwd_g4rms:")
    ins(f"ADDQ $32, {BST}(SP)")
    e("bwd_g4next:")
    ins(f"SUBQ $4, {BROWS}(SP)")
    ins("JMP bwd_g4")
    e("bwd_g1:")
    ins(f"CMPQ {BROWS}(SP), $0")
    ins("JEQ bwd_end")
    bwd_body(1, "b1")
    for s in (BXG, BGG, BDXG):
        ins(f"ADDQ DX, {s}(SP)")
    ins(f"TESTQ $1, {BFLAGS}(SP)")
    ins("JNZ bwd_g1rms")
    ins(f"ADDQ $16, {BST}(SP)")
    ins("JMP bwd_g1next")
    e("bwd_g1rms:")
    ins(f"ADDQ $8, {BST}(SP)")
    e("bwd_g1next:")
    ins(f"DECQ {BROWS}(SP)")
    ins("JMP bwd_g1")
    e("bwd_end:")
    ins("VZEROUPPER")
    ins("RET")
    e()


e("// Code generated by _gen/normgen.py; DO NOT EDIT.")
e()
e("//go:build !purego")
e()
e('#include "textflag.h"')
e()
for z in (False, True):
    forward(z)
    backward(z)
print("\n".join(out))
