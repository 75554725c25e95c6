#!/usr/bin/env python3
"""Generates simd_amd64.s (run in internal/fastmath:
python3 _gen/simdgen.py > simd_amd64.s; it needs mpmath for the tables of
gelufit.py, and prints their fit errors on stderr).

The exact GELU and its derivative have a fast path in float32 lanes
(16 with AVX-512, 8 with AVX2) for blocks whose every |x| is below about
7.9: piecewise polynomials of Φ(−|x|) and GELU′(−|x|) on 32 intervals
(8 for the AVX2 derivative), the coefficients of each lane's interval
looked up by VPERMT2PS (AVX-512) or VPERMPS (AVX2), evaluated by Horner's
scheme; see the tables below and gelufit.py. A block with a lane outside
(|x| ≥ 7.875, ±Inf, NaN: rare in a network's activations) runs the
float64 chains below as well and keeps their results for those lanes
alone, so that an element's result does not depend on its neighbours.

Error budget of the forward fast path (x < 0; x ≥ 0 is no worse, its
error in h damped by h/(1 − h) ≤ 1): GELU = x·C + a·T with h = Φ(−a) =
hi + lo + u·q(u) and T = −(lo + u·q). T is within about 2 half-ulps of
itself (its own rounding and q's, scaled by u), a·T adds one, the final
FMA one of the result; with |T| ≤ ρ·h, ρ = 0.62 over all intervals (the
first is the widest relative to Φ's decay), the relative error is at
most 2⁻²⁴·(1 + 3ρ) ≈ 1.71·10⁻⁷ plus the fit's 5·10⁻⁹, within the 2.4·10⁻⁷
of the tests; every float32 in the range measures at most 1.3·10⁻⁷
(TestGELUSweep with ADJOINT_GELU_SWEEP=all). The backward: s = GELU′(−a)
within about 2⁻²⁶ absolute (|s| < 1/2: its final rounding, a little of
the inner ones) and the fit's 5·10⁻⁹ (AVX2: 8·10⁻⁹), d = s or 1 − s (one
rounding, at most 2⁻²⁴: d < 1.13), g·d rounded once: at most about
1.6·10⁻⁷·|g| absolute, against 2.4·10⁻⁷·|g|·max(|GELU′|, 1); every float32
in range measures at most 7.8·10⁻⁸.

The float64 chains widen each float32 lane to float64, compute in
float64 lanes, and narrow the result once. GELU evaluates the algorithm
of the scalar code (fastmath.go): erfc z = t·exp(P(t) − z²) with
t = 1/(1 + z/2) (the Chebyshev fit of Numerical Recipes), exp a = 2ᵏ·q(r)
with k = round(a/ln 2) by the shifter trick, r = a − k·ln 2 in two parts
and q the degree-8 Taylor polynomial, 2ᵏ built from k's bits. The input is
first clamped to [−20, 20] (NaN kept): beyond, Φ is 0 or 1 to float64
precision and the exponentials stay in range without tests. The backward
kernel shares exp(−x²/2) between Φ and φ and takes exp(P(t)) as one
polynomial (see PC). Exp, Sigmoid, SiLU, Tanh and GELU's tanh form (and
its derivative) use the same exp on clamped arguments, in float64 lanes
only.

Each loop iteration runs two independent chains (two vectors of float64
lanes: 16 float32 with AVX-512, 8 with AVX2) so that the long dependency
chain of one element overlaps with another's; the GELU fast paths take
the same block as one vector of float32 lanes. n is a multiple of that
block; the Go side pads the tail.
"""
import math
import struct

out = []


def e(s=""):
    out.append(s)


def bits(f):
    return struct.unpack("<Q", struct.pack("<d", f))[0]


ERFC = [-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
        0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277]
FACT = [1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720,
        1.0 / 5040, 1.0 / 40320]

# name -> 64-bit pattern; each constant is stored 8 times (64 bytes).
consts = {}


def c(name, value=None, raw=None):
    if name not in consts:
        consts[name] = raw if raw is not None else bits(value)
    return f"gelutab<>+{64 * list(consts).index(name)}(SB)"


for i, v in enumerate(ERFC):
    c(f"erfc{i}", v)
for i, v in enumerate(FACT):
    c(f"exp{i}", v)
