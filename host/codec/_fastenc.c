/* The encoder's kernels in C: statistics, the table design's dynamic programmes and the stripe coder.
 *
 * Each function computes exactly what the numba kernel of the same name in lutzip/codec/_encnumba.py computes
 * (same loops, same order of floating-point operations; build with -ffp-contract=off so that no FMA changes a
 * rounding), so the C and numba encoders choose the same tables and write the same bytes. Loaded with ctypes by
 * lutzip/codec/fastenc.py; every array is C-contiguous, int64 / double unless said otherwise.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define INF 1e300

/* ------------------------------------------------------------------------------------------ statistics */
/* hist[v] += 1 for every word; runs[r] += 1 for every maximal zero run of r words (cut at stripe ends). */
EXPORT void lze_stats(const void *words, int64_t n, int wide, int64_t S, int64_t *hist, int64_t *runs, int do_runs)
{
    const uint16_t *w16 = (const uint16_t *)words;
    const uint8_t *w8 = (const uint8_t *)words;
    if (hist) {
        if (wide) {
            /* four partial histograms hide the store-to-load dependency of repeated values */
            int64_t i = 0;
            uint32_t *h = calloc(4 * 65536, sizeof(uint32_t));
            if (h) {
                while (i < n) {
                    int64_t end = n - i > (1 << 30) ? i + (1 << 30) : n;   /* uint32 counts cannot wrap */
                    int64_t j = i;
                    for (; j + 4 <= end; j += 4) {
                        h[w16[j]]++;
                        h[65536 + w16[j + 1]]++;
                        h[131072 + w16[j + 2]]++;
                        h[196608 + w16[j + 3]]++;
                    }
                    for (; j < end; j++)
                        h[w16[j]]++;
                    for (int v = 0; v < 65536; v++) {
                        hist[v] += (int64_t)h[v] + h[65536 + v] + h[131072 + v] + h[196608 + v];
                    }
                    memset(h, 0, 4 * 65536 * sizeof(uint32_t));
                    i = end;
                }
                free(h);
            } else {
                for (; i < n; i++)
                    hist[w16[i]]++;
            }
        } else {
            for (int64_t i = 0; i < n; i++)
                hist[w8[i]]++;
        }
    }
    if (!do_runs)
        return;
    int64_t i = 0;
    while (i < n) {
        if (wide)                       /* skip to the next zero word */
            while (i < n && w16[i])
                i++;
        else
            while (i < n && w8[i])
                i++;
        if (i >= n)
            break;
        int64_t end = (i / S + 1) * S;
        if (end > n)
            end = n;
        int64_t r = 1;
        if (wide)
            while (i + r < end && w16[i + r] == 0)
                r++;
        else
            while (i + r < end && w8[i + r] == 0)
                r++;
        runs[r]++;
        i += r;
    }
}

/* ------------------------------------------------------------------------------------------ costs */
EXPORT void lze_lengths(int64_t size, int64_t nc, const int64_t *kinds, const int64_t *ks, const int64_t *params,
                        const int64_t *totals, const int64_t *lut3, int64_t *best)
{
    memset(best, 0, size * sizeof(int64_t));
    for (int64_t j = 0; j < nc; j++) {
        if (kinds[j] == 2)
            continue;
        int64_t n = (int64_t)1 << ks[j];
        for (int64_t i = 0; i < n; i++) {
            int64_t v = kinds[j] == 0 ? lut3[params[j] + i] : params[j] + i;
            if (best[v] == 0 || totals[j] < best[v])
                best[v] = totals[j];
        }
    }
}

EXPORT void lze_zrun_costs(int64_t maxr, int64_t single, int64_t nz, const int64_t *zk, const int64_t *ztot,
                           int64_t *cost)
{
    const int64_t inf = (int64_t)1 << 60;
    for (int64_t r = 0; r <= maxr; r++)
        cost[r] = inf;
    cost[0] = 0;
    for (int64_t r = 1; r <= maxr; r++) {
        if (single > 0 && cost[r - 1] + single < cost[r])
            cost[r] = cost[r - 1] + single;
        for (int64_t j = 0; j < nz; j++) {
            int64_t m = (int64_t)1 << zk[j];
            if (m > r)
                m = r;
            if (cost[r - m] + ztot[j] < cost[r])
                cost[r] = cost[r - m] + ztot[j];
        }
    }
}

