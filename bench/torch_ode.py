"""PyTorch side of BenchmarkNeuralODE (ode/bench_test.go): a neural ODE,
dy/dt = f(y) with f the 2->64->2 tanh MLP of examples/neuralode
(tanh(y @ W1.T + b1) @ W2.T + b2), on a batch of 256 float32 points,
integrated by RK4 in 100 steps over [0, 1]; loss the mean square of the
final state. One thread. Variants:

    forward   the solve under torch.no_grad()
    backprop  the solve recorded by autograd and loss.backward() through
              every RK4 step (what adjoint's Backprop method does)
    adjoint   the continuous adjoint on the same grid, written by hand as
              torchdiffeq's odeint_adjoint does it (torchdiffeq is not part
              of Debian's PyTorch): the forward solve unrecorded, then RK4
              backward over the augmented state [y, a, a_theta], one
              torch.autograd.grad VJP of f per stage (adjoint's Adjoint
              method)

Prints one line per variant,

    neuralode/<variant> <ns per solve+gradient>

the median of REPEATS timed runs after WARMUP runs, and a '# ' line
comparing the adjoint's parameter gradient with backprop's (they agree to
the solver's accuracy). VARIANTS (forward,backprop,adjoint) sets which run
and in what order; bench/ode.sh runs each in its own process and rotates
the order.

Run with Debian's interpreter:
OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_ode.py [REPEATS [VARIANTS]]
"""
import statistics
import sys
import time

import torch

torch.set_num_threads(1)
HIDDEN, BATCH, STEPS, T1 = 64, 256, 100, 1.0
WARMUP = 2


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    order = sys.argv[2].split(",") if len(sys.argv) > 2 else ["forward", "backprop", "adjoint"]
    torch.manual_seed(1)
    l1, l2 = torch.nn.Linear(2, HIDDEN), torch.nn.Linear(HIDDEN, 2)
    params = [l1.weight, l1.bias, l2.weight, l2.bias]
    y0 = torch.rand(BATCH, 2) * 2 - 1
    h = T1 / STEPS

    def f(y):
        return l2(torch.tanh(l1(y)))

    def rk4(y):
        for _ in range(STEPS):
            k1 = f(y)
            k2 = f(y + h / 2 * k1)
            k3 = f(y + h / 2 * k2)
            k4 = f(y + h * k3)
            y = y + h / 6 * k1 + h / 3 * k2 + h / 3 * k3 + h / 6 * k4
        return y

    def forward():
        with torch.no_grad():
            rk4(y0)

    def backprop():
        for p in params:
            p.grad = None
        loss = rk4(y0).square().mean()
        loss.backward()
        return [p.grad for p in params]

    def aug(s):
        # [dy, -a^T df/dy, -a^T df/dtheta...] at s = [y, a, a_theta...].
        with torch.enable_grad():
            y = s[0].detach().requires_grad_()
            out = f(y)
            g = torch.autograd.grad(out, [y] + params, -s[1])
        return [out.detach()] + list(g)

    def adjoint():
        with torch.no_grad():
            y1 = rk4(y0)
        s = [y1, 2 * y1 / y1.numel()] + [torch.zeros_like(p) for p in params]
        hb = -h
        for _ in range(STEPS):
            k1 = aug(s)
            k2 = aug([x + hb / 2 * k for x, k in zip(s, k1)])
            k3 = aug([x + hb / 2 * k for x, k in zip(s, k2)])
            k4 = aug([x + hb * k for x, k in zip(s, k3)])
            s = [x + hb / 6 * a + hb / 3 * b + hb / 3 * c + hb / 6 * d for x, a, b, c, d in zip(s, k1, k2, k3, k4)]
        return s[2:]

    runs = {"forward": forward, "backprop": backprop, "adjoint": adjoint}
    gb, ga = backprop(), adjoint()
    err = max(((a - b).abs().max() / b.abs().max()).item() for a, b in zip(ga, gb))
    print(f"# torch {torch.__version__}: adjoint vs backprop parameter gradients, largest relative difference {err:.2g}")
    for name in order:
        run = runs[name]
        for _ in range(WARMUP):
            run()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        print(f"neuralode/{name} {statistics.median(times) * 1e9:.0f}")


if __name__ == "__main__":
    main()