c("half_rsqrt2", 0.5 / 2 ** 0.5)
c("one", 1.0)
c("lo", -20.0)
c("hi", 20.0)
c("mhalf", -0.5)
c("log2e", 1.4426950408889634)
c("shifter", float.fromhex("0x1.8p52"))
c("ln2hi", 6.93147180369123816490e-01)
c("ln2lo", 1.90821492927058770002e-10)
c("bias", raw=1023)
c("bias_half", raw=1022)  # 2^(k-1): the factor 1/2 of Φ for free
c("absmask", raw=(1 << 63) - 1)
c("signmask", raw=1 << 63)
c("inv_sqrt2pi", 0.3989422804014327)
# exp(P(t))/2 in the backward kernel: P(t) lies in [−1.1358, 3·10⁻⁸] for
# t in [1/(1 + 20/(2√2)), 1], so the degree-10 Taylor polynomial of eᵘ/2
# at the middle, PC, is within 9·10⁻¹¹ relative there, without a range
# reduction. P(t) − PC comes from the Horner scheme of P with c₀ − PC.
PC = -0.5678612
c("erfc0_shifted", ERFC[0] - PC)
for i in range(11):
    c(f"expc{i}", 0.5 * math.exp(PC) / math.factorial(i))
c("exp_lo", -110.0)  # e^−110 < 2⁻¹⁵⁰: 0 in float32
c("exp_hi", 90.0)  # e^90 > max float32: +Inf
c("sig_hi", 110.0)
c("mtwo", -2.0)
c("tanh_tiny", 2.0 ** -12)  # tanh x rounds to x in float32 below
# GELU's tanh form x·(1 + tanh u)/2 = x·σ(v), u = √(2/π)(x + 0.044715x³),
# v = 2u; v′ = 2√(2/π)(1 + 3·0.044715x²).
GC = math.sqrt(2 / math.pi)
GA = 0.044715
c("gt_m2c", -2 * GC)
c("gt_m2ca", -2 * GC * GA)
c("gt_2c", 2 * GC)
c("gt_6ca", 6 * GC * GA)


# float32 data of the fast paths: name -> list of float32 values, each
# padded to a multiple of 16 (64 bytes); broadcast constants hold 16 copies.
consts32 = {}


def f32bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def c32(name, values=None, raw=None, off=0):
    """The address of float32 table name (created from values, or a
    broadcast of value or raw bits), plus off bytes."""
    if name not in consts32:
        if raw is not None:
            vals = [raw] * 16
        elif isinstance(values, list):
            vals = [f32bits(v) for v in values]
            vals += [0] * (-len(vals) % 16)
        else:
            vals = [f32bits(values)] * 16
        consts32[name] = vals
    start = 0
    for n, v in consts32.items():
        if n == name:
            break
        start += 4 * len(v)
    return f"gelu32tab<>+{start + off}(SB)"


# The fast paths of the exact GELU (see gelufit.py), as float32
# polynomials on intervals of a = |x| looked up by lane (VPERMT2PS on
# AVX-512: 32 entries, one instruction).
#
# Forward, Φ(−a) to float32 relative accuracy: interval j = round(y),
# y = FWD_S·a·(a + FWD_ALPHA), for a < FWD_BOUND (j ≤ 31), and the
# polynomial is in u = a − c_j. The intervals narrow as a grows (width
# about 1/(FWD_S·(2a + FWD_ALPHA))) in step with Φ(−a)'s logarithmic
# derivative (about a + 1/a), so that Φ(−a) changes by a factor of about
# e^1.1 at most across any one of them: with c_j at 63% of the interval
# (0 in the first), |h − c₀| stays below 0.53·h (0.62·h in the first), and
# the float32 roundings cost at most about (1 + 3·0.62) half-ulps of h. j is
# a monotone function of a in float32 (each rounding is), so each interval
# is fitted slightly widened to cover the ties. a − c_j is exact (Sterbenz:
# c_j/2 ≤ a ≤ 2c_j in every interval but the first, where c_0 = 0).
#
# Backward, GELU′(−a) to float32 absolute accuracy: 32 intervals of 1/4,
# j = round(4a), a < 7.875, the polynomial in u = 4a − j (exact); AVX2
# (VPERMPS: 8 entries) has 8 intervals of 1, a < 7.5, degree 8.
FWD_ALPHA, FWD_DEG = 2.0, 7
FWD_BOUND = 7.9375
BWD_S, BWD_N, BWD_DEG = 4, 32, 5
BWD_BOUND = (BWD_N - 0.5) / BWD_S
BWD2_S, BWD2_N, BWD2_DEG = 1, 8, 8
BWD2_BOUND = (BWD2_N - 0.5) / BWD2_S


