#!/usr/bin/python3
"""PyTorch 1.13 / functorch peer of the transform benchmarks of package fn
(fn.Grad, fn.Vmap, fn.JVP, fn.JacFwd, fn.JacRev, fn.Hessian), on the CPU.

  /usr/bin/python3 bench/transforms_peer.py [--repeats R] [--min-time S]
                                            [--threads N] [WORKLOAD ...]

Prints one line per row,

  NAME ms=<median ms per call> min=<min ms per call>

and notes starting with "#" (versions, correctness checks, warnings). Rows:

  PerExampleGrad/B       per-example gradients of MLP B (784-512-512-10, biases,
                         ReLU, float32, batch 128, cross-entropy of one example)
                         w.r.t. all six parameters:
                         functorch.vmap(functorch.grad(loss1), in_dims=(None, 0, 0))(params, x, y)
  PerExampleGrad/B-loop  the same, torch.autograd.grad once per example, 128
                         backward passes (reference only)
  PerExampleGrad/GaussNLL per-example gradients, w.r.t. Sigma and y, of
                         0.5 (y' Sigma^-1 y + log det Sigma) through
                         torch.linalg.cholesky and torch.cholesky_solve, 256
                         examples of 16x16 SPD Sigma, float64:
                         functorch.vmap(functorch.grad(nll, argnums=(0, 1)))
  PINNStep/create_graph  Poisson PINN step: u = MLP 2-64-64-64-1, tanh, float64,
                         1024 points in [0,1]^2, f = -2 pi^2 sin(pi x0) sin(pi x1),
                         loss = mean((lap u - f)^2), loss and its gradient w.r.t.
                         all parameters; lap u by autograd.grad(u.sum(), x,
                         create_graph=True) and one more create_graph grad per
                         input dimension, then loss.backward() (no optimizer step)
  PINNStep/functorch     the same loss, lap u = trace of functorch.hessian (=
                         jacfwd(jacrev)) of u w.r.t. the point, vmapped over the
                         points, and functorch.grad_and_value w.r.t. the
                         parameter tuple
  Hessian/100            functorch.hessian(f)(x), f(x) = sum(tanh(A x)^2) + sum(x^4),
                         x in R^100, A 100x100 (seeded randn / 10), float64
                         (functorch.hessian is jacfwd(jacrev(f)) itself, so no
                         separate jacfwd(jacrev) row)
  Hessian/100-revrev     jacrev(jacrev(f))(x), reference only
  Ensemble/forward       8 models of MLP 784-256-256-10 (biases, ReLU, float32)
                         stacked, on one batch of 64 shared by all:
                         functorch.vmap(mlp, in_dims=(0, None))(params, x)
  Ensemble/grad          each model's gradient of its mean cross-entropy on that
                         batch: functorch.vmap(functorch.grad(loss),
                         in_dims=(0, None, None))(params, x, y)

WORKLOAD arguments pick rows: a row's full name (PerExampleGrad/B selects only
the vmap row), or the part before "/" (PINNStep: both routes). Default: all.

Each row: --warmup calls, then the number of calls that fills --min-time
seconds (calibrated on the warm-up), timed --repeats times; ms= is the median
and min= the minimum over those batches of the time per call.

Data are deterministic (torch.manual_seed(0) per workload; parameters from
nn.Linear's default initialisation). Checks, printed as "# check: ..." (a
failure prints "# WARNING: ..."): every timed output is finite; the vmapped
per-example gradients equal the loop's (float32, rtol 1e-4); the two PINN
routes give the same loss and parameter gradient to 1e-9 (relative to the
largest entry, at least 1); the Hessian equals the closed form
Aᵀ diag(2 s²(s² - 2t²)) A + diag(12 x²) (t = tanh(Ax), s² = 1 - t²).

Threads: --threads (1) sets torch.set_num_threads and OPENBLAS_NUM_THREADS /
OMP_NUM_THREADS, which must be in the environment before torch is imported
(torch.set_num_threads does not reach OpenBLAS's pool). OPENBLAS_CORETYPE is
left as the caller set it (printed in the first note).
"""
import argparse
import math
import os
import statistics
import sys
import time

