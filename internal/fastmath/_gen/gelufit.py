"""Piecewise polynomial tables of the float32 GELU kernels (imported by
simdgen.py; needs mpmath).

The kernels take a = |x|, look up by lane the coefficients of the
interval j of a, and evaluate a polynomial in u, an exact float32 function
of a (simdgen.py chooses the intervals and u):

  forward   h(a) = Φ(−a) = erfc(a/√2)/2, to a relative error of a few
            10⁻⁹, so that x·Φ(x) = x·h (x < 0) or x − x·h (x ≥ 0)
            keeps float32 accuracy in relative terms on both sides;
  backward  s(a) = GELU′(−a) = Φ(−a) − a·φ(a), to an absolute error of a
            few 10⁻⁹ (GELU′(x) = 1 − GELU′(−x), so GELU′(x) is s or 1 − s).

Each coefficient is fitted by weighted least squares at Chebyshev points
(near minimax; weights 1/f for the relative fit), then rounded to float32
in order of degree with the higher ones refitted to absorb the rounding;
c₀ of the forward table is split into hi + lo, hi a multiple of 2⁻²⁴ so
that 1 − hi is exact in float32 (where c₀ ≥ 2⁻⁶). The fit errors printed
are those of the float32 coefficients in exact arithmetic, at 257 points
an interval; TestGELUSweep measures the kernels themselves.
"""
import struct

import mpmath as mp

mp.mp.dps = 40


def f32(v):
    """v rounded to the nearest float32 (via float64)."""
    return struct.unpack("<f", struct.pack("<f", float(v)))[0]


def phi_neg(a):
    return mp.erfc(a / mp.sqrt(2)) / 2


def gelu_deriv_neg(a):
    return phi_neg(a) - a * mp.exp(-a * a / 2) / mp.sqrt(2 * mp.pi)


def _lsq(us, fs, ws, fixed, deg):
    """Weighted least squares for the coefficients after the fixed ones."""
    k0 = len(fixed)
    m = deg + 1 - k0
    rows = []
    rhs = []
    for u, f, w in zip(us, fs, ws):
        r = f - sum(c * u ** k for k, c in enumerate(fixed))
        rows.append([w * u ** (k0 + i) for i in range(m)])
        rhs.append(w * r)
    A = mp.matrix(rows)
    b = mp.matrix(rhs)
    x = mp.qr_solve(A, b)[0]
    return [x[i] for i in range(m)]


def fit_interval(f, lo, hi, c, scale, deg, relative, split_c0):
    """Coefficients (float32) of f(c + u/scale) as a polynomial in u, for
    c + u/scale in [lo, hi]."""
    ulo, uhi = (lo - c) * scale, (hi - c) * scale
    npts = 3 * (deg + 1)
    us = [(ulo + uhi) / 2 + (uhi - ulo) / 2 * mp.cos(mp.pi * (i + 0.5) / npts) for i in range(npts)]
    us += [ulo, uhi]
    fs = [f(c + u / scale) for u in us]
    ws = [1 / abs(v) if relative else mp.mpf(1) for v in fs]
    fixed = []
    out = []
    while len(fixed) <= deg:
        v = _lsq(us, fs, ws, fixed, deg)[0]
        if not fixed and split_c0:
            # hi a multiple of 2⁻²⁴ (1 − hi exact) where c₀ ≥ 2⁻⁶; below,
            # hi = c₀ in float32, and 1 − hi rounds by at most 2⁻²⁵ of a
            # result near 1 (where x·Φ(−x) is below 2⁻⁶·x anyway).
            if v >= mp.mpf(2) ** -6:
                h = mp.mpf(round(float(v) * 2 ** 24)) / 2 ** 24
            else:
                h = mp.mpf(f32(v))
            lo32 = f32(v - h)
            out += [float(h), lo32]
            fixed.append(h + lo32)
            continue
        v = f32(v)
        out.append(v)
        fixed.append(mp.mpf(v))
    return out


def max_error(f, lo, hi, c, scale, coefs, relative, split_c0):
    """The largest error of the float32 coefficients (exact arithmetic) at
    257 points of [lo, hi]."""
    cs = [coefs[0] + coefs[1]] + coefs[2:] if split_c0 else coefs
    m = 0
    for i in range(257):
        a = lo + (hi - lo) * i / 256
        u = (a - c) * scale
        want = f(a)
        got = sum(mp.mpf(v) * u ** k for k, v in enumerate(cs))
        e = abs(got - want)
        if relative:
            e /= abs(want)
        m = max(m, e)
    return m


def fit_table(f, intervals, scale, deg, relative, split_c0, log=None, name=""):
    """The coefficient tables over intervals, a list of (lo, hi, c): the
    polynomial of interval j is in u = (a − c)·scale. table[k][j] is
    coefficient k (c₀ hi, c₀ lo, c₁, … with split_c0) of interval j."""
    rows = []
    worst = 0
    for lo, hi, c in intervals:
        cs = fit_interval(f, lo, hi, c, scale, deg, relative, split_c0)
        worst = max(worst, max_error(f, lo, hi, c, scale, cs, relative, split_c0))
        rows.append(cs)
    if log:
        log(f"{name or f.__name__}: {len(intervals)} intervals, degree {deg}: fit error ≤ {mp.nstr(worst, 3)}")
    return [[r[k] for r in rows] for k in range(len(rows[0]))]


def table(f, S, n, deg, relative, split_c0, log=None):
    """fit_table on the n intervals [j − 1/2, j + 1/2]/S (from 0 for
    j = 0), the polynomials in u = a·S − j."""
    ivs = [(max(mp.mpf(0), (j - mp.mpf(0.5)) / S), (j + mp.mpf(0.5)) / S, mp.mpf(j) / S) for j in range(n)]
    return fit_table(f, ivs, S, deg, relative, split_c0, log)