def fwd_intervals():
    """FWD_S and the (lo, hi, c_j) of the forward tables."""
    import gelufit
    mp = gelufit.mp
    s = gelufit.f32(31.5 / (7.95 * (7.95 + FWD_ALPHA)))

    def a_of(y):  # s·a·(a + α) = y
        return (-FWD_ALPHA + mp.sqrt(FWD_ALPHA ** 2 + 4 * mp.mpf(y) / s)) / 2

    assert round(s * FWD_BOUND * (FWD_BOUND + FWD_ALPHA)) == 31
    ivs = []
    for j in range(32):
        lo, hi = a_of(max(j - 0.5, 0)) * (1 - 1e-6), a_of(j + 0.5) * (1 + 1e-6)
        c = 0.0 if j == 0 else gelufit.f32(lo + 0.63 * (hi - lo))
        assert j == 0 or (c / 2 <= lo and hi <= 2 * c)
        ivs.append((lo, hi, mp.mpf(c)))
    return s, ivs


FWD_S, FWD_IVS = fwd_intervals()
# a < FWD_BOUND8 keeps j ≤ 7 (y < 7.5 by a margin far above the roundings)
FWD_BOUND8 = 3.45
assert FWD_S * FWD_BOUND8 * (FWD_BOUND8 + FWD_ALPHA) < 7.49


def gelu_tables():
    import sys
    import gelufit
    log = lambda s: print(s, file=sys.stderr)
    fwd = gelufit.fit_table(gelufit.phi_neg, FWD_IVS, 1, FWD_DEG, True, True, log)
    # The forward kernel evaluates −(c₀lo + u·(c₁ + …)): all but c₀hi negated.
    for k in range(1, len(fwd)):
        fwd[k] = [-v for v in fwd[k]]
    for k, row in enumerate(fwd):
        c32(f"gfwd{k}", row)
    c32("gfwdc", [float(c) for _, _, c in FWD_IVS])
    bwd = gelufit.table(gelufit.gelu_deriv_neg, BWD_S, BWD_N, BWD_DEG, False, False, log)
    for k, row in enumerate(bwd):
        c32(f"gbwd{k}", row)
    bwd2 = gelufit.table(gelufit.gelu_deriv_neg, BWD2_S, BWD2_N, BWD2_DEG, False, False, log)
    for k, row in enumerate(bwd2):
        c32(f"gbwd2_{k}", row)
    return len(fwd), len(bwd), len(bwd2)


N_FWD, N_BWD, N_BWD2 = gelu_tables()
c32("f_abs", raw=0x7FFFFFFF)
c32("f_sign", raw=0x80000000)
c32("f_one", 1.0)
c32("f_shifter", float.fromhex("0x1.8p23"))
c32("f_fwd_s", FWD_S)
c32("f_fwd_as", FWD_S * FWD_ALPHA)
c32("f_bwd_s", float(BWD_S))
c32("f_fwd_bound", FWD_BOUND)
c32("f_fwd_bound8", FWD_BOUND8)
c32("f_bwd_bound", BWD_BOUND)
c32("f_bwd2_bound", BWD2_BOUND)


class ISA:
    def __init__(self, name, v, h, nlanes):
        self.name, self.v, self.h, self.lanes = name, v, h, nlanes

    def r(self, i):
        return f"{self.v}{i}"


AVX512 = ISA("AVX512", "Z", "Y", 8)
AVX2 = ISA("AVX2", "Y", "X", 4)


def exp(isa, arg, t1, t2, bias):
    """t1 = exp(arg)·2^(bias−1023); arg and t2 are clobbered."""
    return [
        f"VMULPD {c('log2e')}, {arg}, {t1}",
        f"VADDPD {c('shifter')}, {t1}, {t1}",  # k + shifter
        f"VSUBPD {c('shifter')}, {t1}, {t2}",  # k
        f"VFNMADD231PD {c('ln2hi')}, {t2}, {arg}",  # r = a − k·ln2hi
        f"VFNMADD231PD {c('ln2lo')}, {t2}, {arg}",  # − k·ln2lo
        f"VMULPD {c('exp8')}, {arg}, {t2}",
        f"VADDPD {c('exp7')}, {t2}, {t2}",
    ] + [f"VFMADD213PD {c(f'exp{i}')}, {arg}, {t2}" for i in range(6, -1, -1)] + [
        f"VPADDQ {c(bias)}, {t1}, {t1}",  # low 12 bits: k + bias
        f"VPSLLQ $52, {t1}, {t1}",  # 2^(k+bias−1023)
        f"VMULPD {t1}, {t2}, {t1}",
    ]


def erfc_t(isa, x, t, p, c0="erfc0"):
    """t = 1/(1 + |x|/(2√2)), p = P(t) (with c0 as its constant term);
    x is kept."""
    andop = "VPANDQ" if isa is AVX512 else "VANDPD"
    return [
        f"{andop} {c('absmask')}, {x}, {t}",
        f"VMULPD {c('half_rsqrt2')}, {t}, {t}",
        f"VADDPD {ONE[isa.name]}, {t}, {t}",
        f"VDIVPD {t}, {ONE[isa.name]}, {t}",
        f"VMULPD {c('erfc9')}, {t}, {p}",
        f"VADDPD {c('erfc8')}, {p}, {p}",
    ] + [f"VFMADD213PD {c(f'erfc{i}' if i else c0)}, {t}, {p}" for i in range(7, -1, -1)]


