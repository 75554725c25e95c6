// ADOL-C side of the scalar-tape comparison (see run.sh). It times the same
// three workloads as the Go benchmarks in scalar/bench_test.go:
//
//   W1  extended Rosenbrock, n = 1e3, 1e5, 1e6
//   W2  logistic-regression negative log-likelihood, 20 features x 1e4 rows
//       (synthetic) and the breast-cancer data (30 x 569), w.r.t. p+1 params
//   W3  z = x*y + sin(x^2) - ln y, 1e6 evaluations
//
// For each it prints the plain double function's time and ADOL-C's gradient
// time in two modes: "record" (trace_on/trace_off with keep=1, then one
// fos_reverse: what a define-by-run tape does on every evaluation) and
// "replay" (gradient() on a tape recorded once: zos_forward + fos_reverse).
// Times are the best of several runs, in ns per gradient (per 1e6
// evaluations for W3), as lines "name plain_ns record_ns replay_ns".
#include <adolc/adolc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

static volatile double sink;

// best_ns returns the best time of one call of f over 5 runs of at least
// 0.1 s (or one call if a call is longer).
template <class F> static double best_ns(F f) {
    using clk = std::chrono::steady_clock;
    long n = 1;
    for (;;) {
        auto t0 = clk::now();
        for (long i = 0; i < n; i++) f();
        double s = std::chrono::duration<double>(clk::now() - t0).count();
        if (s > 0.1) break;
        n *= 2;
    }
    double best = 1e300;
    for (int r = 0; r < 5; r++) {
        auto t0 = clk::now();
        for (long i = 0; i < n; i++) f();
        double ns = std::chrono::duration<double, std::nano>(clk::now() - t0).count() / n;
        best = std::min(best, ns);
    }
    return best;
}

template <class T> static T rosenbrock(const T* x, int n) {
    T s = 0;
    for (int i = 0; i + 1 < n; i += 2) {
        T a = x[i + 1] - x[i] * x[i];
        T c = 1 - x[i];
        s += 100 * a * a + c * c;
    }
    return s;
}

struct Logistic {
    int p = 0;
    std::vector<double> x, y, param;
};

static double softplus_d(double z) {
    if (z > 0) return z + std::log1p(std::exp(-z));
    return std::log1p(std::exp(z));
}

static double nll_plain(const Logistic& d, const double* param) {
    double s = 0;
    const int p = d.p;
    for (size_t i = 0; i < d.y.size(); i++) {
        const double* row = &d.x[i * p];
        double z = param[p];
        for (int j = 0; j < p; j++) z += param[j] * row[j];
        s += softplus_d(z) - d.y[i] * z;
    }
    return s;
}

static adouble nll_ad(const Logistic& d, const adouble* param) {
    adouble s = 0;
    const int p = d.p;
    for (size_t i = 0; i < d.y.size(); i++) {
        const double* row = &d.x[i * p];
        adouble z = param[p];
        for (int j = 0; j < p; j++) z += param[j] * row[j];
        // The stable softplus as in the Go code. ADOL-C 2.7 has no log1p for
        // adouble, so log(1 + .) stands in (the same number of operations).
        // A taped branch is valid only at the recorded point, which is where
        // the gradient is evaluated.
        adouble sp;
        if (z.value() > 0) sp = z + log(1 + exp(-z));
        else sp = log(1 + exp(z));
        s += sp - d.y[i] * z;
    }
    return s;
}

static Logistic synthetic(int rows, int p) {
    std::mt19937_64 r(12345);
    std::normal_distribution<double> nd;
    std::uniform_real_distribution<double> ud;
    Logistic d;
    d.p = p;
    d.x.resize(size_t(rows) * p);
    d.y.resize(rows);
    d.param.resize(p + 1);
    std::vector<double> w(p);
    for (int j = 0; j < p; j++) {
        w[j] = nd(r);
        d.param[j] = 0.1 * nd(r);
    }
    for (int i = 0; i < rows; i++) {
        double z = 0;
        for (int j = 0; j < p; j++) {
            double v = nd(r);
            d.x[size_t(i) * p + j] = v;
            z += w[j] * v;
        }
        d.y[i] = ud(r) < 1 / (1 + std::exp(-z)) ? 1 : 0;
    }
    return d;
}

