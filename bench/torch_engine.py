#!/usr/bin/env python3
"""PyTorch side of bench/engine.sh: the "engine v2" targets of issue 9 (forward
mode, higher order, Jacobians) in PyTorch 1.13 on the CPU.

  /usr/bin/python3 bench/torch_engine.py [--threads N] [--repeats R] [--min-time S]
                                         [--loop-repeats R] [--only ROWS]

Workloads:
  B         the MLP B of bench/torch_train.py: 784-512-512-10, ReLU, batch 128,
            float32, nn.Linear default initialisation (torch.manual_seed(1)),
            F.cross_entropy loss.
  tanh1000  f(x) = tanh(W @ x), W 1000×1000 float64 constant (seeded normal /
            sqrt(1000)), x of 1000 float64.

Rows (one line each, "torch <row> ns=<median ns per call> ..."):
  forward/B              the loss under torch.no_grad()
  grad/B                 forward + backward, torch.autograd.grad w.r.t. the 6 parameters
  jvp/B                  forward-mode JVP of the loss w.r.t. the input batch
                         (torch.autograd.forward_ad dual tensors, random tangent)
  hvp/B                  Hessian-vector product w.r.t. the input batch,
                         reverse-over-reverse (create_graph=True, then grad of <g, v>)
  hvp-fwdrev/B           the same, forward-over-reverse: functorch.jvp(functorch.grad(f))
  hvp-fwdrev-lse/B       forward-over-reverse with the loss written as
                         mean(logsumexp(z) - z[y]), if the row above is unsupported
  hvp-params/B           HVP w.r.t. all parameters, reverse-over-reverse
  hvp-params-fwdrev-lse/B  the same, forward-over-reverse on the logsumexp loss
  vjp/tanh1000           forward + one VJP w.r.t. x (random cotangent)
  jacobian/tanh1000      torch.autograd.functional.jacobian(f, x, vectorize=True)
  jacobian-fwd/tanh1000  the same with strategy="forward-mode"
  jacrev/tanh1000        functorch.jacrev(f)(x)
  jacobian-loop/tanh1000 jacobian(..., vectorize=False): 1000 backward passes, timed
                         --loop-repeats times, one call each
A row PyTorch cannot compute prints "torch <row> unsupported: <exception>".
Lines starting with "#" are notes (versions, fallbacks, correctness checks).
Then "torch ratio <a>÷<b> r=<x>" for jvp/forward, hvp/grad and jacobian/vjp.

Each measurement: two warm-up calls, then --repeats timed batches of as many
calls as fill --min-time seconds (calibrated on the warm-up); the figure is
the median over the batches of the time per call.
"""
import argparse
import math
import os
import statistics
import sys
import time

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--threads", type=int, default=int(os.environ.get("THREADS", "1")),
                help="torch.set_num_threads and OPENBLAS_NUM_THREADS (default $THREADS or 1)")
ap.add_argument("--repeats", type=int, default=5, help="timed batches per row (default 5)")
ap.add_argument("--min-time", type=float, default=0.2, help="seconds per timed batch (default 0.2)")
ap.add_argument("--loop-repeats", type=int, default=3,
                help="calls timed for jacobian-loop/tanh1000 (default 3; 0 skips it)")
ap.add_argument("--only", default="",
                help="comma-separated rows or workloads to run (e.g. B or jvp/B,vjp/tanh1000); default all")
args = ap.parse_args()

# OpenBLAS reads its thread count when the library loads: set it before torch
# is imported (torch.set_num_threads does not reach OpenBLAS's pool).
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    if os.environ.get(var, str(args.threads)) != str(args.threads):
        print(f"# warning: {var}={os.environ[var]} overrides --threads {args.threads} for BLAS", flush=True)
    os.environ.setdefault(var, str(args.threads))

try:
    import torch
    import torch.autograd.forward_ad as fwAD
    import torch.nn.functional as F
except ImportError:
    sys.exit(f"torch_engine.py: {sys.executable} cannot import torch "
             "(apt-get install -y python3-torch libopenblas0-pthread, then run /usr/bin/python3)")
try:
    import functorch
except ImportError as e:  # shipped with Debian's python3-torch 1.13
    functorch = None
    functorch_err = e

torch.set_num_threads(args.threads)
ONLY = [s.strip() for s in args.only.split(",") if s.strip()]


def wanted(row):
    return not ONLY or any(o == row or row.endswith("/" + o) for o in ONLY)


results = {}


def first_line(e):
    s = str(e).strip().split("\n")[0]
    return f"{type(e).__name__}: {s}"