ROWS = [
    "PerExampleGrad/B",
    "PerExampleGrad/B-loop",
    "PerExampleGrad/GaussNLL",
    "PINNStep/create_graph",
    "PINNStep/functorch",
    "Hessian/100",
    "Hessian/100-revrev",
    "Ensemble/forward",
    "Ensemble/grad",
]

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                             formatter_class=argparse.RawDescriptionHelpFormatter,
                             epilog="rows: " + ", ".join(ROWS))
ap.add_argument("workloads", nargs="*", metavar="WORKLOAD",
                help="rows or workload families to run (default all)")
ap.add_argument("--repeats", type=int, default=7, help="timed batches per row (default 7)")
ap.add_argument("--min-time", type=float, default=0.2, help="seconds per timed batch (default 0.2)")
ap.add_argument("--warmup", type=int, default=2, help="untimed calls before timing (default 2)")
ap.add_argument("--threads", type=int, default=1, help="torch and OpenBLAS threads (default 1)")
args = ap.parse_args()

for w in args.workloads:
    if not any(w == r or w == r.split("/")[0] for r in ROWS):
        sys.exit(f"transforms_peer.py: unknown workload {w!r}; rows: {', '.join(ROWS)}")

# OpenBLAS reads its thread count when the library loads: before torch.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    if os.environ.get(var, str(args.threads)) != str(args.threads):
        print(f"# warning: {var}={os.environ[var]} replaced by --threads {args.threads}", flush=True)
    os.environ[var] = str(args.threads)

try:
    import torch
    import torch.nn.functional as F
    import functorch
    from functorch import grad, grad_and_value, hessian, jacrev, vmap
except ImportError as e:
    sys.exit(f"transforms_peer.py: {sys.executable} cannot import torch/functorch ({e}); "
             "apt-get install -y python3-torch libopenblas0-pthread, then run /usr/bin/python3")

torch.set_num_threads(args.threads)


def wanted(row):
    return not args.workloads or any(w == row or w == row.split("/")[0] for w in args.workloads)


def note(s):
    print("# " + s, flush=True)


def warn(s):
    print("# WARNING: " + s, flush=True)


def check(ok, what):
    if ok:
        note("check: " + what)
    else:
        warn("check failed: " + what)


def leaves(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in leaves(o)]
    return []


def all_finite(out):
    return all(bool(torch.isfinite(t).all()) for t in leaves(out))


def measure(row, fn):
    """Times fn (after --warmup calls) and prints `row ms=median min=min`."""
    if not wanted(row):
        return
    t0 = time.perf_counter()
    out = None
    for _ in range(max(1, args.warmup)):
        out = fn()
    warm = (time.perf_counter() - t0) / max(1, args.warmup)
    if not all_finite(out):
        warn(f"{row}: output not finite")
    n = max(1, math.ceil(args.min_time / max(warm, 1e-9)))
    per = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        per.append((time.perf_counter() - t0) / n)
    print(f"{row} ms={statistics.median(per) * 1e3:.4g} min={min(per) * 1e3:.4g}", flush=True)
    note(f"{row}: {n} calls per batch, {args.repeats} batches")


def mlp_params(sizes, dtype):
    ps = []
    for i in range(len(sizes) - 1):
        lin = torch.nn.Linear(sizes[i], sizes[i + 1], dtype=dtype)
        ps += [lin.weight.detach(), lin.bias.detach()]
    return tuple(ps)


def mlp(ps, h, act):
    for i in range(0, len(ps), 2):
        h = F.linear(h, ps[i], ps[i + 1])
        if i + 2 < len(ps):
            h = act(h)
    return h


def maxrel(a, b):
    """max |a - b| over the largest |b| (at least 1), over matching tensor lists."""
    num = max(float((x - y).abs().max()) for x, y in zip(a, b))
    den = max(1.0, max(float(y.abs().max()) for y in b))
    return num / den