static Logistic breast_cancer(const char* path) {
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "cannot read %s\n", path);
        std::exit(1);
    }
    std::string line;
    std::getline(in, line);  // header
    Logistic d;
    d.p = 30;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::stringstream ss(line);
        std::string f;
        for (int j = 0; j < 30; j++) {
            std::getline(ss, f, ',');
            d.x.push_back(std::stod(f));
        }
        std::getline(ss, f, ',');
        d.y.push_back(std::stod(f));
    }
    size_t n = d.y.size();
    for (int j = 0; j < 30; j++) {  // standardise
        double m = 0, q = 0;
        for (size_t i = 0; i < n; i++) m += d.x[i * 30 + j];
        m /= n;
        for (size_t i = 0; i < n; i++) q += (d.x[i * 30 + j] - m) * (d.x[i * 30 + j] - m);
        double sd = std::sqrt(q / n);
        if (sd == 0) sd = 1;
        for (size_t i = 0; i < n; i++) d.x[i * 30 + j] = (d.x[i * 30 + j] - m) / sd;
    }
    d.param.resize(31);
    for (int j = 0; j < 31; j++) d.param[j] = 0.05 * (j % 5 - 2);
    return d;
}

// time_gradient records f on tag and times record+reverse and replay.
template <class Rec> static void time_gradient(const char* name, int n, std::vector<double>& x, double plain_ns,
                                               Rec record) {
    std::vector<double> g(n);
    const short tag = 1;
    double one = 1;
    double rec = best_ns([&] {
        trace_on(tag, 1);
        record();
        trace_off();
        fos_reverse(tag, 1, n, &one, g.data());
        sink = g[0];
    });
    trace_on(tag);
    record();
    trace_off();
    double rep = best_ns([&] {
        gradient(tag, n, x.data(), g.data());
        sink = g[0];
    });
    std::printf("%s %.6g %.6g %.6g\n", name, plain_ns, rec, rep);
    std::fflush(stdout);
}

int main(int argc, char** argv) {
    const char* bc = argc > 1 ? argv[1] : "breast_cancer.csv";
    // Run only the workload named argv[2], if given. ADOL-C's location
    // store never shrinks, so a large tape makes every later (small) one
    // slow: run.sh runs each workload in its own process.
    const std::string only = argc > 2 ? argv[2] : "";
    auto want = [&](const std::string& name) { return only.empty() || name == only; };

    for (int n : {1000, 100000, 1000000}) {
        std::vector<double> x(n);
        for (int i = 0; i < n; i++) x[i] = i % 2 ? 1 : -1.2;
        char name[64];
        std::snprintf(name, sizeof name, "W1/n=%d", n);
        if (!want(name)) continue;
        double plain = best_ns([&] { sink = rosenbrock(x.data(), n); });
        std::vector<adouble> ax(n);
        time_gradient(name, n, x, plain, [&] {
            for (int i = 0; i < n; i++) ax[i] <<= x[i];
            adouble y = rosenbrock(ax.data(), n);
            double v;
            y >>= v;
        });
    }

    for (int k = 0; k < 2; k++) {
        if (!want(k == 0 ? "W2/synthetic-20x1e4" : "W2/breast-cancer-30x569")) continue;
        Logistic d = k == 0 ? synthetic(10000, 20) : breast_cancer(bc);
        int n = d.p + 1;
        double plain = best_ns([&] { sink = nll_plain(d, d.param.data()); });
        std::vector<adouble> ap(n);
        time_gradient(k == 0 ? "W2/synthetic-20x1e4" : "W2/breast-cancer-30x569", n, d.param, plain, [&] {
            for (int i = 0; i < n; i++) ap[i] <<= d.param[i];
            adouble y = nll_ad(d, ap.data());
            double v;
            y >>= v;
        });
    }

    if (want("W3/1e6-evals")) {
        const int evals = 1000000;
        double plain = best_ns([&] {
            double s = 0;
            for (int k = 0; k < evals; k++) {
                double x = 0.5 + 1e-7 * k, y = 4;
                s += x * y + std::sin(x * x) - std::log(y);
            }
            sink = s;
        });
        const short tag = 2;
        double one = 1, g[2], xy[2];
        // ADOL-C takes microseconds or more per evaluation: time single
        // evaluations (best_ns repeats them) and scale to 1e6.
        int k = 0;
        double rec = evals * best_ns([&] {
            trace_on(tag, 1);
            adouble x, y;
            x <<= 0.5 + 1e-7 * (k++ % evals);
            y <<= 4.0;
            adouble z = x * y + sin(x * x) - log(y);
            double v;
            z >>= v;
            trace_off();
            fos_reverse(tag, 1, 2, &one, g);
            sink = g[0] + g[1];
        });
        trace_on(tag);
        {
            adouble x, y;
            x <<= 0.5;
            y <<= 4.0;
            adouble z = x * y + sin(x * x) - log(y);
            double v;
            z >>= v;
        }
        trace_off();
        double rep = evals * best_ns([&] {
            xy[0] = 0.5 + 1e-7 * (k++ % evals);
            xy[1] = 4;
            gradient(tag, 2, xy, g);
            sink = g[0] + g[1];
        });
        std::printf("W3/1e6-evals %.6g %.6g %.6g\n", plain, rec, rep);
    }
    return 0;
}