def select_neg(isa, x, h, phi, k):
    """phi = h where x < 0 (sign bit set), phi unchanged elsewhere; k is
    the mask register of the chain (AVX-512)."""
    if isa is AVX512:
        return [f"VPTESTMQ {c('signmask')}, {x}, {k}", f"VMOVAPD {h}, {k}, {phi}"]
    return [f"VBLENDVPD {x}, {h}, {phi}, {phi}"]


# Registers holding constants in the loop.
ONE = {"AVX512": "Z31", "AVX2": "Y15"}
LO = {"AVX512": "Z30", "AVX2": "Y14"}
HI = {"AVX512": "Z29", "AVX2": "Y13"}


def load_clamp(isa, src, x, xc):
    """x = max(src, −20) widened (NaN kept), xc = min(x, 20)."""
    return [
        f"VCVTPS2PD {src}, {x}",
        f"VMAXPD {x}, {LO[isa.name]}, {x}",  # x is Intel's 2nd source: NaN → x
        f"VMINPD {x}, {HI[isa.name]}, {xc}",
    ]


def store(isa, v, dst):
    cvt = "VCVTPD2PS" if isa is AVX512 else "VCVTPD2PSY"
    return [f"{cvt} {v}, {isa.h}{v[1:]}", f"VMOVUPS {isa.h}{v[1:]}, {dst}"]


def fwd_chain(isa, regs, off):
    x, xc, t, p, w = regs
    b = isa.lanes * 4 * off
    return (load_clamp(isa, f"{b}(SI)", x, xc) + erfc_t(isa, xc, t, p) + [
        f"VMULPD {c('mhalf')}, {xc}, {w}",
        f"VFMADD231PD {w}, {xc}, {p}",  # P(t) − x²/2
    ] + exp(isa, p, xc, w, "bias_half") + [
        f"VMULPD {xc}, {t}, {t}",  # h = t·exp(…)/2 = Φ(−|x|)
        f"VSUBPD {t}, {ONE[isa.name]}, {p}",
    ] + select_neg(isa, x, t, p, f"K{off + 1}") + [
        f"VMULPD {x}, {p}, {p}",
    ] + store(isa, p, f"{b}(DI)"))


def bwd_chain(isa, regs, off):
    x, t, p, w, a, b_ = regs
    b = isa.lanes * 4 * off
    return (load_clamp(isa, f"{b}(SI)", x, x) + erfc_t(isa, x, t, p, "erfc0_shifted") + [
        f"VMULPD {c('mhalf')}, {x}, {w}",
        f"VMULPD {x}, {w}, {w}",  # −x²/2
    ] + exp(isa, w, a, b_, "bias") + [
        f"VMULPD {c('expc10')}, {p}, {w}",  # exp(P(t))/2 (see PC)
        f"VADDPD {c('expc9')}, {w}, {w}",
    ] + [f"VFMADD213PD {c(f'expc{i}')}, {p}, {w}" for i in range(8, -1, -1)] + [
        f"VMULPD {w}, {t}, {t}",
        f"VMULPD {a}, {t}, {t}",  # h = t·exp(P)·exp(−x²/2)/2 = Φ(−|x|)
        f"VSUBPD {t}, {ONE[isa.name]}, {p}",
    ] + select_neg(isa, x, t, p, f"K{off + 1}") + [
        f"VMULPD {c('inv_sqrt2pi')}, {a}, {a}",  # φ(x)
        f"VFMADD231PD {a}, {x}, {p}",  # Φ(x) + x·φ(x)
        f"VCVTPS2PD {b}(DX), {a}",
        f"VMULPD {a}, {p}, {p}",
    ] + store(isa, p, f"{b}(DI)"))


def logic(isa, op):
    """The bitwise op of isa on float64 lanes (AVX-512F has only the
    integer forms)."""
    return ("VP" + op + "Q") if isa is AVX512 else ("V" + op + "PD")


def exp_chain(isa, regs, off):
    """dst = eˣ, x clamped to [−110, 90] (0 and +Inf in float32)."""
    x, a, b_ = regs
    o = isa.lanes * 4 * off
    return (load_clamp(isa, f"{o}(SI)", x, x) + exp(isa, x, a, b_, "bias")
            + store(isa, a, f"{o}(DI)"))


