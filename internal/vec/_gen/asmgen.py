#!/usr/bin/env python3
"""Generates vec_amd64.s (run: python3 _gen/asmgen.py > vec_amd64.s).

AVX2 loops over n elements, n a multiple of one block (4 vectors: 32
float32 or 16 float64); the Go side handles the tail.
"""
out = []
def e(s=""): out.append(s)

def head(name, sig, args):
    e(f"// func {name}{sig}")
    e(f"TEXT ·{name}(SB), NOSPLIT, $0-{args}")

def ones(es, r):
    # broadcast 1.0 of the element size es into Y{r}
    if es == 4:
        e("\tMOVL $0x3f800000, AX"); e(f"\tVMOVD AX, X{r}"); e(f"\tVBROADCASTSS X{r}, Y{r}")
    else:
        e("\tMOVQ $0x3ff0000000000000, AX"); e(f"\tVMOVQ AX, X{r}"); e(f"\tVBROADCASTSD X{r}, Y{r}")

def loop(name, es, body, ptrs, step_elems):
    # ptrs: list of registers advanced by 128 bytes per iteration
    e(f"\tSHRQ ${7 - (2 if es == 4 else 3)}, CX")  # n / (128/es)
    e(f"\tJZ {name}_done")
    e("\tPCALIGN $32")
    e(f"{name}_loop:")
    body()
    for r in ptrs:
        e(f"\tADDQ $128, {r}")
    e("\tDECQ CX")
    e(f"\tJNZ {name}_loop")
    e(f"{name}_done:")
    e("\tVZEROUPPER")
    e("\tRET")
    e()