def measure(row, fn, repeats=None, min_time=None, calls=None):
    """Times fn and prints the row; an exception prints it as unsupported."""
    if not wanted(row):
        return
    repeats = repeats or args.repeats
    min_time = args.min_time if min_time is None else min_time
    try:
        t0 = time.perf_counter()
        fn()
        fn()
        warm = (time.perf_counter() - t0) / 2
    except Exception as e:  # noqa: BLE001 — reported, not hidden
        print(f"torch {row} unsupported: {first_line(e)}", flush=True)
        return
    n = calls or max(1, math.ceil(min_time / max(warm, 1e-9)))
    per = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        per.append((time.perf_counter() - t0) / n)
    ns = statistics.median(per) * 1e9
    results[row] = ns
    print(f"torch {row} ns={ns:.0f} min={min(per) * 1e9:.0f} max={max(per) * 1e9:.0f} "
          f"calls={n} repeats={repeats}", flush=True)


def note(s):
    print("# " + s, flush=True)


note(f"torch {torch.__version__}, python {sys.version.split()[0]}, threads {torch.get_num_threads()}, "
     f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, "
     f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, "
     f"functorch {'%s' % functorch.__version__ if functorch else 'missing: %s' % functorch_err}")


def close(a, b):
    return torch.allclose(a, b, rtol=1e-3, atol=1e-5)


# ---------------------------------------------------------------- MLP B
def mlp_b():
    sizes, batch = [784, 512, 512, 10], 128
    torch.manual_seed(1)  # as bench/torch_train.py: model first, then x, y
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    x = torch.randn(batch, sizes[0])
    y = torch.randint(0, sizes[-1], (batch,))
    params = list(model.parameters())
    g = torch.Generator().manual_seed(7)
    t = torch.randn(x.shape, generator=g)  # JVP tangent
    v = torch.randn(x.shape, generator=g)  # HVP direction (input)
    vp = [torch.randn(p.shape, generator=g) for p in params]  # HVP direction (parameters)

    # The same network with its weights as constants, for the rows that
    # differentiate with respect to the input only.
    ws = [p.detach() for p in params]

    def net(ps, inp):
        h = inp
        for i in range(0, len(ps), 2):
            h = F.linear(h, ps[i], ps[i + 1])
            if i + 2 < len(ps):
                h = torch.relu(h)
        return h

    def ce(z):
        return F.cross_entropy(z, y)

    def ce_lse(z):  # cross-entropy without log_softmax / nll_loss
        return (torch.logsumexp(z, 1) - z.gather(1, y[:, None])[:, 0]).mean()

    def forward():
        with torch.no_grad():
            return ce(model(x))

    def grad():
        return torch.autograd.grad(ce(model(x)), params)

    def jvp_with(loss):
        def f():
            with torch.no_grad(), fwAD.dual_level():
                out = loss(net(ws, fwAD.make_dual(x, t)))
                return fwAD.unpack_dual(out).tangent
        return f

    # Does forward mode go through F.cross_entropy in this version?
    jvp_loss, jvp_name = ce, "F.cross_entropy"
    try:
        jvp_with(ce)()
    except Exception as e:  # noqa: BLE001
        note(f"jvp/B: forward-mode AD through F.cross_entropy unsupported in torch {torch.__version__} "
             f"({first_line(e)}); jvp/B uses log_softmax + nll_loss")
        jvp_loss, jvp_name = (lambda z: F.nll_loss(F.log_softmax(z, 1), y)), "log_softmax + nll_loss"
        try:
            jvp_with(jvp_loss)()
        except Exception as e2:  # noqa: BLE001
            note(f"jvp/B: log_softmax + nll_loss unsupported too ({first_line(e2)}); jvp/B uses logsumexp")
            jvp_loss, jvp_name = ce_lse, "logsumexp - z[y]"
    else:
        note(f"jvp/B: forward-mode AD through F.cross_entropy supported in torch {torch.__version__}")
    jvp = jvp_with(jvp_loss)

    def loss_x(inp):
        return ce(net(ws, inp))

    def hvp_x():
        xr = x.detach().requires_grad_()
        (gx,) = torch.autograd.grad(loss_x(xr), xr, create_graph=True)
        (hx,) = torch.autograd.grad((gx * v).sum(), xr)
        return hx

    def fwdrev_x(loss):
        f = lambda inp: loss(net(ws, inp))  # noqa: E731
        return lambda: functorch.jvp(functorch.grad(f), (x,), (v,))[1]

    def hvp_params():
        ls = ce(model(x))
        gs = torch.autograd.grad(ls, params, create_graph=True)
        dot = sum((gi * vi).sum() for gi, vi in zip(gs, vp))
        return torch.autograd.grad(dot, params)

    def fwdrev_params(loss):
        f = lambda ps: loss(net(ps, x))  # noqa: E731
        return lambda: functorch.jvp(functorch.grad(f), (tuple(ws),), (tuple(vp),))[1]

    # Correctness of what is timed, once.
    if wanted("jvp/B"):
        xr = x.detach().requires_grad_()
        (gx,) = torch.autograd.grad(loss_x(xr), xr)
        ok = math.isclose(float(jvp()), float((gx * t).sum()), rel_tol=1e-3, abs_tol=1e-6)
        note(f"check: jvp/B ({jvp_name}) {'matches' if ok else 'DIFFERS FROM'} <grad, tangent> from reverse mode")

    measure("forward/B", forward)
    measure("grad/B", grad)
    measure("jvp/B", jvp)
    measure("hvp/B", hvp_x)
    if functorch is None:
        for row in ("hvp-fwdrev/B", "hvp-fwdrev-lse/B", "hvp-params-fwdrev-lse/B"):
            if wanted(row):
                print(f"torch {row} unsupported: no functorch ({functorch_err})", flush=True)
    else:
        fr_ce = True
        try:
            fwdrev_x(ce)()
        except Exception as e:  # noqa: BLE001
            fr_ce = False
            if wanted("hvp-fwdrev/B"):
                print(f"torch hvp-fwdrev/B unsupported: {first_line(e)}", flush=True)
        if fr_ce:
            measure("hvp-fwdrev/B", fwdrev_x(ce))
        else:
            f = fwdrev_x(ce_lse)
            if wanted("hvp-fwdrev-lse/B"):
                note("check: hvp-fwdrev-lse/B " + ("matches" if close(f(), hvp_x()) else "DIFFERS FROM") + " hvp/B")
            measure("hvp-fwdrev-lse/B", f)
    measure("hvp-params/B", hvp_params)
    if functorch is not None:
        f = fwdrev_params(ce_lse)
        if wanted("hvp-params-fwdrev-lse/B"):
            try:
                okp = all(close(a, b) for a, b in zip(f(), hvp_params()))
                note("check: hvp-params-fwdrev-lse/B " + ("matches" if okp else "DIFFERS FROM") + " hvp-params/B")
            except Exception:  # noqa: BLE001 — measure() reports it
                pass
        measure("hvp-params-fwdrev-lse/B", f)