def sigmoid_chain(isa, regs, off, silu=False):
    """dst = 1/(1 + e⁻ˣ) (x·that for SiLU), x clamped to [−110, 110]: σ is
    0 or 1 in float32 beyond; SiLU multiplies by max(x, −110), so that
    SiLU(−Inf) = −0 and SiLU(+Inf) = +Inf."""
    x, xc, a, b_ = regs
    o = isa.lanes * 4 * off
    res = load_clamp(isa, f"{o}(SI)", x, xc) + [
        f"{logic(isa, 'XOR')} {c('signmask')}, {xc}, {xc}",  # −x
    ] + exp(isa, xc, a, b_, "bias") + [
        f"VADDPD {ONE[isa.name]}, {a}, {a}",
        f"VDIVPD {a}, {ONE[isa.name]}, {a}",
    ]
    if silu:
        res.append(f"VMULPD {x}, {a}, {a}")
    return res + store(isa, a, f"{o}(DI)")


def silu_chain(isa, regs, off):
    return sigmoid_chain(isa, regs, off, silu=True)


def tanh_chain(isa, regs, off):
    """dst = sign(x)·(1 − e)/(1 + e) with e = exp(−2·min(|x|, 20)), and x
    itself where |x| < 2⁻¹² (where 1 − e would cancel)."""
    x, a, w, ee, b_ = regs
    o = isa.lanes * 4 * off
    res = [
        f"VCVTPS2PD {o}(SI), {x}",
        f"{logic(isa, 'AND')} {c('absmask')}, {x}, {a}",
        f"VMINPD {a}, {HI[isa.name]}, {a}",  # a is Intel's 2nd source: NaN → a
        f"VMULPD {c('mtwo')}, {a}, {w}",
    ] + exp(isa, w, ee, b_, "bias") + [
        f"VSUBPD {ee}, {ONE[isa.name]}, {w}",
        f"VADDPD {ONE[isa.name]}, {ee}, {ee}",
        f"VDIVPD {ee}, {w}, {w}",
        f"{logic(isa, 'AND')} {c('signmask')}, {x}, {b_}",
        f"{logic(isa, 'OR')} {b_}, {w}, {w}",
    ]
    k = f"K{off + 1}"
    if isa is AVX512:
        res += [f"VCMPPD $1, {c('tanh_tiny')}, {a}, {k}", f"VMOVAPD {x}, {k}, {w}"]
    else:
        res += [f"VCMPPD $1, {c('tanh_tiny')}, {a}, {b_}", f"VBLENDVPD {b_}, {x}, {w}, {w}"]
    return res + store(isa, w, f"{o}(DI)")


def gelu_tanh_chain(isa, regs, off):
    """dst = x·σ(v), v = 2√(2/π)(x + 0.044715x³): σ is evaluated at x
    clamped to [−20, 20] (where it is 0 or 1 to float64 precision) and
    multiplies max(x, −20), so the limits at ±Inf are −0 and +Inf."""
    x, xc, w, a, b_ = regs
    o = isa.lanes * 4 * off
    return (load_clamp(isa, f"{o}(SI)", x, xc) + [
        f"VMULPD {xc}, {xc}, {w}",
        f"VMULPD {c('gt_m2ca')}, {w}, {w}",
        f"VADDPD {c('gt_m2c')}, {w}, {w}",
        f"VMULPD {xc}, {w}, {w}",  # −v
    ] + exp(isa, w, a, b_, "bias") + [
        f"VADDPD {ONE[isa.name]}, {a}, {a}",
        f"VDIVPD {a}, {ONE[isa.name]}, {a}",  # σ(v)
        f"VMULPD {x}, {a}, {a}",
    ] + store(isa, a, f"{o}(DI)"))


def gelu_tanh_bwd_chain(isa, regs, off):
    """dst = g·(σ + x·σ(1 − σ)·v′) with σ = σ(v), at x clamped to
    [−20, 20] (where the derivative is 0 or 1 to float64 precision)."""
    x, x2, w, a, b_ = regs
    o = isa.lanes * 4 * off
    return (load_clamp(isa, f"{o}(SI)", x, x) + [
        f"VMULPD {x}, {x}, {x2}",
        f"VMULPD {c('gt_m2ca')}, {x2}, {w}",
        f"VADDPD {c('gt_m2c')}, {w}, {w}",
        f"VMULPD {x}, {w}, {w}",  # −v
    ] + exp(isa, w, a, b_, "bias") + [
        f"VADDPD {ONE[isa.name]}, {a}, {a}",
        f"VDIVPD {a}, {ONE[isa.name]}, {a}",  # σ
        f"VSUBPD {a}, {ONE[isa.name]}, {w}",  # 1 − σ
        f"VMULPD {c('gt_6ca')}, {x2}, {x2}",
        f"VADDPD {c('gt_2c')}, {x2}, {x2}",  # v′
        f"VMULPD {a}, {x}, {x}",
        f"VMULPD {w}, {x}, {x}",  # x·σ(1 − σ)
        f"VFMADD231PD {x2}, {x}, {a}",  # σ + x·σ(1 − σ)·v′
        f"VCVTPS2PD {o}(DX), {w}",
        f"VMULPD {w}, {a}, {a}",
    ] + store(isa, a, f"{o}(DI)"))