/* choice[r]: -1 one single-word zero, else the class of the zero-run symbol; -2 impossible (bitstream.py) */
EXPORT void lze_zero_run_dp(int64_t max_run, int64_t single, int64_t nz, const int64_t *zj, const int64_t *zk,
                            const int64_t *ztot, int64_t *choice, int64_t *cost)
{
    const int64_t inf = (int64_t)1 << 60;
    for (int64_t r = 0; r <= max_run; r++) {
        cost[r] = inf;
        choice[r] = -2;
    }
    cost[0] = 0;
    for (int64_t r = 1; r <= max_run; r++) {
        if (single > 0 && cost[r - 1] + single < cost[r]) {
            cost[r] = cost[r - 1] + single;
            choice[r] = -1;
        }
        for (int64_t i = 0; i < nz; i++) {
            int64_t m = (int64_t)1 << zk[i];
            if (m > r)
                m = r;
            if (cost[r - m] + ztot[i] < cost[r]) {
                cost[r] = cost[r - m] + ztot[i];
                choice[r] = zj[i];
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ DPs */
EXPORT void lze_lut_dp(int64_t R, const double *freq, double N, int64_t M, int64_t kmax, double class_bits,
                       double lut3_bits, double *best, int64_t *choice)
{
    double *pre = malloc((R + 1) * sizeof(double));
    if (!pre)
        return;
    pre[0] = 0.0;
    for (int64_t i = 0; i < R; i++)
        pre[i + 1] = pre[i] + freq[i];
    int64_t W1 = M + 1;
    for (int64_t t = 0; t < (R + 1) * W1; t++) {
        best[t] = INF;
        choice[t] = -1;
    }
    best[0] = 0.0;
    for (int64_t i = 1; i <= R; i++) {
        for (int64_t k = 0; k <= kmax; k++) {
            int64_t g = (int64_t)1 << k;
            if (g > i)
                break;
            double F = pre[i] - pre[i - g];
            double cost;
            if (F <= 0)
                cost = class_bits + lut3_bits * g;
            else
                cost = F * (k + log2(N / F)) + class_bits + lut3_bits * g;
            const double *bp = best + (i - g) * W1;
            double *bi = best + i * W1;
            int64_t *ci = choice + i * W1;
            for (int64_t m = 1; m <= M; m++) {
                double b = bp[m - 1];
                if (b < INF && b + cost < bi[m]) {
                    bi[m] = b + cost;
                    ci[m] = k;
                }
            }
        }
    }
    free(pre);
}

EXPORT void lze_trie_solve(int64_t n, const double *F, const double *K, const int64_t *left, const int64_t *right,
                           double N, double W, double c_res, int64_t M, double class_bits, double *nores,
                           double *res, int64_t *ch_nores, int64_t *ch_res, int keep_n)
{
    /* keep_n: nores and ch_nores already hold this tree's values (a call with another c_res: they do not
     * depend on it, and the saturated scans below choose the same as full ones), only res and ch_res are
     * computed */
    int64_t W1 = M + 1;
    int64_t *sat = malloc((n > 0 ? n : 1) * sizeof(int64_t));
    for (int64_t i = n - 1; i >= 0; i--) {
        double f = F[i];
        double k = K[i];
        double own = f * (k + log2(N / f)) + class_bits;
        double rescost = f * (W + c_res);
        int64_t lc = left[i], rc = right[i];
        int split = lc >= 0 || rc >= 0;
        double minn = INF, minr = INF;
        int64_t argn = 0, argr = 0;
        for (int64_t m = 0; m <= M; m++) {
            double bn = INF, br = rescost;
            int64_t bnc = -3, brc = -2;
            if (m >= 1) {
                if (own < bn) {
                    bn = own;
                    bnc = -1;
                }
                if (own < br) {
                    br = own;
                    brc = -1;
                }
            }
            if (split && rc < 0) {
                /* one (left) child: the scan over a = 0..m of the left child's values is a running minimum
                 * (first index on equal values), kept across m */
                double ln = nores[lc * W1 + m], lr = res[lc * W1 + m];
                if (m == 0 || ln < minn) {
                    minn = ln;
                    argn = m;
                }
                if (m == 0 || lr < minr) {
                    minr = lr;
                    argr = m;
                }
                if (minn < bn) {
                    bn = minn;
                    bnc = argn;
                }
                if (minr < br) {
                    br = minr;
                    brc = argr;
                }
            } else if (split && lc < 0) {
                /* one (right) child: only a = 0 */
                double rn = nores[rc * W1 + m], rr = res[rc * W1 + m];
                if (rn < bn) {
                    bn = rn;
                    bnc = 0;
                }
                if (rr < br) {
                    br = rr;
                    brc = 0;
                }
            } else if (split) {
                /* beyond the left child's saturation s (its values constant for a >= s) the sum
                 * l[a] + r[m - a] is non-decreasing in a (r is non-increasing, FP addition monotone): no
                 * strict improvement, so the scan stops at min(m, s) with the same choice */
                const double *ln_ = nores + lc * W1, *lr_ = res + lc * W1;
                const double *rn_ = nores + rc * W1 + m, *rr_ = res + rc * W1 + m;
                int64_t amax = sat && sat[lc] < m ? sat[lc] : m;
                if (keep_n) {
                    for (int64_t a = 0; a <= amax; a++) {
                        double vr = lr_[a] + rr_[-a];
                        if (vr < br) {
                            br = vr;
                            brc = a;
                        }
                    }
                } else for (int64_t a = 0; a <= amax; a++) {
                    double vn = ln_[a] + rn_[-a], vr = lr_[a] + rr_[-a];
                    if (vn < bn) {
                        bn = vn;
                        bnc = a;
                    }
                    if (vr < br) {
                        br = vr;
                        brc = a;
                    }
                }
            }
            if (!keep_n) {
                nores[i * W1 + m] = bn;
                ch_nores[i * W1 + m] = bnc;
            }
            res[i * W1 + m] = br;
            ch_res[i * W1 + m] = brc;
        }
        if (sat) {                      /* the first m from which both rows stay constant */
            int64_t s0 = M;
            while (s0 > 0 && nores[i * W1 + s0 - 1] == nores[i * W1 + M] && res[i * W1 + s0 - 1] == res[i * W1 + M])
                s0--;
            sat[i] = s0;
        }
    }
    free(sat);
}

EXPORT void lze_zrun_symbols(int64_t nr, const int64_t *runs, int64_t n, const int64_t *ks, int64_t *out)
{
    memset(out, 0, n * sizeof(int64_t));
    for (int64_t r = 1; r < nr; r++) {
        int64_t c = runs[r];
        if (c == 0)
            continue;
        int64_t rem = r;
        for (int64_t j = 0; j < n - 1; j++) {
            int64_t q = rem >> ks[j];
            out[j] += c * q;
            rem -= q << ks[j];
        }
        out[n - 1] += c * ((rem + ((int64_t)1 << ks[n - 1]) - 1) >> ks[n - 1]);
    }
}

/* package-merge over n weights (2 <= n <= 2^L) as the numba _package_merge: a stable sort of the leaves, packages
 * of adjacent pairs, leaves first on equal weights; lengths[i] = how often leaf i is in the first 2n - 2 items. */
EXPORT int lze_package_merge(int64_t n, const double *w, int64_t L, int64_t *lengths)
{
    int64_t cap = 2 * n;
    int64_t *order = malloc(n * sizeof(int64_t));
    double *lw = malloc(n * sizeof(double)), *pw = malloc(cap * sizeof(double)), *tw = malloc(cap * sizeof(double));
    int64_t *lc = calloc(n * n, sizeof(int64_t)), *pc = malloc(cap * n * sizeof(int64_t)),
            *tc = malloc(cap * n * sizeof(int64_t)), *qc = malloc(n * n * sizeof(int64_t));
    double *qw = malloc(n * sizeof(double));
    int ok = order && lw && pw && tw && lc && pc && tc && qc && qw;
    if (ok) {
        for (int64_t i = 0; i < n; i++)         /* stable insertion sort (n <= 4096, usually <= 16) */
            order[i] = i;
        for (int64_t i = 1; i < n; i++) {
            int64_t x = order[i], j = i - 1;
            while (j >= 0 && w[order[j]] > w[x]) {
                order[j + 1] = order[j];
                j--;
            }
            order[j + 1] = x;
        }
        for (int64_t i = 0; i < n; i++) {
            lw[i] = w[order[i]];
            lc[i * n + order[i]] = 1;
        }
        int64_t np_ = n;
        memcpy(pw, lw, n * sizeof(double));
        memcpy(pc, lc, n * n * sizeof(int64_t));
        for (int64_t it = 0; it < L - 1; it++) {
            int64_t m = np_ / 2;
            for (int64_t j = 0; j < m; j++) {
                qw[j] = pw[2 * j] + pw[2 * j + 1];
                for (int64_t s = 0; s < n; s++)
                    qc[j * n + s] = pc[2 * j * n + s] + pc[(2 * j + 1) * n + s];
            }
            int64_t a = 0, b = 0;
            for (int64_t t = 0; t < n + m; t++) {
                if (b >= m || (a < n && lw[a] <= qw[b])) {
                    tw[t] = lw[a];
                    memcpy(tc + t * n, lc + a * n, n * sizeof(int64_t));
                    a++;
                } else {
                    tw[t] = qw[b];
                    memcpy(tc + t * n, qc + b * n, n * sizeof(int64_t));
                    b++;
                }
            }
            np_ = n + m;
            double *sw = pw; pw = tw; tw = sw;
            int64_t *sc = pc; pc = tc; tc = sc;
        }
        memset(lengths, 0, n * sizeof(int64_t));
        for (int64_t t = 0; t < 2 * n - 2; t++)
            for (int64_t s = 0; s < n; s++)
                lengths[s] += pc[t * n + s];
    }
    free(order); free(lw); free(pw); free(tw); free(lc); free(pc); free(tc); free(qc); free(qw);
    return ok ? 0 : -1;
}

static inline double best_c(double F, double mu, int64_t L, int64_t *cbest)
{
    if (F <= 0.0) {
        *cbest = L;
        return mu * pow(2.0, (double)(-L));
    }
    int64_t c0 = (int64_t)floor(log2(mu * 0.6931471805599453 / F));
    double best = INF;
    int64_t bc = 1;
    for (int t = 0; t < 2; t++) {
        int64_t c = c0 + t;
        if (c < 1)
            c = 1;
        if (c > L)
            c = L;
        double v = F * c + mu * pow(2.0, (double)(-c));
        if (v < best) {
            best = v;
            bc = c;
        }
    }
    *cbest = bc;
    return best;
}

EXPORT void lze_group_dp(int64_t R, const double *freq, int64_t M, int64_t kmax, double mu, int64_t L, int64_t W,
                         double class_bits, double lut3_bits, double *best, int64_t *ch, int64_t *start)
{
    double *pre = malloc((R + 1) * sizeof(double));
    if (!pre)
        return;
    pre[0] = 0.0;
    for (int64_t i = 0; i < R; i++)
        pre[i + 1] = pre[i] + freq[i];
    int64_t W1 = M + 1;
    for (int64_t t = 0; t < (R + 1) * W1; t++) {
        best[t] = INF;
        ch[t] = -1;
        start[t] = -1;
    }
    best[0] = 0.0;
    for (int64_t i = 0; i < R; i++) {
        int reached = 0;
        for (int64_t k = 0; k < kmax + 2; k++) {
            int64_t j, kk, cb;
            double F, cost;
            if (k <= kmax) {
                if (reached)
                    continue;
                int64_t g = (int64_t)1 << k;
                j = i + g < R ? i + g : R;
                F = pre[j] - pre[i];
                double cc = best_c(F, mu, L, &cb);
                cost = F * k + cc + class_bits + lut3_bits * g;
                kk = k;
            } else {
                j = R;
                F = pre[R] - pre[i];
                double cc = best_c(F, mu, L, &cb);
                cost = F * W + cc + class_bits;
                kk = W + 1;
            }
            const double *bi = best + i * W1;
            double *bj = best + j * W1;
            for (int64_t m = 0; m < M; m++) {
                double b = bi[m];
                if (b < INF && b + cost < bj[m + 1]) {
                    bj[m + 1] = b + cost;
                    ch[j * W1 + m + 1] = kk;
                    start[j * W1 + m + 1] = i;
                }
            }
            if (j == R)
                reached = 1;
        }
    }
    free(pre);
}

EXPORT int lze_zrun_parse_counts(int64_t nr, const int64_t *runs, int64_t single, int64_t nz, const int64_t *zk,
                                 const int64_t *ztot, int64_t *out)
{
    int64_t maxr = nr - 1;
    const int64_t inf = (int64_t)1 << 60;
    int64_t *cost = malloc((maxr + 1) * sizeof(int64_t));
    int64_t *cnt = calloc((maxr + 1) * (nz + 1), sizeof(int64_t));
    if (!cost || !cnt) {
        free(cost);
        free(cnt);
        return -1;
    }
    for (int64_t r = 0; r <= maxr; r++)
        cost[r] = inf;
    cost[0] = 0;
    memset(out, 0, (nz + 1) * sizeof(int64_t));
    int64_t Z = nz + 1;
    for (int64_t r = 1; r <= maxr; r++) {
        int64_t bc = -2;
        if (single > 0 && cost[r - 1] + single < cost[r]) {
            cost[r] = cost[r - 1] + single;
            bc = -1;
        }
        for (int64_t j = 0; j < nz; j++) {
            int64_t m = (int64_t)1 << zk[j];
            if (m > r)
                m = r;
            if (cost[r - m] + ztot[j] < cost[r]) {
                cost[r] = cost[r - m] + ztot[j];
                bc = j;
            }
        }
        if (bc == -1) {
            memcpy(cnt + r * Z, cnt + (r - 1) * Z, Z * sizeof(int64_t));
            cnt[r * Z + nz] += 1;
        } else if (bc >= 0) {
            int64_t m = (int64_t)1 << zk[bc];
            if (m > r)
                m = r;
            memcpy(cnt + r * Z, cnt + (r - m) * Z, Z * sizeof(int64_t));
            cnt[r * Z + bc] += 1;
        }
        if (runs[r])
            for (int64_t j = 0; j < Z; j++)
                out[j] += runs[r] * cnt[r * Z + j];
    }
    free(cost);
    free(cnt);
    return 0;
}

/* :meth:`_Grouped.estimate`: returns the dual value; *gbest_out the grid index; zF the run symbol counts */
EXPORT double lze_zrun_estimate(int64_t nr, const int64_t *runs, int64_t nz, const int64_t *zk, const double *tabcol,
                                int64_t G, const double *mus, int64_t L, int64_t rounds, double class_bits,
                                int64_t *gbest_out, double *zF)
{
    int64_t order[32], cbest[32], ztot[32], cnt[33];
    if (nz > 32)
        return INF;
    for (int64_t j = 0; j < nz; j++)
        order[j] = j;
    for (int64_t i = 1; i < nz; i++) {            /* by falling zk (the ks of a set are distinct) */
        int64_t x = order[i], j = i - 1;
        while (j >= 0 && zk[order[j]] < zk[x]) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    for (int64_t j = 0; j < nz; j++)
        zF[j] = 0.0;
    for (int64_t r = 1; r < nr; r++) {
        if (runs[r] == 0)
            continue;
        int64_t rem = r;
        for (int64_t oi = 0; oi < nz; oi++) {
            int64_t j = order[oi];
            if (oi < nz - 1) {
                int64_t q = rem >> zk[j];
                zF[j] += (double)(runs[r] * q);
                rem -= q << zk[j];
            } else {
                zF[j] += (double)(runs[r] * ((rem + ((int64_t)1 << zk[j]) - 1) >> zk[j]));
            }
        }
    }
    for (int64_t j = 0; j < nz; j++)
        zF[j] = zF[j] > 1.0 ? zF[j] : 1.0;
    double dual_best = -INF;
    int64_t gbest = 0;
    for (int64_t rnd = 0; rnd <= rounds; rnd++) {
        dual_best = -INF;
        for (int64_t g = 0; g < G; g++) {
            double d = tabcol[g] - mus[g] + class_bits * nz;
            for (int64_t j = 0; j < nz; j++) {
                int64_t cb;
                double v = best_c(zF[j], mus[g], L, &cb);
                d += v + zF[j] * zk[j];
            }
            if (d > dual_best) {
                dual_best = d;
                gbest = g;
            }
        }
        if (rnd == rounds)
            break;
        for (int64_t j = 0; j < nz; j++) {
            best_c(zF[j], mus[gbest], L, &cbest[j]);
            ztot[j] = zk[j] + cbest[j];
        }
        if (lze_zrun_parse_counts(nr, runs, 0, nz, zk, ztot, cnt) < 0)
            return INF;
        for (int64_t j = 0; j < nz; j++)
            zF[j] = (double)cnt[j] > 1.0 ? (double)cnt[j] : 1.0;
    }
    *gbest_out = gbest;
    return dual_best;
}

/* ------------------------------------------------------------------------------------------ stripe coder */
/* Code n words (uint16, or uint8 when !wide) into stripes of S words: out gets each stripe's header word and
 * its bits MSB-first in 32-bit words, stripe_words[s] its word count. sym[v] = bits << 8 | length (0 = value
 * not covered). Returns the words written, or -1 - i for the first word i that cannot be coded. */
EXPORT int64_t lze_encode(const void *words, int64_t n, int wide, int64_t S, const uint64_t *sym, int has_zrun,
                          const int64_t *zr_choice, const uint64_t *zr_bits, const int64_t *zr_len,
                          const int64_t *zr_k, uint32_t *out, uint32_t *stripe_words)
{
    const uint16_t *w16 = (const uint16_t *)words;
    const uint8_t *w8 = (const uint8_t *)words;
    int64_t n_stripes = (n + S - 1) / S;
    int64_t p = 0;
    for (int64_t s = 0; s < n_stripes; s++) {
        int64_t lo = s * S, hi = lo + S < n ? lo + S : n;
        int64_t start = p;
        out[p++] = 0x4C5A0000u | (uint32_t)(hi - lo - 1);
        uint64_t acc = 0;
        unsigned nacc = 0;
        int64_t i = lo;
#define PUT(b, ln)                                                                                                 \
    do {                                                                                                           \
        acc = (acc << (ln)) | (b);                                                                                 \
        nacc += (ln);                                                                                              \
        if (nacc >= 32) {                                                                                          \
            nacc -= 32;                                                                                            \
            out[p++] = (uint32_t)(acc >> nacc);                                                                    \
        }                                                                                                          \
    } while (0)
        if (!has_zrun && wide) {
            for (; i < hi; i++) {
                uint64_t e = sym[w16[i]];
                unsigned ln = (unsigned)(e & 0xFF);
                if (!ln)
                    return -1 - i;
                PUT(e >> 8, ln);
            }
        } else {
            while (i < hi) {
                unsigned v = wide ? w16[i] : w8[i];
                if (has_zrun && v == 0) {
                    int64_t r = 1;
                    if (wide)
                        while (i + r < hi && w16[i + r] == 0)
                            r++;
                    else
                        while (i + r < hi && w8[i + r] == 0)
                            r++;
                    i += r;
                    while (r > 0) {
                        int64_t ch = zr_choice[r];
                        uint64_t b;
                        unsigned ln;
                        if (ch == -2)
                            return -1 - (i - r);
                        if (ch == -1) {
                            b = sym[0] >> 8;
                            ln = (unsigned)(sym[0] & 0xFF);
                            r -= 1;
                        } else {
                            int64_t m = (int64_t)1 << zr_k[ch];
                            if (m > r)
                                m = r;
                            b = zr_bits[ch] | (uint64_t)(m - 1);
                            ln = (unsigned)zr_len[ch];
                            r -= m;
                        }
                        PUT(b, ln);
                    }
                    continue;
                }
                uint64_t e = sym[v];
                unsigned ln = (unsigned)(e & 0xFF);
                if (!ln)
                    return -1 - i;
                PUT(e >> 8, ln);
                i++;
            }
        }
#undef PUT
        if (nacc > 0)
            out[p++] = (uint32_t)(acc << (32 - nacc));
        stripe_words[s] = (uint32_t)(p - start);
    }
    return p;
}

/* ------------------------------------------------------------------------------------------ trie */
/* The binary trie of the present values (encoder._trie_tree): vals (sorted, nv), C and D the prefix sums of their
 * counts h and of h log2 h (nv + 1 each). Nodes in BFS order (children after parents, a parent's left child
 * first); a node is split when F k - (F log2 F - S) >= min_gain (k > 0). Writes keys, K, F, left, right (room for
 * cap nodes; lo, hi scratch of cap) and returns the node count, or -1 when cap is too small. */
EXPORT int64_t lze_trie_tree(int64_t nv, const int64_t *vals, const double *C, const double *D, int64_t W,
                             double min_gain, int64_t cap, int64_t *keys, double *K, double *F, int64_t *left,
                             int64_t *right, int64_t *lo, int64_t *hi)
{
    if (cap < 1)
        return -1;
    int64_t n = 1, lv0 = 0, lv1 = 1, k = W;
    keys[0] = 0;
    lo[0] = 0;
    hi[0] = nv;
    while (lv0 < lv1) {
        for (int64_t i = lv0; i < lv1; i++) {
            double f = C[hi[i]] - C[lo[i]];
            double s1 = D[hi[i]] - D[lo[i]];
            F[i] = f;
            K[i] = (double)k;
            left[i] = -1;
            right[i] = -1;
            if (k <= 0)
                continue;
            double gain = f * k - (f * log2(f) - s1);
            if (!(gain >= min_gain))
                continue;
            int64_t x = (2 * keys[i] + 1) << (k - 1);
            int64_t a = lo[i], b = hi[i];          /* first index in [lo, hi) with vals >= x */
            while (a < b) {
                int64_t m = a + (b - a) / 2;
                if (vals[m] < x)
                    a = m + 1;
                else
                    b = m;
            }
            int64_t mid = a;
            if (mid > lo[i]) {
                if (n >= cap)
                    return -1;
                keys[n] = 2 * keys[i];
                lo[n] = lo[i];
                hi[n] = mid;
                left[i] = n++;
            }
            if (hi[i] > mid) {
                if (n >= cap)
                    return -1;
                keys[n] = 2 * keys[i] + 1;
                lo[n] = mid;
                hi[n] = hi[i];
                right[i] = n++;
            }
        }
        lv0 = lv1;
        lv1 = n;
        k--;
    }
    return n;
}

/* ------------------------------------------------------------------------------------------ symbols */
/* bitstream.symbol_table: the cheapest single-word symbol of every value, classes in order (an earlier class
 * keeps a value on equal length, the first LUT3 index of a value listed twice wins). sym[v] = (code << k | index)
 * << 8 | length, 0 where no class covers v. */
EXPORT void lze_symbols(int64_t size, int64_t nc, const int64_t *kinds, const int64_t *ks, const int64_t *params,
                        const int64_t *totals, const int64_t *codes, const int64_t *lut3, uint64_t *sym)
{
    memset(sym, 0, size * sizeof(uint64_t));
    for (int64_t j = 0; j < nc; j++) {
        if (kinds[j] == 2)
            continue;
        int64_t n = (int64_t)1 << ks[j];
        uint64_t t = (uint64_t)totals[j];
        for (int64_t i = 0; i < n; i++) {
            int64_t v = kinds[j] == 0 ? lut3[params[j] + i] : params[j] + i;
            uint64_t cur = sym[v] & 0xFF;
            if (cur == 0 || t < cur)
                sym[v] = ((((uint64_t)codes[j] << ks[j]) | (uint64_t)i) << 8) | t;
        }
    }
}

/* The classes of a trie DP solution (encoder._trie_dp's solve): a depth-first walk from (node 0, m classes) with
 * the choices ch (n x (M + 1)), a stack whose top is the last child pushed (right after left). Writes each own-
 * class node's (base, k, F) in the walk's order, adds the residual's F to *fres; returns the number of ranges or
 * -1 without memory. */
EXPORT int64_t lze_trie_walk(int64_t n, int64_t M, const int64_t *ch, const int64_t *keys, const double *K,
                             const double *F, const int64_t *left, const int64_t *right, int64_t m, int64_t *base,
                             int64_t *kout, double *Fout, double *fres)
{
    int64_t *st = malloc(2 * (n + 2) * sizeof(int64_t));
    if (!st)
        return -1;
    int64_t sp = 0, cnt = 0;
    double fr = 0.0;
    st[0] = 0;
    st[1] = m;
    sp = 1;
    while (sp > 0) {
        sp--;
        int64_t i = st[2 * sp], mm = st[2 * sp + 1];
        int64_t c = ch[i * (M + 1) + mm];
        if (c == -1) {
            int64_t k = (int64_t)K[i];
            base[cnt] = keys[i] << k;
            kout[cnt] = k;
            Fout[cnt] = F[i];
            cnt++;
        } else if (c == -2) {
            fr += F[i];
        } else if (c >= 0) {
            if (left[i] >= 0) {
                st[2 * sp] = left[i];
                st[2 * sp + 1] = c;
                sp++;
            }
            if (right[i] >= 0) {
                st[2 * sp] = right[i];
                st[2 * sp + 1] = mm - c;
                sp++;
            }
        }
    }
    free(st);
    *fres += fr;
    return cnt;
}

/* lze_lengths at the sorted values vals only (out[t] for vals[t]; 0 = not covered): O(values + LUT3 log values)
 * instead of a 2^W table. */
EXPORT void lze_lengths_at(int64_t nv, const int64_t *vals, int64_t nc, const int64_t *kinds, const int64_t *ks,
                           const int64_t *params, const int64_t *totals, const int64_t *lut3, int64_t *out)
{
    memset(out, 0, nv * sizeof(int64_t));
    for (int64_t j = 0; j < nc; j++) {
        if (kinds[j] == 2)
            continue;
        int64_t n = (int64_t)1 << ks[j], t = totals[j];
        if (kinds[j] == 1) {
            int64_t a = 0, b = nv, lo = params[j], hi = params[j] + n;
            while (a < b) {
                int64_t m = a + (b - a) / 2;
                if (vals[m] < lo)
                    a = m + 1;
                else
                    b = m;
            }
            for (; a < nv && vals[a] < hi; a++)
                if (out[a] == 0 || t < out[a])
                    out[a] = t;
        } else {
            for (int64_t i = 0; i < n; i++) {
                int64_t v = lut3[params[j] + i], a = 0, b = nv;
                while (a < b) {
                    int64_t m = a + (b - a) / 2;
                    if (vals[m] < v)
                        a = m + 1;
                    else
                        b = m;
                }
                if (a < nv && vals[a] == v && (out[a] == 0 || t < out[a]))
                    out[a] = t;
            }
        }
    }
}
