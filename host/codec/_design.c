/* The class cut of lutzip.codec.states_design in C (lutzip.codec.design_c loads it with ctypes).

   lzd_cut:  states_design._cut -- the dynamic programme over one value list (counts a, b per state, sorted by
             a + b descending): f[m, i] the Lagrangian cost of the first i values cut into m classes of 2^k
             entries (k <= max_k), back[m, i] = (k, start) of the last class.
   lzd_join: states_design._partition's choice of the two lists' ends and class counts, the tails joined into
             one escape class of 8 index bits: the (m1, i1, m2, i2) of the smallest total.

   The same operations in the same order as the numpy code (compiled with -ffp-contract=off), so both choose the
   same cut up to the last bit of log2 (tests/test_design_c.py). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

/* states_design._code_cost: min over l in 1..L of x l + mu 2^-l, or (has_mu == 0) -x log2 x */
static double code_cost(double x, double mu, int has_mu, int64_t L)
{
    if (!has_mu)
        return x > 0 ? -(x * log2(x)) : 0.0;
    double best = INFINITY;
    for (int64_t l = 1; l <= L; l++) {
        double v = x * (double)l + mu * ldexp(1.0, (int)-l);
        if (v < best)
            best = v;
    }
    return best;
}

EXPORT int lzd_cut(const int64_t *a, const int64_t *b, int64_t n, int64_t max_m, int64_t max_k, double mu_a,
                   double mu_b, int has_mu, int64_t L, double *f, int64_t *back)
{
    int64_t W = n + 1;
    double *A = malloc(sizeof(double) * (size_t)(n + 1));
    double *B = malloc(sizeof(double) * (size_t)(n + 1));
    double *seg = malloc(sizeof(double) * (size_t)((max_k + 1) * (n ? n : 1)));
    if (!A || !B || !seg) {
        free(A); free(B); free(seg);
        return -2;
    }
    int64_t sa = 0, sb = 0;
    A[0] = B[0] = 0.0;
    for (int64_t i = 0; i < n; i++) {
        sa += a[i];
        sb += b[i];
        A[i + 1] = (double)sa;
        B[i + 1] = (double)sb;
    }
    for (int64_t m = 0; m <= max_m; m++)
        for (int64_t i = 0; i <= n; i++) {
            f[m * W + i] = INFINITY;
            back[2 * (m * W + i)] = back[2 * (m * W + i) + 1] = -1;
        }
    f[0] = 0.0;
    for (int64_t k = 0; k <= max_k; k++)
        for (int64_t i = 0; i < n; i++) {
            int64_t j = i + ((int64_t)1 << k);
            if (j > n)
                j = n;
            double xa = A[j] - A[i], xb = B[j] - B[i];
            seg[k * n + i] = code_cost(xa, mu_a, has_mu, L) + code_cost(xb, mu_b, has_mu, L) + (xa + xb) * (double)k;
        }
    for (int64_t m = 1; m <= max_m; m++) {
        const double *prev = f + (m - 1) * W;
        double *cur = f + m * W;
        int64_t *bk = back + 2 * m * W;
        for (int64_t k = 0; k <= max_k; k++) {
            int64_t step = (int64_t)1 << k;
            for (int64_t i = 0; i < n; i++) {          /* classes that end inside the list: distinct targets */
                if (i + step > n)
                    break;
                double c = prev[i] + seg[k * n + i];
                if (!isfinite(c))
                    continue;
                int64_t t = i + step;
                if (c < cur[t]) {
                    cur[t] = c;
                    bk[2 * t] = k;
                    bk[2 * t + 1] = i;
                }
            }
            int64_t bi = -1;                            /* a class padded past the list's end: the cheapest */
            double bc = INFINITY;
            for (int64_t i = n - step + 1 > 0 ? n - step + 1 : 0; i < n; i++) {
                double c = prev[i] + seg[k * n + i];
                if (isfinite(c) && (bi < 0 || c < bc)) {
                    bc = c;
                    bi = i;
                }
            }
            if (bi >= 0 && bc < cur[n]) {
                cur[n] = bc;
                bk[2 * n] = k;
                bk[2 * n + 1] = bi;
            }
        }
    }
    free(A); free(B); free(seg);
    return 0;
}

/* f1: (room + 1) x (n1 + 1), f2: (room + 1) x (n2 + 1) from lzd_cut; ta1, tb1 (n1 + 1), ta2, tb2 (n2 + 1): the
   lists' tail counts per state. out: m1, i1, m2, i2; returns 0, or 1 when no total is finite. */