# AVX-512: the first halves of the tables of the kernel being generated,
# held in registers from Z12 up (kernel() fills it): a register copy
# instead of a load per lookup.
REGTAB = {}


def lookup(isa, name, dst, first8=False):
    """dst = entry j of the float32 table name, j the interval index in
    the low bits of register 2: 32 entries with VPERMT2PS (AVX-512); with
    AVX2 VPERMPS, 8 entries (tables named …2_k) or 32 in four VPERMPS and
    three blends by bits 3 and 4 of j (their sign-bit masks in Y10, Y11).
    (AVX2 gathers, VGATHERDPS, made the kernels slower than the float64
    chains.) With first8, AVX2 looks up the first 8 entries alone: j < 8
    in every lane."""
    if isa is AVX512:
        first = REGTAB.get(name, c32(name))  # entries 0–15: a register copy or a load
        return [f"VMOVUPS {first}, {dst}", f"VPERMT2PS {c32(name, off=64)}, Z2, {dst}"]
    if "2_" in name or first8:
        return [f"VPERMPS {c32(name)}, Y2, {dst}"]
    return [
        f"VPERMPS {c32(name)}, Y2, Y6", f"VPERMPS {c32(name, off=32)}, Y2, Y7",
        "VBLENDVPS Y10, Y7, Y6, Y6",  # entries 0–15
        f"VPERMPS {c32(name, off=64)}, Y2, Y7", f"VPERMPS {c32(name, off=96)}, Y2, Y8",
        "VBLENDVPS Y10, Y8, Y7, Y7",  # 16–31
        f"VBLENDVPS Y11, Y7, Y6, {dst}",
    ]


# The fast paths leave their result in FAST_OUT and the lanes in range
# (|x| < bound; not NaN) in FAST_IN, both untouched by the float64 chains
# (AVX2 has no register to spare there: the slow path keeps them on the
# stack).
FAST_OUT = {"AVX512": "Z27", "AVX2": "Y5"}
FAST_IN = {"AVX512": "K4", "AVX2": "Y9"}


def fast_index(isa, bound, fwd):
    """x in 0, a = |x| in 1, the interval index j in 2 (its bits in a
    float32 above the shifter), u in 3, the lanes with a < bound in
    FAST_IN (not NaN; the others compute garbage). Forward: j = round(y),
    y = FWD_S·a·(a + α), u = a − c_j; backward: j = round(4a), u = 4a − j."""
    v = isa.v
    andop = "VPANDD" if isa is AVX512 else "VANDPS"
    res = [f"VMOVUPS (SI), {v}0", f"{andop} {c32('f_abs')}, {v}0, {v}1",
           f"VCMPPS $1, {c32(bound)}, {v}1, {FAST_IN[isa.name]}"]  # a < bound
    if fwd:
        res += [
            f"VMOVUPS {c32('f_fwd_as')}, {v}3",
            f"VFMADD231PS {c32('f_fwd_s')}, {v}1, {v}3",  # S·(a + α)
            f"VMOVUPS {c32('f_shifter')}, {v}2",
            f"VFMADD231PS {v}3, {v}1, {v}2",  # j in the low bits
        ]
        return res  # u: see fwd_poly
    if isa is AVX2:  # a·1
        return res + [
            f"VADDPS {c32('f_shifter')}, Y1, Y2",  # j in the low bits
            f"VSUBPS {c32('f_shifter')}, Y2, Y5",
            "VSUBPS Y5, Y1, Y3",  # u, exact
        ]
    return res + [
        f"VMULPS {c32('f_bwd_s')}, Z1, Z3",  # 4a: exact
        f"VADDPS {c32('f_shifter')}, Z3, Z2",  # j in the low bits
        f"VSUBPS {c32('f_shifter')}, Z2, Z5",
        "VSUBPS Z5, Z3, Z3",  # u, exact
    ]


def horner(isa, prefix, first, last, first8=False):
    """4 = the polynomial in u (in 3) with coefficients table prefix+k,
    k from first (the highest degree) down to last."""
    v = isa.v
    res = lookup(isa, f"{prefix}{first}", f"{v}4", first8)
    for k in range(first - 1, last - 1, -1):
        res += lookup(isa, f"{prefix}{k}", f"{v}5", first8) + [f"VFMADD213PS {v}5, {v}3, {v}4"]
    return res