for dt, es, ty in (("F32", 4, "float32"), ("F64", 8, "float64")):
    sfx = "PS" if es == 4 else "PD"
    mov = "VMOVUPS" if es == 4 else "VMOVUPD"
    bc = "VBROADCASTSS" if es == 4 else "VBROADCASTSD"
    # binary ops: dst = a op b
    for op, ins in (("add", "VADD"), ("sub", "VSUB"), ("mul", "VMUL")):
        name = f"{op}{dt}AVX2"
        head(name, f"(dst, a, b *{ty}, n int)", 32)
        e("\tMOVQ dst+0(FP), DI"); e("\tMOVQ a+8(FP), SI"); e("\tMOVQ b+16(FP), DX"); e("\tMOVQ n+24(FP), CX")
        def body():
            for v in range(4):
                e(f"\t{mov} {32 * v}(SI), Y{v}")
            for v in range(4):
                e(f"\t{ins}{sfx} {32 * v}(DX), Y{v}, Y{v}")
            for v in range(4):
                e(f"\t{mov} Y{v}, {32 * v}(DI)")
        loop(name, es, body, ["DI", "SI", "DX"], 0)
    # axpy: dst += alpha*x
    name = f"axpy{dt}AVX2"
    head(name, f"(dst *{ty}, alpha {ty}, x *{ty}, n int)", 32)
    e("\tMOVQ dst+0(FP), DI"); e(f"\t{bc} alpha+8(FP), Y15"); e("\tMOVQ x+16(FP), SI"); e("\tMOVQ n+24(FP), CX")
    def body():
        for v in range(4):
            e(f"\t{mov} {32 * v}(DI), Y{v}")
        for v in range(4):
            e(f"\tVFMADD231{sfx} {32 * v}(SI), Y15, Y{v}")
        for v in range(4):
            e(f"\t{mov} Y{v}, {32 * v}(DI)")
    loop(name, es, body, ["DI", "SI"], 0)
    # scale: dst = alpha*x
    name = f"scale{dt}AVX2"
    head(name, f"(dst *{ty}, alpha {ty}, x *{ty}, n int)", 32)
    e("\tMOVQ dst+0(FP), DI"); e(f"\t{bc} alpha+8(FP), Y15"); e("\tMOVQ x+16(FP), SI"); e("\tMOVQ n+24(FP), CX")
    def body():
        for v in range(4):
            e(f"\tVMUL{sfx} {32 * v}(SI), Y15, Y{v}")
        for v in range(4):
            e(f"\t{mov} Y{v}, {32 * v}(DI)")
    loop(name, es, body, ["DI", "SI"], 0)
    # relu: dst = x if x > 0 or x is NaN, else 0
    name = f"relu{dt}AVX2"
    head(name, f"(dst, x *{ty}, n int)", 24)
    e("\tMOVQ dst+0(FP), DI"); e("\tMOVQ x+8(FP), SI"); e("\tMOVQ n+16(FP), CX")
    e("\tVXORPS Y15, Y15, Y15")
    def body():
        for v in range(4):
            e(f"\t{mov} {32 * v}(SI), Y{v}")
        for v in range(4):
            e(f"\tVCMP{sfx} $6, Y15, Y{v}, Y{v + 4}")  # NLE_UQ: !(x <= 0)
        for v in range(4):
            e(f"\tVAND{sfx} Y{v}, Y{v + 4}, Y{v}")
        for v in range(4):
            e(f"\t{mov} Y{v}, {32 * v}(DI)")
    loop(name, es, body, ["DI", "SI"], 0)
    # relu backward: dst = g where x > 0, else 0
    name = f"reluGrad{dt}AVX2"
    head(name, f"(dst, grad, x *{ty}, n int)", 32)
    e("\tMOVQ dst+0(FP), DI"); e("\tMOVQ grad+8(FP), SI"); e("\tMOVQ x+16(FP), DX"); e("\tMOVQ n+24(FP), CX")
    e("\tVXORPS Y15, Y15, Y15")
    def body():
        for v in range(4):
            e(f"\t{mov} {32 * v}(DX), Y{v}")
        for v in range(4):
            e(f"\tVCMP{sfx} $14, Y15, Y{v}, Y{v}")  # GT_OS: x > 0
        for v in range(4):
            e(f"\tVAND{sfx} {32 * v}(SI), Y{v}, Y{v}")
        for v in range(4):
            e(f"\t{mov} Y{v}, {32 * v}(DI)")
    loop(name, es, body, ["DI", "SI", "DX"], 0)
    # tanh backward from the output: dst = g*(1 - y*y), each step rounded (no FMA)
    name = f"tanhGrad{dt}AVX2"
    head(name, f"(dst, grad, y *{ty}, n int)", 32)
    e("\tMOVQ dst+0(FP), DI"); e("\tMOVQ grad+8(FP), SI"); e("\tMOVQ y+16(FP), DX"); e("\tMOVQ n+24(FP), CX")
    ones(es, 15)
    def body():
        for v in range(4):
            e(f"\t{mov} {32 * v}(DX), Y{v}")
        for v in range(4):
            e(f"\tVMUL{sfx} Y{v}, Y{v}, Y{v}")
        for v in range(4):
            e(f"\tVSUB{sfx} Y{v}, Y15, Y{v}")  # 1 - y*y
        for v in range(4):
            e(f"\tVMUL{sfx} {32 * v}(SI), Y{v}, Y{v}")
        for v in range(4):
            e(f"\t{mov} Y{v}, {32 * v}(DI)")
    loop(name, es, body, ["DI", "SI", "DX"], 0)
    # scaled product: dst = (a*b)*(s*c), each product rounded (no FMA)
    name = f"scaledProduct{dt}AVX2"
    head(name, f"(dst, a, b, c *{ty}, s {ty}, n int)", 48)
    e("\tMOVQ dst+0(FP), DI"); e("\tMOVQ a+8(FP), SI"); e("\tMOVQ b+16(FP), DX"); e("\tMOVQ c+24(FP), R8")
    e(f"\t{bc} s+32(FP), Y15"); e("\tMOVQ n+40(FP), CX")
    def body():
        for v in range(4):
            e(f"\t{mov} {32 * v}(SI), Y{v}")
        for v in range(4):
            e(f"\tVMUL{sfx} {32 * v}(DX), Y{v}, Y{v}")  # a*b
        for v in range(4):
            e(f"\tVMUL{sfx} {32 * v}(R8), Y15, Y{v + 4}")  # s*c
        for v in range(4):
            e(f"\tVMUL{sfx} Y{v + 4}, Y{v}, Y{v}")
        for v in range(4):
            e(f"\t{mov} Y{v}, {32 * v}(DI)")
    loop(name, es, body, ["DI", "SI", "DX", "R8"], 0)
    # scaled product's three cotangents: d0 = (g*b)*(s*c), d1 = (g*a)*(s*c), d2 = (g*a)*(s*b)
    name = f"scaledProduct3{dt}AVX2"
    head(name, f"(d0, d1, d2, gr, a, b, c *{ty}, s {ty}, n int)", 72)
    e("\tMOVQ d0+0(FP), DI"); e("\tMOVQ d1+8(FP), R9"); e("\tMOVQ d2+16(FP), R10"); e("\tMOVQ gr+24(FP), R11")
    e("\tMOVQ a+32(FP), SI"); e("\tMOVQ b+40(FP), DX"); e("\tMOVQ c+48(FP), R8")
    e(f"\t{bc} s+56(FP), Y15"); e("\tMOVQ n+64(FP), CX")
    def body():
        for v in range(4):
            o = 32 * v
            e(f"\t{mov} {o}(R11), Y0")                 # g
            e(f"\tVMUL{sfx} {o}(R8), Y15, Y1")          # s*c
            e(f"\tVMUL{sfx} {o}(DX), Y15, Y2")          # s*b
            e(f"\tVMUL{sfx} {o}(SI), Y0, Y3")           # g*a
            e(f"\tVMUL{sfx} {o}(DX), Y0, Y4")           # g*b
            e(f"\tVMUL{sfx} Y1, Y4, Y4")                # (g*b)*(s*c)
            e(f"\tVMUL{sfx} Y1, Y3, Y5")                # (g*a)*(s*c)
            e(f"\tVMUL{sfx} Y2, Y3, Y6")                # (g*a)*(s*b)
            e(f"\t{mov} Y4, {o}(DI)"); e(f"\t{mov} Y5, {o}(R9)"); e(f"\t{mov} Y6, {o}(R10)")
    loop(name, es, body, ["DI", "R9", "R10", "R11", "SI", "DX", "R8"], 0)
    # tanh_grad's two cotangents: dg = gg*(1 - y*y), dy = (gg*g)*(s*y)
    name = f"tanhGradVJP{dt}AVX2"
    head(name, f"(dg, dy, gg, gr, y *{ty}, s {ty}, n int)", 56)
    e("\tMOVQ dg+0(FP), DI"); e("\tMOVQ dy+8(FP), R9"); e("\tMOVQ gg+16(FP), R11"); e("\tMOVQ gr+24(FP), SI")
    e("\tMOVQ y+32(FP), DX"); e(f"\t{bc} s+40(FP), Y15"); e("\tMOVQ n+48(FP), CX")
    ones(es, 14)
    def body():
        for v in range(4):
            o = 32 * v
            e(f"\t{mov} {o}(DX), Y0")                  # y
            e(f"\t{mov} {o}(R11), Y1")                 # gg
            e(f"\tVMUL{sfx} Y0, Y0, Y2")                # y*y
            e(f"\tVSUB{sfx} Y2, Y14, Y2")               # 1 - y*y
            e(f"\tVMUL{sfx} Y2, Y1, Y2")                # gg*(1 - y*y)
            e(f"\tVMUL{sfx} {o}(SI), Y1, Y3")           # gg*g
            e(f"\tVMUL{sfx} Y0, Y15, Y4")               # s*y
            e(f"\tVMUL{sfx} Y4, Y3, Y3")                # (gg*g)*(s*y)
            e(f"\t{mov} Y2, {o}(DI)"); e(f"\t{mov} Y3, {o}(R9)")
    loop(name, es, body, ["DI", "R9", "R11", "SI", "DX"], 0)
    # sum
    name = f"sum{dt}AVX2"
    head(name, f"(x *{ty}, n int) {ty}", 16 + es)
    e("\tMOVQ x+0(FP), SI"); e("\tMOVQ n+8(FP), CX")
    for v in range(4):
        e(f"\tVXORPS Y{v}, Y{v}, Y{v}")
    e(f"\tSHRQ ${7 - (2 if es == 4 else 3)}, CX")
    e(f"\tJZ {name}_reduce")
    e("\tPCALIGN $32")
    e(f"{name}_loop:")
    for v in range(4):
        e(f"\tVADD{sfx} {32 * v}(SI), Y{v}, Y{v}")
    e("\tADDQ $128, SI"); e("\tDECQ CX"); e(f"\tJNZ {name}_loop")
    e(f"{name}_reduce:")
    e(f"\tVADD{sfx} Y1, Y0, Y0"); e(f"\tVADD{sfx} Y3, Y2, Y2"); e(f"\tVADD{sfx} Y2, Y0, Y0")
    e("\tVEXTRACTF128 $1, Y0, X1")
    e(f"\tVADD{sfx} X1, X0, X0")
    if es == 4:
        e("\tVMOVHLPS X0, X0, X1")
        e("\tVADDPS X1, X0, X0")
        e("\tVMOVSHDUP X0, X1")
        e("\tVADDSS X1, X0, X0")
        e(f"\tMOVSS X0, ret+16(FP)")
    else:
        e("\tVUNPCKHPD X0, X0, X1")
        e("\tVADDSD X1, X0, X0")
        e(f"\tMOVSD X0, ret+16(FP)")
    e("\tVZEROUPPER")
    e("\tRET")
    e()

print("// Code generated by _gen/asmgen.py; DO NOT EDIT.\n\n//go:build !purego\n\n#include \"textflag.h\"\n")
print("\n".join(out))