# ---------------------------------------------------------------- tanh1000
def tanh1000():
    n = 1000
    torch.manual_seed(2)
    W = torch.randn(n, n, dtype=torch.float64) / math.sqrt(n)
    x = torch.randn(n, dtype=torch.float64)
    u = torch.randn(n, dtype=torch.float64)

    def f(inp):
        return torch.tanh(W @ inp)

    def vjp():
        xr = x.detach().requires_grad_()
        return torch.autograd.grad(f(xr), xr, u)[0]

    jac = torch.autograd.functional.jacobian
    if wanted("jacobian/tanh1000"):
        ref = (1 - torch.tanh(W @ x) ** 2)[:, None] * W
        J = jac(f, x, vectorize=True)
        note("check: jacobian/tanh1000 " + ("matches" if torch.allclose(J, ref) else "DIFFERS FROM")
             + " diag(1 - tanh²(Wx)) W")
    measure("vjp/tanh1000", vjp)
    measure("jacobian/tanh1000", lambda: jac(f, x, vectorize=True))
    measure("jacobian-fwd/tanh1000", lambda: jac(f, x, vectorize=True, strategy="forward-mode"))
    if functorch is not None:
        measure("jacrev/tanh1000", lambda: functorch.jacrev(f)(x))
    if args.loop_repeats > 0:
        # 1000 backward passes per call: --loop-repeats calls, one per batch.
        measure("jacobian-loop/tanh1000", lambda: jac(f, x, vectorize=False),
                repeats=args.loop_repeats, calls=1)


def ratio(a, b):
    if a in results and b in results:
        print(f"torch ratio {a}÷{b} r={results[a] / results[b]:.3f}", flush=True)


def main():
    if any(wanted(r + "/B") for r in ("forward", "grad", "jvp", "hvp", "hvp-fwdrev", "hvp-fwdrev-lse",
                                       "hvp-params", "hvp-params-fwdrev-lse")):
        mlp_b()
    if any(wanted(r + "/tanh1000") for r in ("vjp", "jacobian", "jacobian-fwd", "jacrev", "jacobian-loop")):
        tanh1000()
    ratio("jvp/B", "forward/B")
    ratio("hvp/B", "grad/B")
    ratio("hvp-params/B", "grad/B")
    ratio("hvp-fwdrev-lse/B", "grad/B")
    ratio("hvp-params-fwdrev-lse/B", "grad/B")
    ratio("jacobian/tanh1000", "vjp/tanh1000")
    ratio("jacobian-loop/tanh1000", "vjp/tanh1000")


if __name__ == "__main__":
    main()