def fwd_poly(isa, first8):
    """The forward polynomial after fast_index: with h = Φ(−a) =
    hi + lo + u·q(u) (gelufit.py), u = a − c_j, T = −(lo + u·q) from the
    negated tables, GELU = x·C + a·T, C = hi for x < 0 (x·h) and 1 − hi
    for x ≥ 0 (x − x·h), one rounding of the sum."""
    v = isa.v
    res = []
    if isa is AVX2 and not first8:  # the blend masks of lookup
        res += ["VPSLLD $28, Y2, Y10", "VPSLLD $27, Y2, Y11"]
    res += lookup(isa, "gfwdc", f"{v}3", first8) + [f"VSUBPS {v}3, {v}1, {v}3"]
    res += horner(isa, "gfwd", N_FWD - 1, 1, first8)
    res += [f"VMULPS {v}1, {v}4, {v}4"]  # a·T
    out = FAST_OUT[isa.name]
    res += lookup(isa, "gfwd0", out, first8)  # hi
    if isa is AVX512:
        # 1 − hi where x ≥ 0
        res += [f"VPTESTNMD {c32('f_sign')}, Z0, K3", f"VSUBPS {out}, Z28, K3, {out}"]
    else:
        res += [f"VSUBPS {out}, Y12, Y6", f"VBLENDVPS Y0, {out}, Y6, {out}"]
    return res + [f"VFMADD213PS {v}4, {v}0, {out}"]


def fast_fwd(isa, name):
    """GELU in float32 lanes for |x| < FWD_BOUND (fwd_poly). AVX2, whose
    32-entry lookup takes four VPERMPS and three blends, has a second
    version for blocks with every j < 8 (|x| < 3.45: all but about 1.5% of
    the blocks of N(0, 1) data), one VPERMPS a coefficient."""
    res = fast_index(isa, "f_fwd_bound", True)
    if isa is AVX512:
        return res + fwd_poly(isa, False)
    res += [f"VCMPPS $1, {c32('f_fwd_bound8')}, Y1, Y6", "VMOVMSKPS Y6, AX",
            "CMPL AX, $0xff", f"JNE {name}_t32"]
    res += fwd_poly(isa, True) + [f"JMP {name}_tail", f"{name}_t32:"]
    return res + fwd_poly(isa, False) + [f"{name}_tail:"]


def fast_bwd(isa, name):
    """GELU′·g in float32 lanes for |x| < BWD_BOUND: s = GELU′(−a) by the
    table, d = s for x < 0 and 1 − s for x ≥ 0 (GELU′(x) = 1 − GELU′(−x)),
    g·d. (g − g·s would round once less, but is NaN for g = ±Inf.)"""
    v = isa.v
    if isa is AVX512:
        res = fast_index(isa, "f_bwd_bound", False) + horner(isa, "gbwd", N_BWD - 1, 0)
        res += [f"VPTESTNMD {c32('f_sign')}, Z0, K3", "VSUBPS Z4, Z28, K3, Z4"]
    else:
        res = fast_index(isa, "f_bwd2_bound", False) + horner(isa, "gbwd2_", N_BWD2 - 1, 0)
        res += ["VSUBPS Y4, Y12, Y6", "VBLENDVPS Y0, Y4, Y6, Y4"]
    return res + [f"VMULPS (DX), {v}4, {FAST_OUT[isa.name]}"]


def interleave(a, b):
    res = []
    for i in range(max(len(a), len(b))):
        if i < len(a):
            res.append(a[i])
        if i < len(b):
            res.append(b[i])
    return res


