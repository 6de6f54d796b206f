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
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* states_design._code_cost: min over l in 1..L of x l + mu 2^-l, or (has_mu == 0) -x log2 x */
static double code_cost(double x, double mu, int has_mu, int64_t L)
{
    static const double p2[] = {1.0, 0x1p-1, 0x1p-2, 0x1p-3, 0x1p-4, 0x1p-5, 0x1p-6, 0x1p-7, 0x1p-8, 0x1p-9,
                                0x1p-10, 0x1p-11, 0x1p-12, 0x1p-13, 0x1p-14, 0x1p-15, 0x1p-16};
    if (!has_mu)
        return x > 0 ? -(x * log2(x)) : 0.0;
    double best = INFINITY;
    for (int64_t l = 1; l <= L; l++) {
        double v = x * (double)l + mu * (l <= 16 ? p2[l] : ldexp(1.0, (int)-l));
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
        double bt = INFINITY, gmin = INFINITY;
        int64_t b1 = 0, b2 = 0, any = 0;
        for (int64_t i2 = 0; i2 < W2; i2++)
            if (gr[i2] < gmin)
                gmin = gr[i2];
        for (int64_t i1 = 0; i1 < W1; i1++) {
            /* a row none of whose totals can be below this m1's smallest so far, or below the smallest total of
               the m1 before (this m1 is then not chosen), is skipped: fr + gr + esc >= fr + gmin + esc[i1, n2]
               in floating point too (with multipliers the escape's cost only shrinks as list 2 is covered further:
               min over l of x l + mu 2^-l grows with x; the ideal -x log2 x does not; rounding is monotone) */
            if (any && (fr[i1] == INFINITY ||
                        (has_mu && fr[i1] + gmin + esc[i1 * W2 + W2 - 1] > (found && best < bt ? best : bt))))
                continue;
            const double f = fr[i1], *er = esc + i1 * W2;
            double rmin = INFINITY;                      /* the row's smallest total (min is exact: any order) */
            for (int64_t i2 = 0; i2 < W2; i2++) {
                double t = f + gr[i2] + er[i2];
                rmin = t < rmin ? t : rmin;
            }
            if (any && !(rmin < bt))
                continue;
            for (int64_t i2 = 0; i2 < W2; i2++) {         /* numpy's argmin: the first of the smallest */
                double t = f + gr[i2] + er[i2];
                if (!any || t < bt) {
                    bt = t;
                    b1 = i1;
                    b2 = i2;
                    any = 1;
                }
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

/* ------------------------------------------------------------------------------------ package-merge */
/* The code lengths of _states.c's lzs_lengths (huffman.limited_code_lengths: package-merge, leaves sorted stably
   by weight, leaves before packages of the same weight), for at most NC weights; every class gets a code (a
   weight <= 0 counts 1e-9), as states._lengths(counts, L, True). Returns -1 when more than 2^L symbols. */
#define NC 16
typedef struct {
    double w;
    uint8_t c[NC];
} pm_item;

static int pm_lengths_every(int n, const double *counts, int L, int64_t *len)
{
    double w[NC];
    for (int i = 0; i < n; i++) {
        w[i] = counts[i] > 0 ? counts[i] : 1e-9;
        len[i] = 0;
    }
    if (n == 0)
        return 0;
    if (n == 1) {
        len[0] = 1;
        return 0;
    }
    if (L < 31 && n > (1 << L))
        return -1;
    pm_item leaves[NC], pk[2 * NC], nx[2 * NC], mg[NC];
    for (int a = 0; a < n; a++) {
        int b = a - 1;
        while (b >= 0 && leaves[b].w > w[a]) {
            leaves[b + 1] = leaves[b];
            b--;
        }
        memset(&leaves[b + 1], 0, sizeof(pm_item));
        leaves[b + 1].w = w[a];
        leaves[b + 1].c[a] = 1;
    }
    int np_ = n;
    memcpy(pk, leaves, (size_t)n * sizeof(pm_item));
    for (int it = 0; it < L - 1; it++) {
        int m = np_ / 2;
        for (int j = 0; j < m; j++) {
            mg[j].w = pk[2 * j].w + pk[2 * j + 1].w;
            for (int s = 0; s < NC; s++)
                mg[j].c[s] = (uint8_t)(pk[2 * j].c[s] + pk[2 * j + 1].c[s]);
        }
        int a = 0, b = 0;
        for (int t = 0; t < n + m; t++) {
            if (b >= m || (a < n && leaves[a].w <= mg[b].w))
                nx[t] = leaves[a++];
            else
                nx[t] = mg[b++];
        }
        np_ = n + m;
        memcpy(pk, nx, (size_t)np_ * sizeof(pm_item));
    }
    for (int t = 0; t < 2 * n - 2; t++)
        for (int s = 0; s < n; s++)
            len[s] += pk[t].c[s];
    return 0;
}

/* ------------------------------------------------------------------------------------ one whole design */
/* states_design.design_two's partitions in one call: for each of n_mu multiplier pairs, _partition (the two value
   lists by count, lzd_cut of each, lzd_join) and _bits (the estimate after package-merge). ha, hb: the words'
   state counts (256 each); S: 256 bytes, 1 for the words in the value set; zr_n, zr_k: the ZRUN classes kept
   (value 0 left to them when zr_n > 0); room: LUT classes at most. Out per multiplier q: bits[q] (INFINITY: no
   partition), cls[q * 256 + v] the class of word v (0 .. ns - 1 the small list's classes in list order, ns ..
   ns + nl - 1 the large list's, -1 the escape or no class), kk[q * 16 + j] the classes' index bits, nsl[2 q],
   nsl[2 q + 1] = ns, nl. Returns 0, -2 on no memory, -1 when package-merge fails. */
EXPORT int lzd_design(const int64_t *ha, const int64_t *hb, const uint8_t *S, int64_t zr_n, const int64_t *zr_k,
                      int64_t room, int64_t max_k, int64_t n_mu, const double *mu_a, const double *mu_b,
                      const int32_t *has, int64_t L, double *bits, int64_t *cls, int64_t *kk, int64_t *nsl)
{
    int64_t order[2][256], n[2] = {0, 0};
    for (int side = 0; side < 2; side++) {            /* the values of each list, by count (ties: by word) */
        int64_t *o = order[side], m = 0;
        for (int64_t v = 0; v < 256; v++) {
            if ((S[v] != 0) != (side == 0))
                continue;
            if (ha[v] + hb[v] <= 0 || (zr_n && v == 0))
                continue;
            int64_t c = ha[v] + hb[v], b = m - 1;
            while (b >= 0 && ha[o[b]] + hb[o[b]] < c) {
                o[b + 1] = o[b];
                b--;
            }
            o[b + 1] = v;
            m++;
        }
        n[side] = m;
    }
    int64_t W[2] = {n[0] + 1, n[1] + 1};
    int64_t *A[2], *B[2];
    double *f[2], *ta[2], *tb[2];
    int64_t *back[2];
    int rc = 0;
    for (int s = 0; s < 2; s++) {
        A[s] = malloc(sizeof(int64_t) * (size_t)(n[s] ? n[s] : 1));
        B[s] = malloc(sizeof(int64_t) * (size_t)(n[s] ? n[s] : 1));
        f[s] = malloc(sizeof(double) * (size_t)((room + 1) * W[s]));
        back[s] = malloc(sizeof(int64_t) * (size_t)(2 * (room + 1) * W[s]));
        ta[s] = malloc(sizeof(double) * (size_t)W[s]);
        tb[s] = malloc(sizeof(double) * (size_t)W[s]);
        if (!A[s] || !B[s] || !f[s] || !back[s] || !ta[s] || !tb[s])
            rc = -2;
    }
    if (!rc) {
        for (int s = 0; s < 2; s++) {
            int64_t sa = 0, sb = 0;
            for (int64_t i = 0; i < n[s]; i++) {
                A[s][i] = ha[order[s][i]];
                B[s][i] = hb[order[s][i]];
            }
            ta[s][n[s]] = tb[s][n[s]] = 0.0;
            for (int64_t i = n[s] - 1; i >= 0; i--) {
                sa += A[s][i];
                sb += B[s][i];
                ta[s][i] = (double)sa;
                tb[s][i] = (double)sb;
            }
        }
    }
    for (int64_t q = 0; q < n_mu && !rc; q++) {
        bits[q] = INFINITY;
        nsl[2 * q] = nsl[2 * q + 1] = 0;
        for (int v = 0; v < 256; v++)
            cls[q * 256 + v] = -1;
        for (int j = 0; j < NC; j++)
            kk[q * NC + j] = 0;
        for (int s = 0; s < 2 && !rc; s++)
            if (lzd_cut(A[s], B[s], n[s], room, max_k, mu_a[q], mu_b[q], has[q], L, f[s], back[s]))
                rc = -2;
        if (rc)
            break;
        int64_t out[4];
        double cost;
        int j = lzd_join(f[0], n[0], f[1], n[1], room, ta[0], tb[0], ta[1], tb[1], mu_a[q], mu_b[q], has[q], L,
                         out, &cost);
        if (j == -2) {
            rc = -2;
            break;
        }
        if (j)
            continue;
        /* the classes of each list's cut (states_design._classes_of), in list order */
        int64_t nc = 0, ks[NC];
        double ca[NC], cb[NC];
        int bad = 0;
        for (int s = 0; s < 2; s++) {
            int64_t m = out[2 * s], i = out[2 * s + 1], tmpk[NC], tmps[NC], tmpe[NC], c = 0;
            while (m > 0 && i > 0) {
                int64_t *bk = back[s] + 2 * (m * W[s] + i);
                if (c >= NC) {
                    bad = 1;
                    break;
                }
                tmpk[c] = bk[0];
                tmps[c] = bk[1];
                tmpe[c] = i;
                c++;
                i = bk[1];
                m--;
            }
            if (i != 0 || bad || nc + c > NC) {
                bad = 1;
                break;
            }
            nsl[2 * q + s] = c;
            for (int64_t t = c - 1; t >= 0; t--) {
                ks[nc] = tmpk[t];
                int64_t sa = 0, sb = 0;                /* the class's state counts (exact integers) */
                for (int64_t x = tmps[t]; x < tmpe[t]; x++) {
                    cls[q * 256 + order[s][x]] = nc;
                    sa += A[s][x];
                    sb += B[s][x];
                }
                ca[nc] = (double)sa;
                cb[nc] = (double)sb;
                nc++;
            }
        }
        if (bad || nc + 1 + zr_n > NC) {
            rc = -3;
            break;
        }
        int64_t ra = 0, rb = 0;                       /* the escape: every other word but a ZRUN's 0 */
        for (int v = 0; v < 256; v++)
            if (cls[q * 256 + v] < 0 && !(zr_n && v == 0)) {
                ra += ha[v];
                rb += hb[v];
            }
        int64_t ncl = nc;
        ca[ncl] = (double)ra;
        cb[ncl] = (double)rb;
        ks[ncl] = 8;
        ncl++;
        for (int64_t z = 0; z < zr_n; z++) {
            ca[ncl] = (double)(zr_n ? ha[0] : 0) / (double)zr_n;
            cb[ncl] = (double)(zr_n ? hb[0] : 0) / (double)zr_n;
            ks[ncl] = zr_k[z];
            ncl++;
        }
        int64_t la[NC], lb[NC];
        if (pm_lengths_every((int)ncl, ca, (int)L, la) || pm_lengths_every((int)ncl, cb, (int)L, lb)) {
            rc = -1;
            break;
        }
        double tot = 0.0;
        for (int64_t c = 0; c < ncl; c++)
            tot = tot + (ca[c] * (double)la[c] + cb[c] * (double)lb[c] + (ca[c] + cb[c]) * (double)ks[c]);
        bits[q] = tot;
        for (int64_t c = 0; c < nc; c++)
            kk[q * NC + c] = ks[c];
    }
    for (int s = 0; s < 2; s++) {
        free(A[s]); free(B[s]); free(f[s]); free(back[s]); free(ta[s]); free(tb[s]);
    }
    return rc;
}

/* states_design.pair_counts of one array of 8-bit words (one byte each, or two with wide: values < 256), read in
   C order of an N-d view (ndim <= 8; shape and strides in elements, strides may be negative or permuted: another
   axis order without a copy): joint[prev * 256 + word] and first[word] are added to. Returns 0, -1 on a bad view,
   -2 on a two-byte word >= 256 (then nothing is added). */
static inline int word_at(const void *w, int wide, int64_t i)
{
    return wide ? ((const uint16_t *)w)[i] : ((const uint8_t *)w)[i];
}

EXPORT int lzd_pairs(const void *w, int wide, int64_t ndim, const int64_t *shape, const int64_t *strides,
                     int64_t *joint, int64_t *first)
{
    if (ndim < 1 || ndim > 8)
        return -1;
    int64_t n = 1;
    for (int64_t d = 0; d < ndim; d++)
        n *= shape[d];
    if (n <= 0)
        return 0;
    for (int pass = wide ? 0 : 1; pass < 2; pass++) {   /* two-byte words: checked first, then counted */
        int64_t idx[8] = {0}, last = ndim - 1, inner = shape[last], st = strides[last], off = 0;
        int prev = -1;
        for (int64_t done = 0; done < n; done += inner) {
            int64_t i = 0;
            if (pass == 0) {
                for (; i < inner; i++)
                    if (word_at(w, wide, off + i * st) > 255)
                        return -2;
            } else {
                if (prev < 0) {
                    prev = word_at(w, wide, off);
                    first[prev]++;
                    i = 1;
                }
                for (; i < inner; i++) {
                    int v = word_at(w, wide, off + i * st);
                    joint[prev * 256 + v]++;
                    prev = v;
                }
            }
            for (int64_t d = last - 1; d >= 0; d--) {   /* the next row of the view */
                idx[d]++;
                off += strides[d];
                if (idx[d] < shape[d])
                    break;
                off -= strides[d] * shape[d];
                idx[d] = 0;
            }
        }
    }
    return 0;
}