# ------------------------------------------------------------ PerExampleGrad/B
def per_example_grad():
    torch.manual_seed(0)
    params = mlp_params([784, 512, 512, 10], torch.float32)
    x = torch.randn(128, 784)
    y = torch.randint(0, 10, (128,))

    def loss1(ps, xi, yi):  # one example: xi [784], yi a 0-d label
        z = mlp(ps, xi.unsqueeze(0), torch.relu)
        return F.cross_entropy(z, yi.unsqueeze(0))

    per_ex = vmap(grad(loss1), in_dims=(None, 0, 0))

    def vmapped():
        return per_ex(params, x, y)

    rparams = tuple(p.clone().requires_grad_() for p in params)

    def loop():
        gs = [torch.autograd.grad(loss1(rparams, x[i], y[i]), rparams) for i in range(x.shape[0])]
        return tuple(torch.stack(g) for g in zip(*gs))

    a, b = vmapped(), loop()
    check(all(t.shape == (128,) + p.shape for t, p in zip(a, params)),
          "PerExampleGrad/B: one gradient per example and parameter, shapes [128, *param.shape]")
    check(all_finite(a) and all(torch.allclose(u, v, rtol=1e-4, atol=1e-6) for u, v in zip(a, b)),
          f"PerExampleGrad/B: vmap(grad) = per-example loop (max diff {max(float((u - v).abs().max()) for u, v in zip(a, b)):.2e})")
    measure("PerExampleGrad/B", vmapped)
    measure("PerExampleGrad/B-loop", loop)


# ------------------------------------------------------------ PerExampleGrad/GaussNLL
def per_example_gauss():
    torch.manual_seed(0)
    dt = torch.float64
    B, n = 256, 16
    g = torch.randn(B, n, n, dtype=dt)
    sigma = g @ g.transpose(-1, -2) / n + torch.eye(n, dtype=dt)
    y = torch.randn(B, n, dtype=dt)

    def nll(s1, y1):  # one example: s1 [n, n] SPD, y1 [n]
        l = torch.linalg.cholesky(s1)
        z = torch.cholesky_solve(y1.unsqueeze(-1), l).squeeze(-1)
        return 0.5 * ((y1 * z).sum() + 2 * torch.log(torch.diagonal(l)).sum())

    per_ex = vmap(grad(nll, argnums=(0, 1)))
    gs, gy = per_ex(sigma, y)
    # The gradient with respect to y is Sigma^-1 y.
    ref = torch.linalg.solve(sigma, y.unsqueeze(-1)).squeeze(-1)
    check(all_finite((gs, gy)) and torch.allclose(gy, ref, rtol=1e-10, atol=1e-12),
          f"PerExampleGrad/GaussNLL: vmap(grad) w.r.t. y = Sigma^-1 y (max diff {float((gy - ref).abs().max()):.2e})")
    measure("PerExampleGrad/GaussNLL", lambda: per_ex(sigma, y))


# ------------------------------------------------------------ PINNStep
def pinn_step():
    torch.manual_seed(0)
    dt = torch.float64
    params = mlp_params([2, 64, 64, 64, 1], dt)
    x = torch.rand(1024, 2, dtype=dt)
    f = -2 * math.pi ** 2 * torch.sin(math.pi * x[:, 0]) * torch.sin(math.pi * x[:, 1])

    # (a) create_graph double backward, as PINN code in PyTorch usually does it.
    rparams = tuple(p.clone().requires_grad_() for p in params)
    xr = x.clone().requires_grad_()

    def step_create_graph():
        for p in rparams:
            p.grad = None
        xr.grad = None
        u = mlp(rparams, xr, torch.tanh)  # [1024, 1]
        (gu,) = torch.autograd.grad(u.sum(), xr, create_graph=True)  # [1024, 2]
        lap = 0
        for d in range(xr.shape[1]):
            (g2,) = torch.autograd.grad(gu[:, d].sum(), xr, create_graph=True)
            lap = lap + g2[:, d]
        loss = ((lap - f) ** 2).mean()
        loss.backward()
        # lap u does not depend on the output bias: autograd leaves its grad None.
        return loss.detach(), tuple(torch.zeros_like(p) if p.grad is None else p.grad for p in rparams)

    # (b) functorch: Laplacian = trace of the Hessian w.r.t. the point, vmapped.
    def u1(ps, pt):  # pt [2] -> scalar
        return mlp(ps, pt, torch.tanh)[0]

    def lap1(ps, pt):
        return torch.trace(hessian(u1, argnums=1)(ps, pt))

    def loss_fn(ps):
        lap = vmap(lap1, in_dims=(None, 0))(ps, x)
        return ((lap - f) ** 2).mean()

    step_ft = grad_and_value(loss_fn)

    def step_functorch():
        g, loss = step_ft(params)
        return loss, g

    la, ga = step_create_graph()
    ga = tuple(t.clone() for t in ga)
    lb, gb = step_functorch()
    rel = maxrel([la, *ga], [lb, *gb])
    check(all_finite((la, ga, lb, gb)), f"PINNStep: loss and gradients finite (loss {float(la):.6g})")
    check(rel <= 1e-9, f"PINNStep: create_graph and functorch routes agree, loss and gradient (max rel diff {rel:.2e} <= 1e-9)")
    measure("PINNStep/create_graph", step_create_graph)
    measure("PINNStep/functorch", step_functorch)