EXPORT int lzd_join(const double *f1, int64_t n1, const double *f2, int64_t n2, int64_t room, const double *ta1,
                    const double *tb1, const double *ta2, const double *tb2, double mu_a, double mu_b, int has_mu,
                    int64_t L, int64_t *out, double *out_cost)
{
    int64_t W1 = n1 + 1, W2 = n2 + 1;
    double *esc = malloc(sizeof(double) * (size_t)(W1 * W2));
    double *g = malloc(sizeof(double) * (size_t)((room + 1) * W2));
    int64_t *arg = malloc(sizeof(int64_t) * (size_t)((room + 1) * W2));
    if (!esc || !g || !arg) {
        free(esc); free(g); free(arg);
        return -2;
    }
    double pa[64], pb[64];                            /* mu 2^-l, as code_cost computes it */
    for (int64_t l = 1; l <= L && l < 64; l++) {
        pa[l] = mu_a * ldexp(1.0, (int)-l);
        pb[l] = mu_b * ldexp(1.0, (int)-l);
    }
    for (int64_t i1 = 0; i1 < W1; i1++)
        for (int64_t i2 = 0; i2 < W2; i2++) {
            double ea = ta1[i1] + ta2[i2], eb = tb1[i1] + tb2[i2], ca, cb;
            if (has_mu) {
                ca = cb = INFINITY;
                for (int64_t l = 1; l <= L && l < 64; l++) {
                    double va = ea * (double)l + pa[l], vb = eb * (double)l + pb[l];
                    if (va < ca)
                        ca = va;
                    if (vb < cb)
                        cb = vb;
                }
            } else {
                ca = code_cost(ea, 0.0, 0, L);
                cb = code_cost(eb, 0.0, 0, L);
            }
            esc[i1 * W2 + i2] = ca + cb + (ea + eb) * 8.0;
        }
    for (int64_t i2 = 0; i2 < W2; i2++) {             /* g[m] = min over m2 <= m of f2[m2], arg its m2 */
        double gv = INFINITY;
        int64_t av = 0;
        for (int64_t m = 0; m <= room; m++) {
            if (f2[m * W2 + i2] < gv) {
                gv = f2[m * W2 + i2];
                av = m;
            }
            g[m * W2 + i2] = gv;
            arg[m * W2 + i2] = av;
        }
    }
    int found = 0;
    double best = 0.0;
    for (int64_t m1 = 0; m1 <= room; m1++) {
        const double *gr = g + (room - m1) * W2;
        const double *fr = f1 + m1 * W1;
        double bt = INFINITY;
        int64_t b1 = 0, b2 = 0, any = 0;
        for (int64_t i1 = 0; i1 < W1; i1++)
            for (int64_t i2 = 0; i2 < W2; i2++) {
                double t = fr[i1] + gr[i2] + esc[i1 * W2 + i2];
                if (!any || t < bt) {                   /* numpy's argmin: the first of the smallest */
                    bt = t;
                    b1 = i1;
                    b2 = i2;
                    any = 1;
                }
            }
        if (isfinite(bt) && (!found || bt < best)) {
            best = bt;
            found = 1;
            out[0] = m1;
            out[1] = b1;
            out[2] = arg[(room - m1) * W2 + b2];
            out[3] = b2;
        }
    }
    free(esc); free(g); free(arg);
    *out_cost = best;
    return found ? 0 : 1;
}

/* states_design.intervals' costs: P (R + 1) x C prefix sums over the rows of the pair counts, total (C): the
   state-B counts of the interval of rows [lo, hi) are P[hi] - P[lo]; cost[q] for the q-th pair lo < hi in
   numpy.triu_indices(R + 1, 1) order: the two states' order-0 bits, INFINITY where a state is empty. */
static double xlog2x(int64_t x, const double *tab, int64_t ntab)
{
    if (x <= 0)
        return 0.0;
    if (x < ntab)
        return tab[x];
    return (double)x * log2((double)x);
}

EXPORT int lzd_intervals(const int64_t *P, int64_t R, int64_t C, const int64_t *total, double *cost)
{
    int64_t ntab = 1 << 16;
    double *tab = malloc(sizeof(double) * (size_t)ntab);
    int64_t *hb = malloc(sizeof(int64_t) * (size_t)(C ? C : 1));
    if (!tab || !hb) {
        free(tab); free(hb);
        return -2;
    }
    tab[0] = 0.0;
    for (int64_t x = 1; x < ntab; x++)
        tab[x] = (double)x * log2((double)x);
    int64_t q = 0;
    for (int64_t lo = 0; lo <= R; lo++)
        for (int64_t hi = lo + 1; hi <= R; hi++, q++) {
            const int64_t *ph = P + hi * C, *pl = P + lo * C;
            int64_t nb = 0, na = 0;
            double sb = 0.0, sa = 0.0;
            for (int64_t j = 0; j < C; j++) {
                int64_t b = ph[j] - pl[j], a = total[j] - b;
                nb += b;
                na += a;
                sb += xlog2x(b, tab, ntab);
                sa += xlog2x(a, tab, ntab);
            }
            cost[q] = (nb > 0 && na > 0) ? (xlog2x(nb, tab, ntab) - sb) + (xlog2x(na, tab, ntab) - sa) : INFINITY;
        }
    free(tab); free(hb);
    return 0;
}