def kernel(isa, name, args, chain, nregs, lo="lo", hi="hi", fast=None):
    """A kernel of two float64 chains per block; with fast, the block
    runs fast(isa, name), a float32 path, and takes the chains only where
    a lane is out of its range, and then for those lanes alone: every
    element gets the same arithmetic wherever it lies in a slice."""
    block = 2 * isa.lanes
    shift = block.bit_length() - 1
    argsz = 8 * len(args) + 8
    e(f"// func {name}({', '.join(args)} *float32, n int)")
    frame = 64 if fast and isa is AVX2 else 0
    e(f"TEXT ·{name}(SB), NOSPLIT, ${frame}-{argsz}")
    regs = ["DI", "DX", "SI"] if len(args) == 3 else ["DI", "SI"]
    for i, (a, r) in enumerate(zip(args, regs)):
        e(f"\tMOVQ {a}+{8 * i}(FP), {r}")
    e(f"\tMOVQ n+{8 * len(args)}(FP), CX")
    e(f"\tSHRQ ${shift}, CX")
    e(f"\tJZ {name}_done")
    e(f"\tVBROADCASTSD {c('one')}, {ONE[isa.name]}")
    e(f"\tVBROADCASTSD {c(lo)}, {LO[isa.name]}")
    e(f"\tVBROADCASTSD {c(hi)}, {HI[isa.name]}")
    if fast:
        if isa is AVX512:
            e(f"\tVMOVUPS {c32('f_one')}, Z28")
            REGTAB.clear()
            if fast is fast_fwd:
                tabs = ["gfwdc"] + [f"gfwd{k}" for k in range(N_FWD)]
            else:
                tabs = [f"gbwd{k}" for k in range(N_BWD)]
            for i, t in enumerate(tabs):
                e(f"\tVMOVUPS {c32(t)}, Z{12 + i}")
            for i, t in enumerate(tabs):
                REGTAB[t] = f"Z{12 + i}"
        else:
            e(f"\tVMOVUPS {c32('f_one')}, Y12")
    e("\tPCALIGN $32")
    e(f"{name}_loop:")
    r0 = [isa.r(i) for i in range(nregs)]
    r1 = [isa.r(i + nregs) for i in range(nregs)]
    chains = interleave(chain(isa, r0, 0), chain(isa, r1, 1))
    if fast:
        slow = f"{name}_slow"
        out, inr = FAST_OUT[isa.name], FAST_IN[isa.name]
        tail = ([f"KORTESTW {inr}, {inr}", f"JCC {slow}"] if isa is AVX512  # CF: all in range
                else [f"VMOVMSKPS {inr}, AX", "CMPL AX, $0xff", f"JNE {slow}"])
        for ins in fast(isa, name) + tail + [f"VMOVUPS {out}, (DI)"]:
            e(ins if ins.endswith(":") else "\t" + ins)
    else:
        for ins in chains:
            e("\t" + ins)
    if fast:
        e(f"{name}_next:")
    step = block * 4
    ptrs = ["DI", "SI"] + (["DX"] if len(args) == 3 else [])
    for p in ptrs:
        e(f"\tADDQ ${step}, {p}")
    e("\tDECQ CX")
    e(f"\tJNZ {name}_loop")
    e(f"{name}_done:")
    e("\tVZEROUPPER")
    e("\tRET")
    REGTAB.clear()
    if fast:
        e(f"{name}_slow:")
        if isa is AVX2:
            e(f"\tVMOVUPS {out}, (SP)")
            e(f"\tVMOVUPS {inr}, 32(SP)")
        for ins in chains:
            e("\t" + ins)
        if isa is AVX512:
            e(f"\tVMOVUPS {out}, {inr}, (DI)")  # the lanes in range: the fast result
        else:
            e("\tVMOVUPS (SP), Y0")
            e("\tVMOVUPS 32(SP), Y1")
            e("\tVMASKMOVPS Y0, Y1, (DI)")
        e(f"\tJMP {name}_next")
    e()


for isa in (AVX512, AVX2):
    kernel(isa, f"geluF32{isa.name}", ["dst", "x"], fwd_chain, 5, fast=fast_fwd)
    kernel(isa, f"geluBwdF32{isa.name}", ["dst", "grad", "x"], bwd_chain, 6, fast=fast_bwd)
    kernel(isa, f"expF32{isa.name}", ["dst", "x"], exp_chain, 3, "exp_lo", "exp_hi")
    kernel(isa, f"sigmoidF32{isa.name}", ["dst", "x"], sigmoid_chain, 4, "exp_lo", "sig_hi")
    kernel(isa, f"siluF32{isa.name}", ["dst", "x"], silu_chain, 4, "exp_lo", "sig_hi")
    kernel(isa, f"tanhF32{isa.name}", ["dst", "x"], tanh_chain, 5, "lo", "hi")
    kernel(isa, f"geluTanhF32{isa.name}", ["dst", "x"], gelu_tanh_chain, 5)
    kernel(isa, f"geluTanhBwdF32{isa.name}", ["dst", "grad", "x"], gelu_tanh_bwd_chain, 5)

head = ["// Code generated by _gen/simdgen.py; DO NOT EDIT.", "",
        "//go:build !purego", "", '#include "textflag.h"', ""]
for i, (name, v) in enumerate(consts.items()):
    for j in range(8):
        head.append(f"DATA gelutab<>+{64 * i + 8 * j}(SB)/8, $0x{v:016x}")
head.append(f"GLOBL gelutab<>(SB), RODATA|NOPTR, ${64 * len(consts)}")
n32 = 0
for name, vals in consts32.items():
    for v in vals:
        head.append(f"DATA gelu32tab<>+{4 * n32}(SB)/4, $0x{v:08x}")
        n32 += 1
head.append(f"GLOBL gelu32tab<>(SB), RODATA|NOPTR, ${4 * n32}")
head.append("")
print("\n".join(head + out))