# ------------------------------------------------------------ Hessian/100
def hessian100():
    torch.manual_seed(0)
    dt = torch.float64
    n = 100
    A = torch.randn(n, n, dtype=dt) / 10
    x = torch.randn(n, dtype=dt)

    def fx(v):
        return (torch.tanh(A @ v) ** 2).sum() + (v ** 4).sum()

    t = torch.tanh(A @ x)
    s2 = 1 - t ** 2
    ref = A.T @ ((2 * s2 * (s2 - 2 * t ** 2))[:, None] * A) + torch.diag(12 * x ** 2)
    H = hessian(fx)(x)
    H2 = jacrev(jacrev(fx))(x)
    check(all_finite(H) and torch.allclose(H, ref, rtol=1e-10, atol=1e-10),
          f"Hessian/100: hessian(f) = closed form (max diff {float((H - ref).abs().max()):.2e})")
    check(torch.allclose(H2, ref, rtol=1e-10, atol=1e-10),
          f"Hessian/100-revrev: jacrev(jacrev(f)) = closed form (max diff {float((H2 - ref).abs().max()):.2e})")
    measure("Hessian/100", lambda: hessian(fx)(x))
    measure("Hessian/100-revrev", lambda: jacrev(jacrev(fx))(x))


# ------------------------------------------------------------ Ensemble
def ensemble():
    torch.manual_seed(0)
    dt = torch.float32
    models = [mlp_params([784, 256, 256, 10], dt) for _ in range(8)]
    params = tuple(torch.stack(ps) for ps in zip(*models))
    x = torch.randn(64, 784, dtype=dt)
    y = F.one_hot(torch.randint(0, 10, (64,)), 10).to(dt)

    def fwd(ps, x):
        return mlp(ps, x, torch.relu)

    def loss(ps, x, y):
        return -(F.log_softmax(fwd(ps, x), -1) * y).sum() / x.shape[0]

    out = vmap(fwd, in_dims=(0, None))
    per_model = vmap(grad(loss), in_dims=(0, None, None))
    a = out(params, x)
    b = torch.stack([fwd(ps, x) for ps in models])
    check(all_finite(a) and torch.allclose(a, b, rtol=1e-4, atol=1e-5),
          f"Ensemble/forward: vmap = loop over the models (max diff {float((a - b).abs().max()):.2e})")
    g = per_model(params, x, y)
    g0 = grad(loss)(models[3], x, y)
    check(all_finite(g) and all(torch.allclose(u[3], v, rtol=1e-4, atol=1e-6) for u, v in zip(g, g0)),
          "Ensemble/grad: model 3's gradient = its own grad")
    measure("Ensemble/forward", lambda: out(params, x))
    measure("Ensemble/grad", lambda: per_model(params, x, y))


def main():
    note(f"torch {torch.__version__}, functorch {functorch.__version__}, python {sys.version.split()[0]}, "
         f"threads {torch.get_num_threads()}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, "
         f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    if wanted("PerExampleGrad/B") or wanted("PerExampleGrad/B-loop"):
        per_example_grad()
    if wanted("PerExampleGrad/GaussNLL"):
        per_example_gauss()
    if any(wanted(r) for r in ROWS if r.startswith("PINNStep/")):
        pinn_step()
    if any(wanted(r) for r in ROWS if r.startswith("Hessian/")):
        hessian100()
    if any(wanted(r) for r in ROWS if r.startswith("Ensemble/")):
        ensemble()


if __name__ == "__main__":
    main()
