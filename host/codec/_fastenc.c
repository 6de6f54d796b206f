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
/* bit j set where words[j] == 0, for j < nb (nb <= 64) */
#if defined(__AVX2__)
#include <immintrin.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
static inline uint64_t zero_mask16(const uint16_t *w, int nb)
{
    if (nb == 64) {
        uint64_t z = 0;
        __m128i zero = _mm_setzero_si128();
        for (int j = 0; j < 4; j++) {
            __m128i a = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(w + 16 * j)), zero);
            __m128i b = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(w + 16 * j + 8)), zero);
            z |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_packs_epi16(a, b)) << (16 * j);
        }
        return z;
    }
    uint64_t z = 0;
    for (int j = 0; j < nb; j++)
        z |= (uint64_t)(w[j] == 0) << j;
    return z;
}
static inline uint64_t zero_mask8(const uint8_t *w, int nb)
{
    if (nb == 64) {
        uint64_t z = 0;
        __m128i zero = _mm_setzero_si128();
        for (int j = 0; j < 4; j++)
            z |= (uint64_t)(uint32_t)_mm_movemask_epi8(
                     _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(w + 16 * j)), zero)) << (16 * j);
        return z;
    }
    uint64_t z = 0;
    for (int j = 0; j < nb; j++)
        z |= (uint64_t)(w[j] == 0) << j;
    return z;
}
#else
static inline uint64_t zero_mask16(const uint16_t *w, int nb)
{
    uint64_t z = 0;
    for (int j = 0; j < nb; j++)
        z |= (uint64_t)(w[j] == 0) << j;
    return z;
}
static inline uint64_t zero_mask8(const uint8_t *w, int nb)
{
    uint64_t z = 0;
    for (int j = 0; j < nb; j++)
        z |= (uint64_t)(w[j] == 0) << j;
    return z;
}
#endif

/* hist[v] += 1 for every word; runs[r] += 1 for every maximal zero run of r words (cut at stripe ends). */
EXPORT void lze_stats(const void *words, int64_t n, int wide, int64_t S, int64_t *hist, int64_t *runs, int do_runs)
{
    const uint16_t *w16 = (const uint16_t *)words;
    const uint8_t *w8 = (const uint8_t *)words;
    if (hist) {
        if (wide) {
            /* four partial histograms hide the store-to-load dependency of repeated values */
            int64_t i = 0;
            /* (a short tensor: counted straight into hist; the 1 MB of partial counts, their sum and the fresh
             * pages of their allocation would cost more than its words) */
            uint32_t *h = n >= (1 << 18) ? calloc(4 * 65536, sizeof(uint32_t)) : NULL;
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
            /* eight partial histograms (8 KB of uint32: repeated values -- zeros -- would chain every increment
             * on the last), the words read eight at a time (one load instead of eight: 2.5x on MiniLM int8);
             * parts of at most 2^31 words, so no count wraps */
            uint32_t h8[8][256];
            int64_t i = 0;
            while (i < n) {
                memset(h8, 0, sizeof(h8));
                int64_t end = n - i > ((int64_t)1 << 31) ? i + ((int64_t)1 << 31) : n;
                for (; i + 8 <= end; i += 8) {
                    uint64_t x;
                    memcpy(&x, w8 + i, 8);          /* (the byte order does not matter: every byte is counted) */
                    h8[0][x & 255]++;
                    h8[1][(x >> 8) & 255]++;
                    h8[2][(x >> 16) & 255]++;
                    h8[3][(x >> 24) & 255]++;
                    h8[4][(x >> 32) & 255]++;
                    h8[5][(x >> 40) & 255]++;
                    h8[6][(x >> 48) & 255]++;
                    h8[7][x >> 56]++;
                }
                for (; i < end; i++)
                    h8[0][w8[i]]++;
                for (int v = 0; v < 256; v++)
                    hist[v] += (int64_t)h8[0][v] + h8[1][v] + h8[2][v] + h8[3][v] + h8[4][v] + h8[5][v] + h8[6][v] +
                               h8[7][v];
            }
        }
    }
    if (!do_runs)
        return;
    /* the zero runs, 64 words at a time: a mask of the zero words, the runs' ends found with ctz (no branch per
     * word); a run is cut where its stripe ends */
    for (int64_t s = 0; s < n; s += S) {
        int64_t e = n - s > S ? s + S : n;
        int64_t cur = 0;                /* length of the run that reaches the current block (0: none) */
        for (int64_t i = s; i < e; i += 64) {
            int nb = e - i >= 64 ? 64 : (int)(e - i);
            uint64_t z = wide ? zero_mask16(w16 + i, nb) : zero_mask8(w8 + i, nb);
            int p = 0;
            while (p < nb) {
                if (cur) {              /* extend the open run by the zero words from p */
                    uint64_t x = ~(z >> p);     /* p < 64: a set bit at each non-zero word (or beyond nb) */
                    int len = x ? __builtin_ctzll(x) : 64 - p;
                    if (p + len >= nb) {
                        cur += nb - p;
                        break;
                    }
                    runs[cur + len]++;
                    cur = 0;
                    p += len;
                }
                uint64_t y = z >> p;    /* the next zero word */
                if (!y)
                    break;
                int q = __builtin_ctzll(y);
                p += q;
                cur = 0;
                /* open a run at p: count its zero words from p */
                uint64_t x = ~(z >> p);
                int len = x ? __builtin_ctzll(x) : 64 - p;
                if (p + len >= nb) {
                    cur = nb - p;
                    break;
                }
                runs[len]++;
                p += len;
            }
        }
        if (cur)
            runs[cur]++;
    }
}

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
/* to[m] = from[m] + cost, ch[m] = c where that is smaller (m < n), without branches (vectorised; additions and
 * comparisons only: the same values at any vector width); rows from and to never overlap */
__attribute__((always_inline, optimize("O3"))) static inline void relax_nc(int64_t n, const double *restrict from, double cost,
                                                                double *restrict to, int64_t *restrict ch,
                                                                int64_t c)
{
    for (int64_t m = 0; m < n; m++) {
        double v = from[m] + cost;
        int ok = v < to[m];
        to[m] = ok ? v : to[m];
        ch[m] = ok ? c : ch[m];
    }
}

/* The inner step of the ranked DPs: for m < M, where from[m] < INF and from[m] + cost < to[m], to[m] becomes
 * from[m] + cost and ch[m] (and st[m], when given) the choice: the same stores as the branchy loop, written
 * without branches (rows from and to never overlap) so that the compiler vectorises it; additions and
 * comparisons only, so the results are bit-identical whatever the vector width. */
__attribute__((always_inline, optimize("O3"))) static inline void relax(int64_t M, const double *restrict from, double cost,
                                                             double *restrict to, int64_t *restrict ch, int64_t c,
                                                             int64_t *restrict st, int64_t sv)
{
    if (st) {
        for (int64_t m = 0; m < M; m++) {
            double b = from[m], v = b + cost;
            int ok = (b < INF) & (v < to[m]);
            to[m] = ok ? v : to[m];
            ch[m] = ok ? c : ch[m];
            st[m] = ok ? sv : st[m];
        }
    } else {
        for (int64_t m = 0; m < M; m++) {
            double b = from[m], v = b + cost;
            int ok = (b < INF) & (v < to[m]);
            to[m] = ok ? v : to[m];
            ch[m] = ok ? c : ch[m];
        }
    }
}

/* log2(N / F), remembered for integral F < LOG_MEMO (the DPs' frequencies are counts: small ones repeat);
 * memo[] starts as NaN (all bits set); the same value as computing it each time */
#define LOG_MEMO 4096
static inline double l2ratio(double N, double F, double *memo)
{
    if (F >= 1.0 && F < (double)LOG_MEMO) {
        int64_t fi = (int64_t)F;
        if ((double)fi == F) {
            double v = memo[fi];
            if (v != v) {
                v = log2(N / F);
                memo[fi] = v;
            }
            return v;
        }
    }
    return log2(N / F);
}

__attribute__((optimize("O3"))) EXPORT void lze_lut_dp(int64_t R, const double *freq, double N, int64_t M, int64_t kmax, double class_bits,
                       double lut3_bits, double *best, int64_t *choice)
{
    double *pre = malloc((R + 1) * sizeof(double));
    if (!pre)
        return;
    double memo[LOG_MEMO];
    memset(memo, 0xff, sizeof(memo));
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
                cost = F * (k + l2ratio(N, F, memo)) + class_bits + lut3_bits * g;
            relax(M, best + (i - g) * W1, cost, best + i * W1 + 1, choice + i * W1 + 1, k, NULL, 0);
        }
    }
    free(pre);
}

/* One node i of the trie DP (lze_trie_solve, lze_trie_solve_ref): its rows from its own class and its children's
 * rows (nrow_*: without residual, rrow_*: with; NULL where there is no such child); sat[i] when sat is given. */
static inline __attribute__((always_inline)) void trie_node(
    int64_t i, int64_t lc, int64_t rc, const double *nrow_l, const double *rrow_l, const double *nrow_r,
    const double *rrow_r, double own, double rescost, int64_t M, int keep_n, double *nores, double *res,
    int64_t *ch_nores, int64_t *ch_res, int64_t *sat)
{
    int64_t W1 = M + 1;
    int split = lc >= 0 || rc >= 0;
    double minn = INF, minr = INF;
    int64_t argn = 0, argr = 0;
    if (lc >= 0 && rc >= 0) {
        /* two children: the scans of the loop below turned inside out -- for each split a (ascending), every
         * m >= a tries l[a] + r[m - a] -- so each m sees its own class first and then a = 0, 1, ... with
         * strict improvement, as in the scan over a: the same values and choices. Beyond the left child's
         * saturation s (its values constant for a >= s) the sum l[a] + r[m - a] is non-decreasing in a (r is
         * non-increasing, FP addition monotone): no strict improvement, so a stops at s */
        double *bn_ = nores + i * W1, *br_ = res + i * W1;
        int64_t *cn_ = ch_nores + i * W1, *cr_ = ch_res + i * W1;
        for (int64_t m = 0; m <= M; m++) {
            if (!keep_n) {
                int o = m >= 1 && own < INF;
                bn_[m] = o ? own : INF;
                cn_[m] = o ? -1 : -3;
            }
            int o = m >= 1 && own < rescost;
            br_[m] = o ? own : rescost;
            cr_[m] = o ? -1 : -2;
        }
        int64_t amax = sat && sat[lc] < M ? sat[lc] : M;
        for (int64_t a = 0; a <= amax; a++) {
            if (!keep_n)
                relax_nc(M + 1 - a, nrow_r, nrow_l[a], bn_ + a, cn_ + a, a);
            relax_nc(M + 1 - a, rrow_r, rrow_l[a], br_ + a, cr_ + a, a);
        }
    } else for (int64_t m = 0; m <= M; m++) {
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
            double ln = nrow_l[m], lr = rrow_l[m];
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
            double rn = nrow_r[m], rr = rrow_r[m];
            if (rn < bn) {
                bn = rn;
                bnc = 0;
            }
            if (rr < br) {
                br = rr;
                brc = 0;
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
        if (!split)                 /* a leaf's rows are constant from m = 1 on */
            s0 = nores[i * W1] == nores[i * W1 + M] && res[i * W1] == res[i * W1 + M] ? 0 : (M > 0);
        else
            while (s0 > 0 && nores[i * W1 + s0 - 1] == nores[i * W1 + M] &&
                   res[i * W1 + s0 - 1] == res[i * W1 + M])
                s0--;
        sat[i] = s0;
    }
}

__attribute__((optimize("O3"))) EXPORT void lze_trie_solve(int64_t n, const double *F, const double *K, const int64_t *left, const int64_t *right,
                           double N, double W, double c_res, int64_t M, double class_bits, double *nores,
                           double *res, int64_t *ch_nores, int64_t *ch_res, int keep_n, int64_t *sat_out)
{
    /* keep_n: nores and ch_nores already hold this tree's values (a call with another c_res: they do not
     * depend on it, and the saturated scans below choose the same as full ones), only res and ch_res are
     * computed */
    int64_t W1 = M + 1;
    int64_t *sat = sat_out ? sat_out : malloc((n > 0 ? n : 1) * sizeof(int64_t));
    double memo[LOG_MEMO];
    memset(memo, 0xff, sizeof(memo));
    for (int64_t i = n - 1; i >= 0; i--) {
        double f = F[i];
        double k = K[i];
        double own = f * (k + l2ratio(N, f, memo)) + class_bits;
        double rescost = f * (W + c_res);
        int64_t lc = left[i], rc = right[i];
        trie_node(i, lc, rc, lc >= 0 ? nores + lc * W1 : NULL, lc >= 0 ? res + lc * W1 : NULL,
                  rc >= 0 ? nores + rc * W1 : NULL, rc >= 0 ? res + rc * W1 : NULL, own, rescost, M, keep_n,
                  nores, res, ch_nores, ch_res, sat);
    }
    if (!sat_out)
        free(sat);
}

/* lze_trie_solve (keep_n 0) of a tree whose nodes with same[i] >= 0 (lze_trie_same) are node same[i] of a solved
 * tree (nores_b, res_b, budget Mb >= M, saturations sat_b; the same N, W, c_res): those nodes are neither computed
 * nor written (their parents read the base's rows: the values a full DP computes, see lze_trie_solve's keep_n),
 * only sat[i] is set; lze_trie_walk_ref walks such tables. */
#define NROW(c) (same[c] >= 0 ? nores_b + same[c] * Wb : nores + (c) * W1)
#define RROW(c) (same[c] >= 0 ? res_b + same[c] * Wb : res + (c) * W1)
__attribute__((optimize("O3"))) EXPORT void lze_trie_solve_ref(int64_t n, const double *F, const double *K, const int64_t *left, const int64_t *right,
                           double N, double W, double c_res, int64_t M, double class_bits, double *nores,
                           double *res, int64_t *ch_nores, int64_t *ch_res, int64_t *sat, const int64_t *same,
                           int64_t Mb, const double *nores_b, const double *res_b, const int64_t *sat_b)
{
    const int keep_n = 0;
    int64_t Wb = Mb + 1;

    /* keep_n: nores and ch_nores already hold this tree's values (a call with another c_res: they do not
     * depend on it, and the saturated scans below choose the same as full ones), only res and ch_res are
     * computed */
    int64_t W1 = M + 1;
    double memo[LOG_MEMO];
    memset(memo, 0xff, sizeof(memo));
    for (int64_t i = n - 1; i >= 0; i--) {
        if (same[i] >= 0) {             /* the base's node: its rows are read there, never written here */
            int64_t sb = sat_b[same[i]];
            sat[i] = sb < M ? sb : M;
            continue;
        }
        double f = F[i];
        double k = K[i];
        double own = f * (k + l2ratio(N, f, memo)) + class_bits;
        double rescost = f * (W + c_res);
        int64_t lc = left[i], rc = right[i];
        trie_node(i, lc, rc, lc >= 0 ? NROW(lc) : NULL, lc >= 0 ? RROW(lc) : NULL,
                  rc >= 0 ? NROW(rc) : NULL, rc >= 0 ? RROW(rc) : NULL, own, rescost, M, keep_n,
                  nores, res, ch_nores, ch_res, sat);
    }
}
#undef NROW
#undef RROW

/* Which nodes of a trie (F, left, right; lze_trie_tree's breadth-first order from the root) have the subtree of a
 * node of another trie of the same W (Fb, leftb, rightb): same[i] = that node (at the same level and key, with the
 * same count and the same shape and counts below it), else -1. map: n scratch entries. */
EXPORT void lze_trie_same(int64_t n, const double *F, const int64_t *left, const int64_t *right, int64_t nb,
                          const double *Fb, const int64_t *leftb, const int64_t *rightb, int64_t *map, int64_t *same)
{
    if (n <= 0)
        return;
    for (int64_t i = 0; i < n; i++)
        map[i] = -1;
    map[0] = nb > 0 ? 0 : -1;
    for (int64_t i = 0; i < n; i++) {           /* top-down: the node at the same place (children follow parents) */
        int64_t j = map[i];
        if (j < 0)
            continue;
        if (left[i] >= 0 && leftb[j] >= 0)
            map[left[i]] = leftb[j];
        if (right[i] >= 0 && rightb[j] >= 0)
            map[right[i]] = rightb[j];
    }
    for (int64_t i = n - 1; i >= 0; i--) {      /* bottom-up: the same count and the same subtrees */
        int64_t j = map[i], lc = left[i], rc = right[i];
        int ok = j >= 0 && F[i] == Fb[j];
        if (ok)
            ok = (lc < 0 ? leftb[j] < 0 : leftb[j] >= 0 && same[lc] >= 0) &&
                 (rc < 0 ? rightb[j] < 0 : rightb[j] >= 0 && same[rc] >= 0);
        same[i] = ok ? j : -1;
    }
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

/* lze_zrun_symbols of ns sets at once: set s has the index lengths ks[off[s] .. off[s + 1] - 1] (largest first, at
 * least one), its counts go to out[off[s] ..] */
EXPORT void lze_zrun_symbols_sets(int64_t nr, const int64_t *runs, int64_t ns, const int64_t *off, const int64_t *ks,
                                  int64_t *out)
{
    for (int64_t t = 0; t < ns; t++)
        if (off[t + 1] > off[t])
            lze_zrun_symbols(nr, runs, off[t + 1] - off[t], ks + off[t], out + off[t]);
}

/* The grouped design's scores (encoder._Grouped._score) of np_ partitions at once: part p has the classes
 * off[p] .. off[p + 1] - 1 with frequencies F and index lengths ks, and lut3[p] LUT3 entries; its score is
 * sum w (c + k) + class_bits n + lut3_bits lut3 with w = max(rint(F), 1) and c the package-merge code lengths
 * of w (1 for a single class), INF for a part without classes. The sum is of integers (exact in any order), the
 * rest as Python adds it. Returns 0, or -1 when package-merge had no memory. */
EXPORT int lze_package_merge(int64_t n, const double *w, int64_t L, int64_t *lengths);

/* One part's score (see lze_score_parts): n >= 1 weights w, index lengths ks, l3 LUT3 entries; c is scratch for
 * n code lengths. Returns -1 when package-merge had no memory, else 0 with the score in *out. */
static int part_score(int64_t n, const double *w, const int64_t *ks, int64_t l3, int64_t L, double class_bits,
                      double lut3_bits, int64_t *c, double *out)
{
    if (n >= 2) {
        if (lze_package_merge(n, w, L, c))
            return -1;
    } else
        c[0] = 1;
    double dot = 0.0;
    for (int64_t j = 0; j < n; j++)
        dot += w[j] * (double)(c[j] + ks[j]);
    *out = dot + (double)((int64_t)class_bits * n) + lut3_bits * (double)l3;
    return 0;
}

EXPORT int lze_score_parts(int64_t np_, const int64_t *off, const double *F, const int64_t *ks,
                           const int64_t *lut3, int64_t L, double class_bits, double lut3_bits, double *out)
{
    int64_t most = 1;
    for (int64_t p = 0; p < np_; p++)
        if (off[p + 1] - off[p] > most)
            most = off[p + 1] - off[p];
    double *w = malloc(most * sizeof(double));
    int64_t *c = malloc(most * sizeof(int64_t));
    int rc = 0;
    if (!w || !c)
        rc = -1;
    for (int64_t p = 0; p < np_ && !rc; p++) {
        int64_t n = off[p + 1] - off[p];
        if (n == 0) {
            out[p] = INF;
            continue;
        }
        for (int64_t j = 0; j < n; j++) {
            double r = rint(F[off[p] + j]);
            w[j] = r > 1.0 ? r : 1.0;
        }
        if (part_score(n, w, ks + off[p], lut3[p], L, class_bits, lut3_bits, c, out + p)) {
            rc = -1;
            break;
        }
    }
    free(w);
    free(c);
    return rc;
}

/* The zero-run candidates' estimate (encoder._zrun_candidates' approx) of every set of one and of two ZRUN
 * index lengths from 0..maxk: single[k] for the set {k}, pair[a * (maxk + 1) + b] for {a, b} (a < b). Each set's
 * run symbol counts as lze_zrun_symbols (largest chunks first, the last class rounds up), then, as Python
 * evaluates it: N = nnz + the symbols; nnz log2(N / nnz) (0 without non-zero words) + the sum, over the
 * classes largest first with a symbol, of c (k + max(floor, log2(N / c))) + class_bits. */
static double zrun_approx_of(int64_t nnz, int64_t n, const int64_t *ks, const int64_t *cnt, double floor_,
                             double class_bits)
{
    int64_t N = nnz;
    for (int64_t j = 0; j < n; j++)
        N += cnt[j];
    double nz = nnz ? (double)nnz * log2((double)N / (double)nnz) : 0.0;
    double sum = 0.0;
    for (int64_t j = 0; j < n; j++) {
        if (!cnt[j])
            continue;
        double l = log2((double)N / (double)cnt[j]);
        double m = l > floor_ ? l : floor_;
        sum = sum + ((double)cnt[j] * ((double)ks[j] + m) + class_bits);
    }
    return nz + sum;
}

/* zrun_approx_of for each of ns sets of `size` ZRUN index lengths (ks: ns rows, each largest first), the run
 * symbol counts of a set as lze_zrun_symbols (encoder._zrun_candidates' approx of the triples) */
EXPORT void lze_zrun_approx_sets(int64_t nr, const int64_t *runs, int64_t ns, int64_t size, const int64_t *ks,
                                 int64_t nnz, double floor_, double class_bits, double *out)
{
    int64_t cnt[16];
    for (int64_t t = 0; t < ns; t++) {
        if (size < 1 || size > 16) {
            out[t] = NAN;
            continue;
        }
        lze_zrun_symbols(nr, runs, size, ks + t * size, cnt);
        out[t] = zrun_approx_of(nnz, size, ks + t * size, cnt, floor_, class_bits);
    }
}

EXPORT void lze_zrun_approx(int64_t nr, const int64_t *runs, int64_t maxk, int64_t nnz, double floor_,
                            double class_bits, double *single, double *pair)
{
    int64_t K = maxk + 1;
    int64_t *c1 = calloc(K, sizeof(int64_t));          /* c1[k]: symbols of {k} */
    int64_t *c2 = calloc(2 * K * K, sizeof(int64_t));  /* c2[2 (a K + b)]: symbols of b, then of a (a < b) */
    if (!c1 || !c2) {
        free(c1);
        free(c2);
        for (int64_t k = 0; k < K; k++)
            single[k] = NAN;
        return;
    }
    for (int64_t r = 1; r < nr; r++) {
        int64_t c = runs[r];
        if (c == 0)
            continue;
        for (int64_t b = 0; b < K; b++) {
            c1[b] += c * ((r + ((int64_t)1 << b) - 1) >> b);
            int64_t q = r >> b, rem = r - (q << b);
            for (int64_t a = 0; a < b; a++) {
                c2[2 * (a * K + b)] += c * q;
                c2[2 * (a * K + b) + 1] += c * ((rem + ((int64_t)1 << a) - 1) >> a);
            }
        }
    }
    for (int64_t k = 0; k < K; k++)
        single[k] = zrun_approx_of(nnz, 1, &k, c1 + k, floor_, class_bits);
    for (int64_t a = 0; a < K; a++)
        for (int64_t b = a + 1; b < K; b++) {
            int64_t ks[2] = {b, a};
            pair[a * K + b] = zrun_approx_of(nnz, 2, ks, c2 + 2 * (a * K + b), floor_, class_bits);
        }
    free(c1);
    free(c2);
}

/* package-merge over n weights (2 <= n <= 2^L) as the numba _package_merge: a stable sort of the leaves, packages
 * of adjacent pairs, leaves first on equal weights; lengths[i] = how often leaf i is in the first 2n - 2 items. */
/* lze_package_merge for n <= 16 symbols and L <= 15: the same lists, merges and ties, each item's symbol counts
 * packed in 4-bit fields of one uint64 (an item holds a symbol at most once per level, so at most L < 16 times:
 * the fields never carry), on the stack. */
static void package_merge16(int64_t n, const double *w, int64_t L, int64_t *lengths)
{
    int64_t order[16];
    double lw[16], pw[32], tw[32], qw[16];
    uint64_t lc[16], pc[32], tc[32], qc[16];
    for (int64_t i = 0; i < n; i++)             /* stable insertion sort */
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
        lw[i] = pw[i] = w[order[i]];
        lc[i] = pc[i] = (uint64_t)1 << (4 * order[i]);
    }
    int64_t np_ = n;
    for (int64_t it = 0; it < L - 1; it++) {
        int64_t m = np_ / 2;
        for (int64_t j = 0; j < m; j++) {
            qw[j] = pw[2 * j] + pw[2 * j + 1];
            qc[j] = pc[2 * j] + pc[2 * j + 1];
        }
        int64_t a = 0, b = 0;
        for (int64_t t = 0; t < n + m; t++) {
            if (b >= m || (a < n && lw[a] <= qw[b])) {
                tw[t] = lw[a];
                tc[t] = lc[a];
                a++;
            } else {
                tw[t] = qw[b];
                tc[t] = qc[b];
                b++;
            }
        }
        np_ = n + m;
        memcpy(pw, tw, np_ * sizeof(double));
        memcpy(pc, tc, np_ * sizeof(uint64_t));
    }
    uint64_t lo = 0, hi = 0;                    /* the counts summed in 8-bit fields (even / odd symbols) */
    for (int64_t t = 0; t < 2 * n - 2; t++) {
        lo += pc[t] & 0x0F0F0F0F0F0F0F0Full;
        hi += (pc[t] >> 4) & 0x0F0F0F0F0F0F0F0Full;
    }
    for (int64_t s = 0; s < n; s++)
        lengths[s] = (int64_t)(((s & 1 ? hi : lo) >> (8 * (s >> 1))) & 0xFF);
}

EXPORT int lze_package_merge(int64_t n, const double *w, int64_t L, int64_t *lengths)
{
    if (n >= 2 && n <= 16 && L <= 15) {
        package_merge16(n, w, L, lengths);
        return 0;
    }
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

/* floor(log2(x)) for x > 0, the value of (int64_t)floor(log2(x)): from the exponent bits, except where x is within
 * a relative 2^-30 of a power of two (or not a normal number), where log2's rounding could reach the integer: there
 * log2 itself. Elsewhere log2(x) lies at least 2^-31 from an integer, far beyond its error (< 1 ulp <= 2^-42 for
 * |log2 x| < 1024), so both floors agree. */
static inline int64_t floor_log2(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    uint64_t e = (b >> 52) & 0x7ff, f = b & (((uint64_t)1 << 52) - 1);
    if (e == 0 || e == 0x7ff || (b >> 63) || f < ((uint64_t)1 << 22) || f > (((uint64_t)1 << 52) - ((uint64_t)1 << 23)))
        return (int64_t)floor(log2(x));
    return (int64_t)e - 1023;
}

/* 2^-c for 0 <= c <= 64 (exact: ldexp(1.0, -c)) */
static const double pow2neg[65] = {
    0x1p-0, 0x1p-1, 0x1p-2, 0x1p-3, 0x1p-4, 0x1p-5, 0x1p-6, 0x1p-7,
    0x1p-8, 0x1p-9, 0x1p-10, 0x1p-11, 0x1p-12, 0x1p-13, 0x1p-14, 0x1p-15,
    0x1p-16, 0x1p-17, 0x1p-18, 0x1p-19, 0x1p-20, 0x1p-21, 0x1p-22, 0x1p-23,
    0x1p-24, 0x1p-25, 0x1p-26, 0x1p-27, 0x1p-28, 0x1p-29, 0x1p-30, 0x1p-31,
    0x1p-32, 0x1p-33, 0x1p-34, 0x1p-35, 0x1p-36, 0x1p-37, 0x1p-38, 0x1p-39,
    0x1p-40, 0x1p-41, 0x1p-42, 0x1p-43, 0x1p-44, 0x1p-45, 0x1p-46, 0x1p-47,
    0x1p-48, 0x1p-49, 0x1p-50, 0x1p-51, 0x1p-52, 0x1p-53, 0x1p-54, 0x1p-55,
    0x1p-56, 0x1p-57, 0x1p-58, 0x1p-59, 0x1p-60, 0x1p-61, 0x1p-62, 0x1p-63,
    0x1p-64,
};

static inline double best_c(double F, double mu, int64_t L, int64_t *cbest)
{
    if (F <= 0.0) {
        *cbest = L;
        return mu * pow2neg[L];                     /* = pow(2.0, -L), exact */
    }
    int64_t c0 = floor_log2(mu * 0.6931471805599453 / F);
    double best = INF;
    int64_t bc = 1;
    for (int t = 0; t < 2; t++) {
        int64_t c = c0 + t;
        if (c < 1)
            c = 1;
        if (c > L)
            c = L;
        double v = F * c + mu * pow2neg[c];
        if (v < best) {
            best = v;
            bc = c;
        }
    }
    *cbest = bc;
    return best;
}

__attribute__((optimize("O3"))) static void group_dp(int64_t R, const double *pre, int64_t M, int64_t kmax, double mu,
                                                     int64_t L, int64_t W, double class_bits, double lut3_bits,
                                                     double *best, int64_t *ch, int64_t *start)
{
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
            relax(M, best + i * W1, cost, best + j * W1 + 1, ch + j * W1 + 1, kk, start + j * W1 + 1, i);
            if (j == R)
                reached = 1;
        }
    }
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
    group_dp(R, pre, M, kmax, mu, L, W, class_bits, lut3_bits, best, ch, start);
    free(pre);
}

/* lze_group_dp_grid's DP at one multiplier for M == 16, in pull form: row j (rank) gathers its sources in the push
 * loop's order (i ascending: k descending for j < R; for R each i's first block reaching R, then its residual), its
 * 16 entries kept in local arrays; costs (best_c) computed first for all sources: the same values and choices. */
#define GMM 16
__attribute__((optimize("O3"))) static void group_dp16(int64_t R, const double *pre, int64_t kmax, double mu,
                                                        int64_t L, int64_t W, double class_bits, double lut3_bits,
                                                        double *cost, double *best, int64_t *ch, int64_t *start)
{
    const int64_t W1 = GMM + 1, K1 = kmax + 1;
    /* costs: cost[j * K1 + k] of the block k ending at j < R (source j - 2^k >= 0); cost[R * K1 + ...] unused;
     * row R's: cost[(R + 1 + i) * 2 + 0/1] = block / residual from source i */
#if defined(__AVX2__)
    /* four ranks j at a time for each k: the same operations lane by lane (the division is IEEE in AVX2 too;
     * floor(log2) from the exponent bits, 2^-c built from its exponent: exact), lanes where best_c would take
     * log2 itself (near a power of two, F <= 0, not a normal number) redone by best_c */
    for (int64_t k = 0; k <= kmax; k++) {
        int64_t g = (int64_t)1 << k, j = g < 1 ? 1 : g;
        if (j >= R)
            break;
        const __m256d vmu = _mm256_set1_pd(mu), va = _mm256_set1_pd(mu * 0.6931471805599453);
        const __m256d vk = _mm256_set1_pd((double)k), vcls = _mm256_set1_pd(class_bits);
        const __m256d vl3 = _mm256_set1_pd(lut3_bits * (double)g);
        const __m256i mant = _mm256_set1_epi64x((int64_t)(((uint64_t)1 << 52) - 1));
        const __m256i lo_f = _mm256_set1_epi64x(((int64_t)1 << 22) - 1);
        const __m256i hi_f = _mm256_set1_epi64x((int64_t)(((uint64_t)1 << 52) - ((uint64_t)1 << 23)));
        const __m256i e_one = _mm256_set1_epi64x(1), e_max = _mm256_set1_epi64x(0x7fe);
        const __m256i bias = _mm256_set1_epi64x(1023), c_lo = _mm256_set1_epi64x(1), c_hi = _mm256_set1_epi64x(L);
        const __m256i magic_i = _mm256_set1_epi64x(0x4330000000000000LL);
        const __m256d magic = _mm256_set1_pd(4503599627370496.0);          /* 2^52: int -> double for 0..2^52 */
        const __m256i e1023 = _mm256_set1_epi64x(1023);
        for (; j + 4 <= R; j += 4) {
            __m256d F = _mm256_sub_pd(_mm256_loadu_pd(pre + j), _mm256_loadu_pd(pre + j - g));
            __m256d x = _mm256_div_pd(va, F);
            __m256i b = _mm256_castpd_si256(x);
            __m256i e = _mm256_srli_epi64(b, 52);                         /* (sign bit: e > 0x7ff) */
            __m256i f = _mm256_and_si256(b, mant);
            /* a lane for best_c: e == 0, e >= 0x7ff (incl. negative), f < 2^22, f > 2^52 - 2^23; or F <= 0 */
            __m256i bad = _mm256_or_si256(_mm256_cmpgt_epi64(e_one, e), _mm256_cmpgt_epi64(e, e_max));
            bad = _mm256_or_si256(bad, _mm256_cmpgt_epi64(_mm256_add_epi64(lo_f, e_one), f));
            bad = _mm256_or_si256(bad, _mm256_cmpgt_epi64(f, hi_f));
            bad = _mm256_or_si256(bad, _mm256_castpd_si256(_mm256_cmp_pd(F, _mm256_setzero_pd(), _CMP_LE_OQ)));
            __m256i c0 = _mm256_sub_epi64(e, bias);
            __m256d best = _mm256_setzero_pd();
            for (int t = 0; t < 2; t++) {
                __m256i c = _mm256_add_epi64(c0, _mm256_set1_epi64x(t));
                c = _mm256_blendv_epi8(c, c_lo, _mm256_cmpgt_epi64(c_lo, c));         /* c < 1: 1 */
                c = _mm256_blendv_epi8(c, c_hi, _mm256_cmpgt_epi64(c, c_hi));         /* c > L: L */
                __m256d cd = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(c, magic_i)), magic);
                __m256d p2 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_sub_epi64(e1023, c), 52));
                __m256d v = _mm256_add_pd(_mm256_mul_pd(F, cd), _mm256_mul_pd(vmu, p2));
                best = t == 0 ? v : _mm256_blendv_pd(best, v, _mm256_cmp_pd(v, best, _CMP_LT_OQ));
            }
            __m256d cs = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(F, vk), best), vcls), vl3);
            double out[4];
            _mm256_storeu_pd(out, cs);
            int bm = _mm256_movemask_pd(_mm256_castsi256_pd(bad));
            for (int q = 0; q < 4; q++) {
                if (bm >> q & 1) {
                    int64_t cb;
                    double Fq = pre[j + q] - pre[j + q - g];
                    double cc = best_c(Fq, mu, L, &cb);
                    out[q] = Fq * k + cc + class_bits + lut3_bits * g;
                }
                cost[(j + q) * K1 + k] = out[q];
            }
        }
        for (; j < R; j++) {
            int64_t cb;
            double F = pre[j] - pre[j - g];
            double cc = best_c(F, mu, L, &cb);
            cost[j * K1 + k] = F * k + cc + class_bits + lut3_bits * g;
        }
    }
#else
    for (int64_t j = 1; j < R; j++)
        for (int64_t k = 0; k <= kmax && ((int64_t)1 << k) <= j; k++) {
            int64_t g = (int64_t)1 << k, cb;
            double F = pre[j] - pre[j - g];
            double cc = best_c(F, mu, L, &cb);
            cost[j * K1 + k] = F * k + cc + class_bits + lut3_bits * g;
        }
#endif
    double *costR = cost + (R + 1) * K1;
    for (int64_t i = 0; i < R; i++) {
        int64_t cb;
        double F = pre[R] - pre[i];
        double cc = best_c(F, mu, L, &cb);
        for (int64_t k = 0; k <= kmax; k++) {
            int64_t g = (int64_t)1 << k;
            if (i + g >= R) {
                costR[2 * i] = F * k + cc + class_bits + lut3_bits * g;
                break;
            }
        }
        costR[2 * i + 1] = F * W + cc + class_bits;
    }
    for (int64_t m = 0; m < W1; m++) {
        best[m] = m ? INF : 0.0;
        ch[m] = -1;
        start[m] = -1;
    }
    for (int64_t j = 1; j <= R; j++) {
        /* the choice and the source of each entry in one word (cs << 32 | source: one select instead of two);
         * a source entry at INF cannot win: every cost is positive, so v >= INF >= acc[m] there (the push
         * form's test b < INF is implied) */
        double acc[GMM];
        int64_t acs[GMM];
        for (int m = 0; m < GMM; m++) {
            acc[m] = INF;
            acs[m] = -1;
        }
#if defined(__AVX2__)
        /* the 16 entries in four vectors of four (the compiler kept them scalar) */
        __m256d a0 = _mm256_set1_pd(INF), a1 = a0, a2 = a0, a3 = a0;
        __m256d s0 = _mm256_castsi256_pd(_mm256_set1_epi64x(-1)), s1 = s0, s2 = s0, s3 = s0;
#define PULL1(a, s, q)                                                               \
            do {                                                                     \
                __m256d v = _mm256_add_pd(_mm256_loadu_pd(fr + 4 * (q)), cs);        \
                __m256d lt = _mm256_cmp_pd(v, a, _CMP_LT_OQ);                        \
                a = _mm256_blendv_pd(a, v, lt);                                      \
                s = _mm256_blendv_pd(s, pk, lt);                                     \
            } while (0)
#define PULL(i_, cost_, c_)                                                          \
        do {                                                                         \
            const double *fr = best + (i_) * W1;                                     \
            __m256d cs = _mm256_set1_pd(cost_);                                      \
            __m256d pk = _mm256_castsi256_pd(_mm256_set1_epi64x(                     \
                (int64_t)(((uint64_t)(c_) << 32) | (uint64_t)(i_))));                \
            PULL1(a0, s0, 0);                                                        \
            PULL1(a1, s1, 1);                                                        \
            PULL1(a2, s2, 2);                                                        \
            PULL1(a3, s3, 3);                                                        \
        } while (0)
#else
#define PULL(i_, cost_, c_)                                                          \
        do {                                                                         \
            const double *fr = best + (i_) * W1;                                     \
            double cs = (cost_);                                                     \
            int64_t pk = (int64_t)(((uint64_t)(c_) << 32) | (uint64_t)(i_));        \
            for (int m = 0; m < GMM; m++) {                                          \
                double v = fr[m] + cs;                                               \
                int ok = v < acc[m];                                                 \
                acc[m] = ok ? v : acc[m];                                            \
                acs[m] = ok ? pk : acs[m];                                           \
            }                                                                        \
        } while (0)
#endif
        if (j < R) {
            int64_t k = kmax;
            while (k > 0 && ((int64_t)1 << k) > j)
                k--;
            for (; k >= 0; k--)
                PULL(j - ((int64_t)1 << k), cost[j * K1 + k], k);
        } else {
            for (int64_t i = 0; i < R; i++) {
                if (i + ((int64_t)1 << kmax) >= R) {
                    int64_t k = 0;
                    while (i + ((int64_t)1 << k) < R)
                        k++;
                    PULL(i, costR[2 * i], k);
                }
                PULL(i, costR[2 * i + 1], W + 1);
            }
        }
#undef PULL
#if defined(__AVX2__)
#undef PULL1
        _mm256_storeu_pd(acc, a0);
        _mm256_storeu_pd(acc + 4, a1);
        _mm256_storeu_pd(acc + 8, a2);
        _mm256_storeu_pd(acc + 12, a3);
        _mm256_storeu_pd((double *)acs, s0);
        _mm256_storeu_pd((double *)(acs + 4), s1);
        _mm256_storeu_pd((double *)(acs + 8), s2);
        _mm256_storeu_pd((double *)(acs + 12), s3);
#endif
        best[j * W1] = INF;
        ch[j * W1] = -1;
        start[j * W1] = -1;
        for (int m = 0; m < GMM; m++) {
            int64_t x = acs[m];
            best[j * W1 + 1 + m] = acc[m];
            ch[j * W1 + 1 + m] = x < 0 ? -1 : x >> 32;
            start[j * W1 + 1 + m] = x < 0 ? -1 : (int64_t)(uint32_t)x;
        }
    }
}

/* lze_group_dp at each of the ng multipliers mus[g] into best/ch/start + g (R + 1) (M + 1) (group_dp16 where M is
 * 16: the same tables); returns -1 without memory */
EXPORT int lze_group_dp_grid(int64_t R, const double *freq, int64_t M, int64_t kmax, int64_t ng, const double *mus,
                             int64_t L, int64_t W, double class_bits, double lut3_bits, double *best, int64_t *ch,
                             int64_t *start)
{
    double *pre = malloc((R + 1) * sizeof(double));
    double *cost = malloc(((R + 1) * (kmax + 1) + 2 * R + 2) * sizeof(double));
    if (!pre || !cost) {
        free(pre);
        free(cost);
        return -1;
    }
    pre[0] = 0.0;
    for (int64_t i = 0; i < R; i++)
        pre[i + 1] = pre[i] + freq[i];
    int64_t sz = (R + 1) * (M + 1);
    for (int64_t g = 0; g < ng; g++)
        if (M == GMM && kmax >= 0)
            group_dp16(R, pre, kmax, mus[g], L, W, class_bits, lut3_bits, cost, best + g * sz, ch + g * sz,
                       start + g * sz);
        else
            group_dp(R, pre, M, kmax, mus[g], L, W, class_bits, lut3_bits, best + g * sz, ch + g * sz,
                     start + g * sz);
    free(pre);
    free(cost);
    return 0;
}

/* The value partitions of lze_group_dp_grid's tables (encoder._Grouped.partitions): for each multiplier g the
 * fewest-bits budget m <= Mv (the first on equal bits), then the walk back from rank R along ch/start. nb[g] = the
 * blocks found (-1: no partition within Mv), written last block first to bk/bF/bs + g (M + 1) (index length, the
 * count pre[i] - pre[s0], first rank s0); resF[g] = the residual block's count (0 without one; its index length
 * is Wp1). Returns -1 on tables that do not walk back to rank 0. */
EXPORT int lze_group_walk(int64_t R, int64_t M, int64_t ng, const double *best, const int64_t *ch,
                          const int64_t *start, const double *pre, int64_t Mv, int64_t Wp1, int64_t *nb, double *resF,
                          int64_t *bk, double *bF, int64_t *bs)
{
    int64_t W1 = M + 1, sz = (R + 1) * W1;
    for (int64_t g = 0; g < ng; g++) {
        const double *bR = best + g * sz + R * W1;
        int64_t m = 0;
        for (int64_t x = 1; x <= Mv && x <= M; x++)
            if (bR[x] < bR[m])
                m = x;
        resF[g] = 0.0;
        if (!(bR[m] < INF)) {
            nb[g] = -1;
            continue;
        }
        int64_t i = R, cnt = 0;
        while (i > 0) {
            if (m < 0 || cnt > M)
                return -1;
            int64_t k = ch[g * sz + i * W1 + m], s0 = start[g * sz + i * W1 + m];
            if (s0 < 0 || s0 >= i)
                return -1;
            double F = pre[i] - pre[s0];
            if (k == Wp1)
                resF[g] = F;
            else {
                bk[g * W1 + cnt] = k;
                bF[g * W1 + cnt] = F;
                bs[g * W1 + cnt] = s0;
                cnt++;
            }
            i = s0;
            m--;
        }
        nb[g] = cnt;
    }
    return 0;
}

/* encoder._Grouped.partitions flattened for lze_grouped_designs: lze_group_walk at every multiplier, the
 * partitions without a walk left out, a partition equal to an earlier one (the same index lengths in rank order and
 * the same residual count) left out; the kept ones in grid order, their blocks in rank order: poff (ng + 1), bk, bF,
 * bs (ng (M + 1) room), resF (ng). Returns the partitions kept, -1 on tables that do not walk back or without
 * memory. */
EXPORT int64_t lze_group_parts(int64_t R, int64_t M, int64_t ng, const double *best, const int64_t *ch,
                               const int64_t *start, const double *pre, int64_t Mv, int64_t Wp1, int64_t *poff,
                               int64_t *bk, double *bF, int64_t *bs, double *resF)
{
    int64_t W1 = M + 1;
    int64_t *nb = malloc(ng * sizeof(int64_t)), *tk = malloc(ng * W1 * sizeof(int64_t)),
            *ts = malloc(ng * W1 * sizeof(int64_t));
    double *tr = malloc(ng * sizeof(double)), *tF = malloc(ng * W1 * sizeof(double));
    int64_t np_ = -1;
    if (nb && tk && ts && tr && tF && lze_group_walk(R, M, ng, best, ch, start, pre, Mv, Wp1, nb, tr, tk, tF, ts) == 0) {
        np_ = 0;
        poff[0] = 0;
        for (int64_t g = 0; g < ng; g++) {
            int64_t n = nb[g];
            if (n < 0)
                continue;
            int dup = 0;
            for (int64_t q = 0; q < np_ && !dup; q++) {
                if (poff[q + 1] - poff[q] != n || !(resF[q] == tr[g]))
                    continue;
                int same = 1;
                for (int64_t b = 0; b < n && same; b++)
                    same = bk[poff[q] + b] == tk[g * W1 + n - 1 - b];
                dup = same;
            }
            if (dup)
                continue;
            int64_t o = poff[np_];
            for (int64_t b = 0; b < n; b++) {
                bk[o + b] = tk[g * W1 + n - 1 - b];
                bF[o + b] = tF[g * W1 + n - 1 - b];
                bs[o + b] = ts[g * W1 + n - 1 - b];
            }
            resF[np_] = tr[g];
            poff[np_ + 1] = o + n;
            np_++;
        }
    }
    free(nb);
    free(tk);
    free(ts);
    free(tr);
    free(tF);
    return np_;
}

EXPORT int lze_zrun_parse_counts(int64_t nr, const int64_t *runs, int64_t single, int64_t nz, const int64_t *zk,
                                 const int64_t *ztot, int64_t *out)
{
    /* the DP's costs and choices forward; then the counts backward: a run of r words takes its choice's symbol
     * and leaves the parse of r - m, so the runs[r] parses of length r pass their weight on to r - m (the numba
     * kernel's count vectors per length, summed: the same integer totals, without (maxr + 1) (nz + 1) counts) */
    int64_t maxr = nr - 1;
    const int64_t inf = (int64_t)1 << 60;
    int64_t *cost = malloc((3 * (maxr + 1) + 1) * sizeof(int64_t));
    if (!cost)
        return -1;
    int64_t *ch = cost + (maxr + 1), *w = ch + (maxr + 1);
    for (int64_t r = 0; r <= maxr; r++)
        cost[r] = inf;
    cost[0] = 0;
    memset(out, 0, (nz + 1) * sizeof(int64_t));
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
        ch[r] = bc;
    }
    for (int64_t r = 0; r <= maxr; r++)
        w[r] = runs[r];
    for (int64_t r = maxr; r >= 1; r--) {
        int64_t x = w[r], bc = ch[r];
        if (x == 0 || bc == -2)         /* (a length without a parse counts nothing, as the numba kernel's zeros) */
            continue;
        if (bc == -1) {
            out[nz] += x;
            w[r - 1] += x;
        } else {
            int64_t m = (int64_t)1 << zk[bc];
            if (m > r)
                m = r;
            out[bc] += x;
            w[r - m] += x;
        }
    }
    free(cost);
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
    double za[32];                      /* (the sums in a local array: zF may alias runs for the compiler) */
    for (int64_t j = 0; j < nz; j++)
        za[j] = 0.0;
    for (int64_t r = 1; r < nr; r++) {
        if (runs[r] == 0)
            continue;
        int64_t rem = r;
        for (int64_t oi = 0; oi < nz; oi++) {
            int64_t j = order[oi];
            if (oi < nz - 1) {
                int64_t q = rem >> zk[j];
                za[j] += (double)(runs[r] * q);
                rem -= q << zk[j];
            } else {
                za[j] += (double)(runs[r] * ((rem + ((int64_t)1 << zk[j]) - 1) >> zk[j]));
            }
        }
    }
    for (int64_t j = 0; j < nz; j++)
        zF[j] = za[j] > 1.0 ? za[j] : 1.0;
    double dual_best = -INF;
    int64_t gbest = 0;
    int have = 0;                       /* the last parse's ztot (the counts are a function of runs, zk, ztot) */
    int64_t zlast[32];
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
        int same = have;
        for (int64_t j = 0; j < nz; j++) {
            best_c(zF[j], mus[gbest], L, &cbest[j]);
            ztot[j] = zk[j] + cbest[j];
            same = same && ztot[j] == zlast[j];
        }
        if (same)       /* the last round's parse again: zF, so every later round's dual and grid point, unchanged */
            break;
        if (lze_zrun_parse_counts(nr, runs, 0, nz, zk, ztot, cnt) < 0)
            return INF;
        for (int64_t j = 0; j < nz; j++)
            zlast[j] = ztot[j];
        have = 1;
        for (int64_t j = 0; j < nz; j++)
            zF[j] = (double)cnt[j] > 1.0 ? (double)cnt[j] : 1.0;
    }
    *gbest_out = gbest;
    return dual_best;
}

/* The forward DP of lze_zrun_parse_counts (single = 0) for the set search: the same costs and choices (the first
 * index of the least cost), by segments of r: a class with m_j >= r takes the whole rest of the run at the constant
 * cost t_j (cost[0] = 0), so within a segment between two of the m_j the constant classes' best is one value and
 * index, and only the classes with m_j < r read the DP (their m_j and t_j in registers). cost/ch: maxr + 1 each. */
#define ZP_INF ((int64_t)1 << 60)
/* zparse_fwd's steps r .. end of a segment with N reading classes (jm, jt, ji: index order; H1: the first has m = 1,
 * its cost read from a register): the first strict minimum, branch-free, then the constant classes' (cv, ci) as
 * there. Returns end + 1. */
static inline __attribute__((always_inline)) int64_t zseg(int64_t r, int64_t end, const int N, const int H1,
                                                          const int64_t *jm, const int64_t *jt, const int64_t *ji,
                                                          int64_t cv, int64_t ci, int64_t *cost, int64_t *ch)
{
    int64_t m[4], t[4], ix[4], p1 = cost[r - 1];
    for (int q = 0; q < N; q++) {
        m[q] = jm[q];
        t[q] = jt[q];
        ix[q] = ji[q];
    }
    for (; r <= end; r++) {
        int64_t bv = (H1 ? p1 : cost[r - m[0]]) + t[0], bi = ix[0];
        for (int q = 1; q < N; q++) {
            int64_t v = cost[r - m[q]] + t[q];
            int lt = v < bv;
            bi = lt ? ix[q] : bi;
            bv = lt ? v : bv;
        }
        int tk = (cv < bv) | ((cv == bv) & (ci < bi));
        bi = tk ? ci : bi;
        bv = tk ? cv : bv;
        p1 = bv;
        cost[r] = bv;
        ch[r] = bi;
    }
    return r;
}

static void zparse_fwd(int64_t maxr, int64_t nz, const int64_t *m, const int64_t *t, int64_t *cost, int64_t *ch)
{
    int64_t um[33], nu = 0;
    for (int64_t j = 0; j < nz; j++) {            /* the distinct m_j below maxr, ascending: segment ends */
        int64_t x = m[j] < maxr ? m[j] : maxr, q = nu;
        int dup = 0;
        for (int64_t i = 0; i < nu; i++)
            dup |= um[i] == x;
        if (dup)
            continue;
        while (q > 0 && um[q - 1] > x) {
            um[q] = um[q - 1];
            q--;
        }
        um[q] = x;
        nu++;
    }
    um[nu++] = maxr;                            /* (the last segment ends at maxr) */
    cost[0] = 0;
    int64_t r = 1;
    for (int64_t sgi = 0; sgi < nu && r <= maxr; sgi++) {
        int64_t end = um[sgi];
        /* classes reading the DP in this segment (m_j < r for every r of it: m_j < start), in index order; the
         * constant classes (m_j >= r for every r of it: m_j >= end) give one value and the first index */
        int64_t jm[32], jt[32], ji[32], n = 0, cv = ZP_INF, ci = -2;
        for (int64_t j = 0; j < nz; j++) {
            if (m[j] < r) {
                jm[n] = m[j];
                jt[n] = t[j];
                ji[n] = j;
                n++;
            } else if (t[j] < cv) {            /* (m_j >= end: the segments end at every m_j below maxr) */
                cv = t[j];
                ci = j;
            }
        }
        if (n == 0) {
            for (; r <= end; r++) {
                cost[r] = cv;
                ch[r] = ci;
            }
            continue;
        }
        if (n <= 4) {                           /* fixed-size, branch-free steps */
            int h = jm[0] == 1;
            switch (n * 2 + h) {
            case 2: r = zseg(r, end, 1, 0, jm, jt, ji, cv, ci, cost, ch); break;
            case 3: r = zseg(r, end, 1, 1, jm, jt, ji, cv, ci, cost, ch); break;
            case 4: r = zseg(r, end, 2, 0, jm, jt, ji, cv, ci, cost, ch); break;
            case 5: r = zseg(r, end, 2, 1, jm, jt, ji, cv, ci, cost, ch); break;
            case 6: r = zseg(r, end, 3, 0, jm, jt, ji, cv, ci, cost, ch); break;
            case 7: r = zseg(r, end, 3, 1, jm, jt, ji, cv, ci, cost, ch); break;
            case 8: r = zseg(r, end, 4, 0, jm, jt, ji, cv, ci, cost, ch); break;
            default: r = zseg(r, end, 4, 1, jm, jt, ji, cv, ci, cost, ch); break;
            }
            continue;
        }
        for (; r <= end; r++) {
            int64_t bv = ZP_INF, bi = -2;
            for (int64_t q = 0; q < n; q++) {
                int64_t v = cost[r - jm[q]] + jt[q];
                if (v < bv) {
                    bv = v;
                    bi = ji[q];
                }
            }
            if (cv < bv || (cv == bv && ci < bi)) {
                bv = cv;
                bi = ci;
            }
            cost[r] = bv;
            ch[r] = bi;
        }
    }
}

static void zparse_back(int64_t maxr, const int64_t *runs, int64_t nz, const int64_t *m, const int64_t *ch, int64_t *w,
                        int64_t *out)
{
    memset(out, 0, (nz + 1) * sizeof(int64_t));
    memcpy(w, runs, (maxr + 1) * sizeof(int64_t));
    for (int64_t r = maxr; r >= 1; r--) {
        int64_t x = w[r], bc = ch[r];
        if (x == 0 || bc < 0)           /* (no parse: counts nothing; single = 0: no -1 choice) */
            continue;
        int64_t mm = m[bc] < r ? m[bc] : r;
        out[bc] += x;
        w[r - mm] += x;
    }
}

/* lze_zrun_estimate of each of ns ZRUN sets (the set s: zks[off[s]:off[s + 1]], at most 32 index lengths) into
 * d[s]: its table column is tab[:, M - nz] (tab: G rows of M + 1), INF where M - nz < 0 (as
 * encoder._Grouped.estimate). The sets go through the rounds together: each round's duals, then the parses the
 * round needs (zparse_fwd / zparse_back: lze_zrun_parse_counts' counts), one work array for all; the greedy first
 * counts over the non-zero run lengths only (listed once); per set the same arithmetic in the same order as
 * lze_zrun_estimate. Returns -1 for a set of more than 32 index lengths, -2 without memory. */
EXPORT int lze_zrun_estimate_sets(int64_t nr, const int64_t *runs, int64_t ns, const int64_t *off, const int64_t *zks,
                                  const double *tab, int64_t M, int64_t G, const double *mus, int64_t L,
                                  int64_t rounds, double class_bits, double *d)
{
    for (int64_t s = 0; s < ns; s++)
        if (off[s + 1] - off[s] > 32)
            return -1;
    int64_t maxr = nr - 1;
    double *zF = malloc(ns * 32 * sizeof(double));
    int64_t *zt = malloc(ns * 64 * sizeof(int64_t)), *zlast = zt + ns * 32;
    int64_t *mz = malloc(ns * 32 * sizeof(int64_t));
    int64_t *st = malloc(ns * 3 * sizeof(int64_t)), *gb = st + ns, *todo = gb + ns;   /* st: 0 done, 1 active, 2 have */
    int64_t *buf = malloc(3 * (maxr + 1) * sizeof(int64_t)), *nzr = malloc(2 * (nr + 1) * sizeof(int64_t));
    int rc = 0, nnr = 0;
    if (!zF || !zt || !mz || !st || !buf || !nzr) {
        rc = -2;
        goto out;
    }
    for (int64_t r = 1; r < nr; r++)
        nnr += runs[r] != 0;
    for (int64_t r = 1, i = 0; r < nr; r++)
        if (runs[r] != 0) {
            nzr[i] = r;
            nzr[nnr + i] = runs[r];
            i++;
        }
    for (int64_t s = 0; s < ns; s++) {
        int64_t nz = off[s + 1] - off[s], Mv = M - nz;
        const int64_t *zk = zks + off[s];
        if (Mv < 0) {
            d[s] = INF;
            st[s] = 0;
            continue;
        }
        st[s] = 1;
        int64_t order[32];
        for (int64_t j = 0; j < nz; j++) {
            order[j] = j;
            mz[s * 32 + j] = (int64_t)1 << zk[j];
        }
        for (int64_t i = 1; i < nz; i++) {            /* by falling zk (the ks of a set are distinct) */
            int64_t x = order[i], j = i - 1;
            while (j >= 0 && zk[order[j]] < zk[x]) {
                order[j + 1] = order[j];
                j--;
            }
            order[j + 1] = x;
        }
        /* (in int64: lze_zrun_estimate sums the same integer products in doubles, exactly while the sums stay
         * below 2^53 -- they count symbols of the tensor's runs -- so the same values) */
        int64_t za[32], ko[32];
        for (int64_t j = 0; j < nz; j++) {
            za[j] = 0;
            ko[j] = zk[order[j]];
        }
        for (int64_t i = 0; i < nnr; i++) {       /* the lengths r >= 1 with runs[r] != 0, ascending */
            int64_t r = nzr[i], x = nzr[nnr + i], rem = r;
            for (int64_t oi = 0; oi < nz - 1; oi++) {
                int64_t q = rem >> ko[oi];
                za[oi] += x * q;
                rem -= q << ko[oi];
            }
            if (nz > 0)
                za[nz - 1] += x * ((rem + ((int64_t)1 << ko[nz - 1]) - 1) >> ko[nz - 1]);
        }
        for (int64_t oi = 0; oi < nz; oi++) {
            double v = (double)za[oi];
            zF[s * 32 + order[oi]] = v > 1.0 ? v : 1.0;
        }
    }
    for (int64_t rnd = 0; rnd <= rounds; rnd++) {
        int64_t nt = 0;
        for (int64_t s = 0; s < ns; s++) {
            if (!st[s])
                continue;
            int64_t nz = off[s + 1] - off[s], Mv = M - nz;
            const int64_t *zk = zks + off[s];
            double *f = zF + s * 32;
            double dual_best = -INF;
            int64_t gbest = 0;
            for (int64_t g = 0; g < G; g++) {
                double dd = tab[g * (M + 1) + Mv] - mus[g] + class_bits * nz;
                for (int64_t j = 0; j < nz; j++) {
                    int64_t cb;
                    double v = best_c(f[j], mus[g], L, &cb);
                    dd += v + f[j] * zk[j];
                }
                if (dd > dual_best) {
                    dual_best = dd;
                    gbest = g;
                }
            }
            d[s] = dual_best;
            gb[s] = gbest;
            if (rnd == rounds) {
                st[s] = 0;
                continue;
            }
            int same = st[s] == 2;
            for (int64_t j = 0; j < nz; j++) {
                int64_t cb;
                best_c(f[j], mus[gbest], L, &cb);
                zt[s * 32 + j] = zk[j] + cb;
                same = same && zt[s * 32 + j] == zlast[s * 32 + j];
            }
            if (same) {     /* the last round's parse again: zF, so every later round's dual, unchanged */
                st[s] = 0;
                continue;
            }
            todo[nt++] = s;
        }
        for (int64_t i = 0; i < nt; i++) {
            int64_t q = todo[i], nz = off[q + 1] - off[q], cnt[33];
            int64_t *cost = buf, *ch = buf + (maxr + 1), *w = buf + 2 * (maxr + 1);
            zparse_fwd(maxr, nz, mz + q * 32, zt + q * 32, cost, ch);
            zparse_back(maxr, runs, nz, mz + q * 32, ch, w, cnt);
            for (int64_t j = 0; j < nz; j++) {
                zlast[q * 32 + j] = zt[q * 32 + j];
                zF[q * 32 + j] = (double)cnt[j] > 1.0 ? (double)cnt[j] : 1.0;
            }
            st[q] = 2;
        }
    }
out:
    free(zF);
    free(zt);
    free(mz);
    free(st);
    free(buf);
    free(nzr);
    return rc;
}

/* ---------------------------------------------------------------------- the grouped design's ZRUN set search */
/* encoder._Grouped.zrun_sets in one call. A set of index lengths is a bit mask (k <= 30); Python's tuples of a set
 * are its lengths ascending, so tuple order is the order of the ascending lists (a prefix first). */
static int zs_tuple_cmp(uint32_t a, uint32_t b)
{
    while (a && b) {
        int x = __builtin_ctz(a), y = __builtin_ctz(b);
        if (x != y)
            return x < y ? -1 : 1;
        a &= a - 1;
        b &= b - 1;
    }
    return a ? 1 : (b ? -1 : 0);
}

typedef struct {
    double v;
    uint32_t m;
} zs_item;

static int zs_item_cmp(const void *pa, const void *pb)      /* Python's order of (value, tuple) pairs */
{
    const zs_item *a = pa, *b = pb;
    if (a->v < b->v)
        return -1;
    if (a->v > b->v)
        return 1;
    return zs_tuple_cmp(a->m, b->m);
}

typedef struct {
    uint32_t *keys;             /* the memo's sets in insertion order */
    double *vals;
    int32_t *slot;              /* open addressing: index + 1, 0 empty */
    int64_t n, cap, hmask;
    /* the estimate call */
    int64_t nr, M, G, L;
    const int64_t *runs;
    const double *tab, *mus;
    double class_bits;
    int64_t *off, *zks;
} zs_memo;

static int64_t zs_find(const zs_memo *z, uint32_t m)
{
    uint64_t h = ((uint64_t)m * 0x9E3779B97F4A7C15ull) >> 40;
    for (;; h++) {
        int32_t s = z->slot[h & z->hmask];
        if (s == 0)
            return -1 - (int64_t)(h & z->hmask);
        if (z->keys[s - 1] == m)
            return s - 1;
    }
}

/* estimate (rounds 2) the sets of ms[0..n) not in the memo, in that order; returns 0, or < 0 (no room / memory) */
static int zs_fill(zs_memo *z, const uint32_t *ms, int64_t n)
{
    int64_t first = z->n;
    for (int64_t i = 0; i < n; i++) {
        int64_t f = zs_find(z, ms[i]);
        if (f >= 0)
            continue;
        if (z->n >= z->cap)
            return -2;          /* (no room: not reached; the Python path decides) */
        z->keys[z->n] = ms[i];
        z->slot[-1 - f] = (int32_t)(z->n + 1);
        z->n++;
    }
    int64_t nb = z->n - first;
    if (!nb)
        return 0;
    z->off[0] = 0;
    int64_t q = 0;
    for (int64_t i = 0; i < nb; i++) {
        uint32_t m = z->keys[first + i];
        while (m) {
            z->zks[q++] = __builtin_ctz(m);
            m &= m - 1;
        }
        z->off[i + 1] = q;
    }
    int rc = lze_zrun_estimate_sets(z->nr, z->runs, nb, z->off, z->zks, z->tab, z->M, z->G, z->mus, z->L, 2,
                                    z->class_bits, z->vals + first);
    return rc == -1 ? -2 : rc ? -3 : 0;
}

static double zs_est(const zs_memo *z, uint32_t m)
{
    return z->vals[zs_find(z, m)];
}

/* encoder._Grouped.zrun_sets (with the C estimates): the keep best sets of 1..max_z index lengths in 0..maxk, each
 * with estimate(ks, 3) (out_d, out_g, out_zF[s * 32 + j] in ascending k). The same search: every set of up to
 * `exhaustive` lengths, a beam above, a local search; where Python's choice would depend on the order of a set
 * or dict (two sets with the same least estimate) it returns -2 and the caller takes the Python path. Returns the
 * number of sets kept (0 when M < 2 or no runs), -2 undecided, -3 no memory. */
EXPORT int64_t lze_zrun_sets(int64_t nr, const int64_t *runs, int64_t maxk, int64_t M, int64_t max_z, int64_t beam,
                             int64_t keep, int64_t exhaustive, const double *tab, int64_t G, const double *mus,
                             int64_t L, double class_bits, uint32_t *out_m, double *out_d, int64_t *out_g,
                             double *out_zF)
{
    int any = 0;
    for (int64_t r = 0; r < nr; r++)
        any |= runs[r] != 0;
    if (!any || M < 2)
        return 0;
    if (maxk > 30 || beam < 1)
        return -2;
    int64_t K = maxk + 1;
    int64_t top = max_z < K ? max_z : K;
    if (M - 1 < top)
        top = M - 1;
    int64_t full = exhaustive < top ? exhaustive : top;
    /* room: every set of up to `full` lengths, the beam's candidates, the local search's moves */
    int64_t cap = 1, c = 1;
    for (int64_t s = 1; s <= full; s++) {
        c = c * (K - s + 1) / s;
        cap += c;
    }
    cap += (top - full + 1) * beam * K + 4 * (K * (top + 2) + 2) + 64;
    int64_t hs = 16;
    while (hs < 2 * cap)
        hs <<= 1;
    zs_memo z = {0};
    z.keys = malloc(cap * sizeof(uint32_t));
    z.vals = malloc(cap * sizeof(double));
    z.slot = calloc(hs, sizeof(int32_t));
    z.off = malloc((cap + 1) * sizeof(int64_t));
    z.zks = malloc(cap * 32 * sizeof(int64_t));
    uint32_t *buf = malloc((cap + K * K) * sizeof(uint32_t));
    zs_item *items = malloc((cap + 1) * sizeof(zs_item));
    double *col = malloc((G + 1) * sizeof(double));
    int64_t rc = 0;
    if (!z.keys || !z.vals || !z.slot || !z.off || !z.zks || !buf || !items || !col) {
        rc = -3;
        goto out;
    }
    z.hmask = hs - 1;
    z.cap = cap;
    z.nr = nr;
    z.runs = runs;
    z.M = M;
    z.G = G;
    z.L = L;
    z.tab = tab;
    z.mus = mus;
    z.class_bits = class_bits;
    /* every set of 1..full lengths, in itertools.combinations' order */
    int64_t nb = 0;
    for (int64_t size = 1; size <= full; size++) {
        int64_t idx[32];
        for (int64_t i = 0; i < size; i++)
            idx[i] = i;
        for (;;) {
            uint32_t m = 0;
            for (int64_t i = 0; i < size; i++)
                m |= 1u << idx[i];
            buf[nb++] = m;
            int64_t i = size - 1;
            while (i >= 0 && idx[i] == i + K - size)
                i--;
            if (i < 0)
                break;
            idx[i]++;
            for (int64_t j = i + 1; j < size; j++)
                idx[j] = idx[j - 1] + 1;
        }
    }
    if ((rc = zs_fill(&z, buf, nb)) < 0)
        goto out;
    /* the frontier: the beam best sets of `full` lengths */
    int64_t nf = 0;
    for (int64_t i = 0; i < z.n; i++)
        if (__builtin_popcount(z.keys[i]) == full) {
            items[nf].v = z.vals[i];
            items[nf++].m = z.keys[i];
        }
    qsort(items, nf, sizeof(zs_item), zs_item_cmp);
    if (nf > beam)
        nf = beam;
    uint32_t front[64];
    if (beam > 64) {
        rc = -2;
        goto out;
    }
    for (int64_t i = 0; i < nf; i++)
        front[i] = items[i].m;
    for (int64_t size = full + 1; size <= top; size++) {
        int64_t nc = 0;
        for (int64_t i = 0; i < nf; i++)
            for (int64_t k = 0; k < K; k++)
                if (!(front[i] >> k & 1)) {
                    uint32_t m = front[i] | 1u << k;
                    int dup = 0;
                    for (int64_t j = 0; j < nc && !dup; j++)
                        dup = buf[j] == m;
                    if (!dup)
                        buf[nc++] = m;
                }
        if ((rc = zs_fill(&z, buf, nc)) < 0)
            goto out;
        for (int64_t i = 0; i < nc; i++) {
            items[i].v = zs_est(&z, buf[i]);
            items[i].m = buf[i];
        }
        qsort(items, nc, sizeof(zs_item), zs_item_cmp);
        nf = nc < beam ? nc : beam;
        for (int64_t i = 0; i < nf; i++)
            front[i] = items[i].m;
    }
    /* the local search from the best set (the first least in the memo's order: a tie is undecided here) */
    int64_t bi = 0;
    for (int64_t i = 1; i < z.n; i++)
        if (z.vals[i] < z.vals[bi])
            bi = i;
    for (int64_t i = 0; i < z.n; i++)
        if (i != bi && z.vals[i] == z.vals[bi]) {
            rc = -2;
            goto out;
        }
    uint32_t cur = z.keys[bi];
    int64_t lim = max_z < M - 1 ? max_z : M - 1;
    for (int pass = 0; pass < 4; pass++) {
        int64_t nc = 0, ncur = __builtin_popcount(cur);
        for (int64_t a = 0; a < K; a++) {
            if (!(cur >> a & 1))
                continue;
            for (int64_t b = 0; b < K; b++)
                if (!(cur >> b & 1))
                    buf[nc++] = (cur & ~(1u << a)) | 1u << b;       /* swaps */
        }
        if (ncur < lim)
            for (int64_t b = 0; b < K; b++)
                if (!(cur >> b & 1))
                    buf[nc++] = cur | 1u << b;                      /* adds */
        if (ncur > 1)
            for (int64_t a = 0; a < K; a++)
                if (cur >> a & 1)
                    buf[nc++] = cur & ~(1u << a);                   /* drops */
        /* (duplicates: a swap never equals another kind; two swaps differ) */
        if ((rc = zs_fill(&z, buf, nc)) < 0)
            goto out;
        if (!nc)
            break;
        int64_t ni = 0;
        for (int64_t i = 1; i < nc; i++)
            if (zs_est(&z, buf[i]) < zs_est(&z, buf[ni]))
                ni = i;
        double vn = zs_est(&z, buf[ni]), vc = zs_est(&z, cur);
        if (!(vn < vc))         /* Python: est(nxt) >= est(cur) (a NaN: undecided) */
        {
            if (vn != vn || vc != vc) {
                rc = -2;
                goto out;
            }
            break;
        }
        for (int64_t i = 0; i < nc; i++)
            if (i != ni && zs_est(&z, buf[i]) == vn) {
                rc = -2;
                goto out;
            }
        cur = buf[ni];
    }
    /* ranked: every estimated set by (value, tuple); the first `keep` re-estimated with 3 rounds */
    for (int64_t i = 0; i < z.n; i++) {
        items[i].v = z.vals[i];
        items[i].m = z.keys[i];
        if (z.vals[i] != z.vals[i]) {
            rc = -2;
            goto out;
        }
    }
    qsort(items, z.n, sizeof(zs_item), zs_item_cmp);
    int64_t nk = z.n < keep ? z.n : keep;
    for (int64_t s = 0; s < nk; s++) {
        uint32_t m = items[s].m;
        int64_t zk[32], nz = 0;
        while (m) {
            zk[nz++] = __builtin_ctz(m);
            m &= m - 1;
        }
        int64_t Mv = M - nz;
        out_m[s] = items[s].m;
        if (Mv < 0) {           /* (not reached: a set has at most M - 1 lengths) */
            out_d[s] = INF;
            out_g[s] = 0;
            for (int64_t j = 0; j < nz; j++)
                out_zF[s * 32 + j] = 1.0;
            continue;
        }
        for (int64_t g = 0; g < G; g++)
            col[g] = tab[g * (M + 1) + Mv];
        out_d[s] = lze_zrun_estimate(nr, runs, nz, zk, col, G, mus, L, 3, class_bits, &out_g[s], out_zF + s * 32);
    }
    rc = nk;
out:
    free(z.keys);
    free(z.vals);
    free(z.slot);
    free(z.off);
    free(z.zks);
    free(buf);
    free(items);
    free(col);
    return rc;
}

/* encoder._zrun_candidates_iter's sets after () in its order, at most `limit` of them (limit < 0: all) as masks
 * into out (room: 6 per_size + 1): for the floors 0 and 1 the per_size best singles, pairs, then triples (the
 * best three pairs with one more length), each by (estimate, tuple) as Python's sorted(), a set already listed
 * left out. Returns the sets written, -1 without memory. */
EXPORT int64_t lze_zrun_candidates(int64_t nr, const int64_t *runs, int64_t maxk, int64_t nnz, int64_t per_size,
                                   int64_t limit, double class_bits, uint32_t *out)
{
    int64_t K = maxk + 1, n = 0;
    if (K < 1 || K > 31)
        return -1;
    double *one = malloc(K * sizeof(double)), *two = malloc(K * K * sizeof(double));
    zs_item *it = malloc((K * K + K * 3 + 1) * sizeof(zs_item));
    int64_t *tk = malloc(3 * K * 3 * sizeof(int64_t));
    double *tv = malloc(3 * K * sizeof(double));
    int64_t rc = 0;
    if (!one || !two || !it || !tk || !tv) {
        rc = -1;
        goto out;
    }
    for (int fl = 0; fl < 2; fl++) {
        double floor_ = fl ? 1.0 : 0.0;
        lze_zrun_approx(nr, runs, maxk, nnz, floor_, class_bits, one, two);
        if (one[0] != one[0]) {
            rc = -1;
            goto out;
        }
        zs_item pairs[3];
        int64_t npairs = 0;
        for (int stage = 0; stage < 3; stage++) {
            int64_t ni = 0;
            if (stage == 0) {
                for (int64_t k = 0; k < K; k++) {
                    it[ni].v = one[k];
                    it[ni++].m = 1u << k;
                }
            } else if (stage == 1) {
                for (int64_t a = 0; a < K; a++)
                    for (int64_t b = a + 1; b < K; b++) {
                        it[ni].v = two[a * K + b];
                        it[ni++].m = 1u << a | 1u << b;
                    }
            } else {
                /* the triples: distinct sets (Python's set), each estimated with its lengths largest first */
                uint32_t tm[96];
                int64_t nt = 0;
                for (int64_t p = 0; p < npairs; p++)
                    for (int64_t k = 0; k < K; k++) {
                        if (pairs[p].m >> k & 1)
                            continue;
                        uint32_t m = pairs[p].m | 1u << k;
                        int dup = 0;
                        for (int64_t q = 0; q < nt && !dup; q++)
                            dup = tm[q] == m;
                        if (!dup)
                            tm[nt++] = m;
                    }
                for (int64_t q = 0; q < nt; q++) {
                    int64_t j = 3;
                    for (uint32_t m = tm[q]; m; m &= m - 1)
                        tk[q * 3 + --j] = __builtin_ctz(m);     /* (ascending bits: written last to first) */
                }
                lze_zrun_approx_sets(nr, runs, nt, 3, tk, nnz, floor_, class_bits, tv);
                for (int64_t q = 0; q < nt; q++) {
                    it[ni].v = tv[q];
                    it[ni++].m = tm[q];
                }
            }
            qsort(it, ni, sizeof(zs_item), zs_item_cmp);
            if (stage == 1) {
                npairs = ni < 3 ? ni : 3;
                for (int64_t p = 0; p < npairs; p++)
                    pairs[p] = it[p];
            }
            for (int64_t i = 0; i < ni && i < per_size; i++) {
                int dup = 0;
                for (int64_t q = 0; q < n && !dup; q++)
                    dup = out[q] == it[i].m;
                if (dup)
                    continue;
                if (limit >= 0 && n >= limit)
                    goto done;
                out[n++] = it[i].m;
            }
        }
    }
done:
    rc = n;
out:
    free(one);
    free(two);
    free(it);
    free(tk);
    free(tv);
    return rc;
}

/* ------------------------------------------------------------------------------------------ stripe coder */
/* Code n words (uint16, or uint8 when !wide) into stripes of S words: out gets each stripe's header word and
 * its bits MSB-first in 32-bit words, stripe_words[s] its word count. sym[v] = bits << 8 | length (0 = value
 * not covered). Returns the words written, or -1 - i for the first word i that cannot be coded. */
/* A zero run's whole code (its chunks' bits, first chunk first) as one symbol, bits << 8 | length, for runs of
 * r < RUN_CODES words whose code is at most 32 bits; 0 where the run takes the chunk loop (longer codes, an
 * uncovered remainder) */
#define RUN_CODES 1024
/* a stripe takes the token loop when at least 1 / ZRUN_TOKEN_SHARE of its words are zero */
#ifndef ZRUN_TOKEN_SHARE
#define ZRUN_TOKEN_SHARE 4
#endif
/* one chunk of a zero run of r words (r >= 1; zr_choice[r] != -2: a run class or a literal zero covers it): its
 * code bits b and length ln; r goes down by the words the chunk covers */
#define ZRUN_CHUNK(r, b, ln)                                                                                       \
    do {                                                                                                           \
        int64_t ch_ = zr_choice[r];                                                                                \
        if (ch_ == -1) {                                                                                           \
            b = sym[0] >> 8;                                                                                       \
            ln = (unsigned)(sym[0] & 0xFF);                                                                        \
            r -= 1;                                                                                                \
        } else {                                                                                                   \
            int64_t m_ = (int64_t)1 << zr_k[ch_];                                                                  \
            if (m_ > r)                                                                                            \
                m_ = r;                                                                                            \
            b = zr_bits[ch_] | (uint64_t)(m_ - 1);                                                                 \
            ln = (unsigned)zr_len[ch_];                                                                            \
            r -= m_;                                                                                               \
        }                                                                                                          \
    } while (0)
static void run_codes(int64_t rmax, const uint64_t *sym, const int64_t *zr_choice, const uint64_t *zr_bits,
                      const int64_t *zr_len, const int64_t *zr_k, uint64_t *code)
{
    code[0] = 0;
    for (int64_t r0 = 1; r0 < rmax; r0++) {
        uint64_t bits = 0;
        unsigned len = 0;
        int64_t r = r0;
        int ok = 1;
        while (r > 0 && ok) {
            uint64_t b;
            unsigned ln;
            if (zr_choice[r] == -2) {
                ok = 0;
                break;
            }
            ZRUN_CHUNK(r, b, ln);
            if (ln == 0 || len + ln > 32)
                ok = 0;
            else {
                bits = (bits << ln) | b;
                len += ln;
            }
        }
        code[r0] = ok ? (bits << 8) | len : 0;
    }
}

/* the zero run from word i (a zero word) to the stripe's end or its next non-zero word, coded chunk by chunk with
 * PUTX (PUT or PUT_NB); i moves past it. An uncovered run returns -1 - its first word from the coder. */
#define ZRUN_RUN(PUTX)                                                                                             \
    do {                                                                                                           \
        int64_t r = 1;                                                                                             \
        if (wide)                                                                                                  \
            while (i + r < hi && w16[i + r] == 0)                                                                  \
                r++;                                                                                               \
        else                                                                                                       \
            while (i + r < hi && w8[i + r] == 0)                                                                   \
                r++;                                                                                               \
        i += r;                                                                                                    \
        while (r > 0) {                                                                                            \
            uint64_t b;                                                                                            \
            unsigned ln;                                                                                           \
            if (zr_choice[r] == -2)                                                                                \
                return -1 - (i - r);                                                                               \
            ZRUN_CHUNK(r, b, ln);                                                                                  \
            PUTX(b, ln);                                                                                           \
        }                                                                                                          \
    } while (0)
/* the stripe coder: with zero runs the token loop over a bitmap of zero words (bm, with rcode the run codes) or,
 * in stripes of few zeros, word by word; without zero runs word by word */
static inline __attribute__((always_inline)) int64_t
encode_stripes(const void *words, int64_t n, int wide, int64_t S, const uint64_t *sym, int has_zrun,
               const int64_t *zr_choice, const uint64_t *zr_bits, const int64_t *zr_len, const int64_t *zr_k,
               uint32_t *out, uint32_t *stripe_words, const uint64_t *rcode, int64_t rmax, uint64_t *bm)
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
/* the same without a branch: the pending word is stored at out[p] either way, p moves on when it is full */
#define PUT_NB(b, ln)                                                                                              \
    do {                                                                                                           \
        acc = (acc << (ln)) | (b);                                                                                 \
        nacc += (ln);                                                                                              \
        unsigned full_ = nacc >= 32;                                                                               \
        nacc -= full_ << 5;                                                                                        \
        out[p] = (uint32_t)(acc >> nacc);                                                                          \
        p += full_;                                                                                                \
    } while (0)
        if (!has_zrun) {
            /* 8-bit words: the branch-free bit writer (8-bit symbols are short: a full word's branch
             * mispredicts every few symbols; 16-bit ones measured faster with the branch) */
            if (wide)
                for (; i < hi; i++) {
                    uint64_t e = sym[w16[i]];
                    unsigned ln = (unsigned)(e & 0xFF);
                    if (!ln)
                        return -1 - i;
                    PUT(e >> 8, ln);
                }
            else
                for (; i < hi; i++) {
                    uint64_t e = sym[w8[i]];
                    unsigned ln = (unsigned)(e & 0xFF);
                    if (!ln)
                        return -1 - i;
                    PUT_NB(e >> 8, ln);
                }
        } else if (bm) {
            /* zero runs: a bitmap of the stripe's zero words; each step codes one token -- a non-zero word or a
             * whole zero run (its length from the bitmap by ctz, its code from rcode) -- without a branch on
             * which; runs without a code in rcode (long, or long codes) take the chunk loop */
            int64_t nw = (hi - lo + 63) / 64;
            for (int64_t q = 0; q < nw; q++) {
                int64_t b0 = lo + 64 * q;
                int nb = hi - b0 >= 64 ? 64 : (int)(hi - b0);
                bm[q] = wide ? zero_mask16(w16 + b0, nb) : zero_mask8(w8 + b0, nb);
            }
            bm[nw] = 0;
            bm[nw + 1] = 0;
            int64_t zeros = 0;
            for (int64_t q = 0; q < nw; q++)
                zeros += __builtin_popcountll(bm[q]);
            /* the token loop pays where zero runs are frequent (its steps are a dependent chain); a stripe of
             * fewer zeros takes the word-by-word loop below */
            if (zeros * ZRUN_TOKEN_SHARE < hi - lo)
                goto words;
            uint64_t win = 0;           /* the bitmap from word i on; valid: how many of its bits are */
            int valid = 0;
            while (i < hi) {
                if (valid < 32) {
                    int64_t j = i - lo;
                    int sh = (int)(j & 63);
                    win = (bm[j >> 6] >> sh) | ((bm[(j >> 6) + 1] << 1) << (63 - sh));
                    valid = 64;
                }
                uint64_t nz = ~win;     /* bits beyond valid are 0 in win: a run stops there */
                if (nz) {
                    int r = __builtin_ctzll(nz);                /* 0 for a non-zero word */
                    if (r < valid) {
                        unsigned v = wide ? w16[i] : w8[i];
                        uint64_t rc = rcode[r < rmax ? r : 0];
                        uint64_t e = r ? rc : sym[v];
                        unsigned ln = (unsigned)(e & 0xFF);
                        if (ln) {
                            PUT_NB(e >> 8, ln);
                            int step = r ? r : 1;
                            i += step;
                            win >>= step;
                            valid -= step;
                            continue;
                        }
                        if (!r)
                            return -1 - i;                      /* an uncovered word */
                    }
                }
                valid = 0;
                /* a run the table does not code: its length, then the chunk loop */
                ZRUN_RUN(PUT);
            }
        } else {
        words:
            if (!wide) {
                /* 8-bit: the stretch of non-zero words up to the next zero word (from the bitmap) in a loop
                 * without the zero test (a zero every few words mispredicts it), then the run as below */
                int64_t nw = (hi - lo + 63) / 64;
                while (i < hi) {
                    int64_t j = i - lo, q = j >> 6;
                    uint64_t z = bm[q] & (~(uint64_t)0 << (j & 63));
                    while (!z && ++q < nw)
                        z = bm[q];
                    int64_t e0 = z ? lo + 64 * q + __builtin_ctzll(z) : hi;
                    for (; i < e0; i++) {
                        uint64_t e = sym[w8[i]];
                        unsigned ln = (unsigned)(e & 0xFF);
                        if (!ln)
                            return -1 - i;
                        PUT_NB(e >> 8, ln);
                    }
                    if (i >= hi)
                        break;
                    ZRUN_RUN(PUT_NB);
                }
            }
            while (i < hi) {
                unsigned v = wide ? w16[i] : w8[i];
                if (has_zrun && v == 0) {
                    ZRUN_RUN(PUT);
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
#undef PUT_NB
#undef ZRUN_RUN
#undef ZRUN_CHUNK
        if (nacc > 0)
            out[p++] = (uint32_t)(acc << (32 - nacc));
        stripe_words[s] = (uint32_t)(p - start);
    }
    return p;
}

/* the stripe coder specialised twice: without zero runs and with them */
__attribute__((noinline)) static int64_t encode_dense(const void *words, int64_t n, int wide, int64_t S,
                                                      const uint64_t *sym, uint32_t *out, uint32_t *stripe_words)
{
    return encode_stripes(words, n, wide, S, sym, 0, NULL, NULL, NULL, NULL, out, stripe_words, NULL, 0, NULL);
}

__attribute__((noinline)) static int64_t encode_zrun(const void *words, int64_t n, int wide, int64_t S,
                                                     const uint64_t *sym, const int64_t *zr_choice,
                                                     const uint64_t *zr_bits, const int64_t *zr_len,
                                                     const int64_t *zr_k, uint32_t *out, uint32_t *stripe_words,
                                                     const uint64_t *rcode, int64_t rmax, uint64_t *bm)
{
    return encode_stripes(words, n, wide, S, sym, 1, zr_choice, zr_bits, zr_len, zr_k, out, stripe_words, rcode,
                          rmax, bm);
}

/* out: room for one word more than the stripes take (the bit writer stores its pending word at out[p] before it
 * knows whether that word is full: the caller's n + 2 stripes + 1 words). Returns the words written or -1 - i
 * for an uncovered word i (as the numba _encode_kernel), or INT64_MIN (fastenc.LZE_NOMEM) without memory for
 * the zero-run tables. */
EXPORT int64_t lze_encode(const void *words, int64_t n, int wide, int64_t S, const uint64_t *sym, int has_zrun,
                          const int64_t *zr_choice, const uint64_t *zr_bits, const int64_t *zr_len,
                          const int64_t *zr_k, uint32_t *out, uint32_t *stripe_words)
{
    uint64_t *rcode = NULL, *bm = NULL;
    int64_t rmax = 0;
    if (has_zrun) {
        rmax = S + 1 < RUN_CODES ? S + 1 : RUN_CODES;
        rcode = malloc(rmax * sizeof(uint64_t));
        bm = malloc(((S + 63) / 64 + 2) * sizeof(uint64_t));
        if (!rcode || !bm) {
            free(rcode);
            free(bm);
            return INT64_MIN;           /* fastenc.LZE_NOMEM */
        }
        run_codes(rmax, sym, zr_choice, zr_bits, zr_len, zr_k, rcode);
    }
    if (!has_zrun)
        return encode_dense(words, n, wide, S, sym, out, stripe_words);
    int64_t p = encode_zrun(words, n, wide, S, sym, zr_choice, zr_bits, zr_len, zr_k, out, stripe_words, rcode, rmax,
                            bm);
    free(rcode);
    free(bm);
    return p;
}

/* ------------------------------------------------------------------------------------------ trie */
/* The binary trie of the present values (encoder._trie_tree): vals (sorted, nv), C and D the prefix sums of their
 * counts h and of h log2 h (nv + 1 each). Nodes in BFS order (children after parents, a parent's left child
 * first); a node is split when F k - (F log2 F - S) >= min_gain (k > 0). Writes keys, K, F, left, right (room for
 * cap nodes; lo, hi scratch of cap) and returns the node count, or -1 when cap is too small. */
/* log2(F), remembered for integral F < LOG_MEMO (memo[] starts as NaN): the same value as computing it */
static inline double l2int(double F, double *memo)
{
    if (F >= 1.0 && F < (double)LOG_MEMO) {
        int64_t fi = (int64_t)F;
        if ((double)fi == F) {
            double v = memo[fi];
            if (v != v) {
                v = log2(F);
                memo[fi] = v;
            }
            return v;
        }
    }
    return log2(F);
}

EXPORT int64_t lze_trie_tree(int64_t nv, const int64_t *vals, const double *C, const double *D, int64_t W,
                             double min_gain, int64_t cap, int64_t *keys, double *K, double *F, int64_t *left,
                             int64_t *right, int64_t *lo, int64_t *hi)
{
    if (cap < 1)
        return -1;
    int64_t n = 1, lv0 = 0, lv1 = 1, k = W;
    double memo[LOG_MEMO];
    memset(memo, 0xff, sizeof(memo));
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
            double gain = f * k - (f * l2int(f, memo) - s1);
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
 * -1 without memory. Over lze_trie_solve_ref's tables the choices of a node with same[i] >= 0 are the base's node
 * same[i]'s (ch_b, budget Mb); same NULL: every node's from ch (lze_trie_walk). */
EXPORT int64_t lze_trie_walk_ref(int64_t n, int64_t M, const int64_t *ch, const int64_t *keys, const double *K,
                             const double *F, const int64_t *left, const int64_t *right, int64_t m, int64_t *base,
                             int64_t *kout, double *Fout, double *fres, const int64_t *same, int64_t Mb,
                                 const int64_t *ch_b)
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
        int64_t c = same && same[i] >= 0 ? ch_b[same[i] * (Mb + 1) + mm] : ch[i * (M + 1) + mm];
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

/* lze_trie_walk_ref without a base: lze_trie_solve's tables */
EXPORT int64_t lze_trie_walk(int64_t n, int64_t M, const int64_t *ch, const int64_t *keys, const double *K,
                             const double *F, const int64_t *left, const int64_t *right, int64_t m, int64_t *base,
                             int64_t *kout, double *Fout, double *fres)
{
    return lze_trie_walk_ref(n, M, ch, keys, K, F, left, right, m, base, kout, Fout, fres, NULL, 0, NULL);
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

/* ------------------------------------------------------------------------------------------ exact cost */
static int64_t lower_idx(const int64_t *v, int64_t n, int64_t x)     /* first index with v[i] >= x */
{
    int64_t a = 0, b = n;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (v[m] < x)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

static __thread uint8_t lm16[65536];

/* The term of present value with0[a] when its cheapest LUT length is lm: its count times the difference to its
 * RANGE length r (0: none, then it is covered after all); len0: the length of value 0 */
static inline void lut_term(int64_t a, int64_t lm, const int64_t *with0, const int64_t *cum, int64_t nrg,
                            const int64_t *lo, const int64_t *hi, const int64_t *rt, int64_t *bits, int64_t *unc,
                            int64_t *len0, int *zero_lut)
{
    int64_t v = with0[a], c = cum[a + 1] - cum[a], r = 0;
    for (int64_t g = 0; g < nrg; g++)
        if (lo[g] <= v && v < hi[g] && (r == 0 || rt[g] < r))
            r = rt[g];
    int64_t fin = r == 0 || lm < r ? lm : r;
    if (r == 0)
        *unc -= c;
    *bits += c * (fin - r);
    if (a == 0) {
        *len0 = fin;
        *zero_lut = 1;
    }
}

/* encoder.exact_bits in one call: the payload bits of statistics coded with a table set (stripe headers and padding
 * estimated at 48 bits a stripe), INF when a present value is not covered. cls: nc rows (kind, k, param, total);
 * lut3 the table set's LUT3 (uint16); with0: the nw sorted present values with zero first (off = 1 when zero is
 * not present itself); cum: the prefix sums of their counts (nw + 1; an absent zero counts 0); runs: the zero-run
 * histogram (nr entries), hist0 the count of zero words.
 *
 * The same integer sum as sum(count * length) over the present values with the lengths of lze_lengths_at, in
 * O(classes + LUT3 log values): the RANGE classes cut the value line into at most 2 nc + 1 segments of one
 * cheapest RANGE length each (0: none), whose counts come from cum; each value in LUT3 then corrects its own
 * term when a LUT class is cheaper (or covers it alone). Then the zero runs as lze_zrun_costs. Returns -1 without
 * memory. */
EXPORT double lze_exact_bits(int64_t nc, const int64_t *cls, const uint16_t *lut3, int64_t nw, const int64_t *with0,
                             int64_t off, const int64_t *cum, int64_t nr, const int64_t *runs, int64_t hist0,
                             int64_t n_stripes)
{
    int64_t lo[16], hi[16], rt[16], zk[16], ztot[16], ends[34];
    int64_t nrg = 0, nz = 0, ne = 0, n3 = 0;
    if (nc > 16 || nw < 1)
        return -1.0;
    for (int64_t j = 0; j < nc; j++) {
        int64_t kind = cls[4 * j], k = cls[4 * j + 1], param = cls[4 * j + 2], t = cls[4 * j + 3];
        if (kind == 1) {
            lo[nrg] = param;
            hi[nrg] = param + ((int64_t)1 << k);
            rt[nrg] = t;
            ends[ne++] = lo[nrg];
            ends[ne++] = hi[nrg];
            nrg++;
        } else if (kind == 2) {
            zk[nz] = k;
            ztot[nz] = t;
            nz++;
        } else {
            n3 += (int64_t)1 << k;
        }
    }
    for (int64_t i = 1; i < ne; i++) {            /* sort the interval ends */
        int64_t x = ends[i], j = i - 1;
        while (j >= 0 && ends[j] > x) {
            ends[j + 1] = ends[j];
            j--;
        }
        ends[j + 1] = x;
    }
    /* segments [ends[s], ends[s + 1]) and the two outside them: their counts times their cheapest RANGE length;
     * unc: the count of values no RANGE covers */
    int64_t bits = 0, unc = 0;
    int64_t first = ne ? lower_idx(with0, nw, ends[0]) : nw, last = ne ? lower_idx(with0, nw, ends[ne - 1]) : nw;
    unc += cum[first] - cum[0] + cum[nw] - cum[last];
    for (int64_t s = 0; s + 1 < ne; s++) {
        if (ends[s] == ends[s + 1])
            continue;
        int64_t a = lower_idx(with0, nw, ends[s]), b = lower_idx(with0, nw, ends[s + 1]);
        if (a == b)
            continue;
        int64_t t = 0;
        for (int64_t r = 0; r < nrg; r++)
            if (lo[r] <= ends[s] && ends[s] < hi[r] && (t == 0 || rt[r] < t))
                t = rt[r];
        if (t == 0)
            unc += cum[b] - cum[a];
        else
            bits += (cum[b] - cum[a]) * t;
    }
    /* the values in LUT3: the cheapest LUT length lm of each present one corrects its term (lut_term). Many LUT3
     * entries against few values: the lengths in a 2^16 table by value (thread-local, zero between calls) and
     * one pass over the values; else a binary search per entry */
    int64_t len0 = 0;
    int zero_lut = 0, dense = n3 > 0 && nw <= 8 * n3 && with0[nw - 1] < 65536;
    for (int64_t j = 0; j < nc && dense; j++)
        if (cls[4 * j] == 0 && (cls[4 * j + 3] < 1 || cls[4 * j + 3] > 255))
            dense = 0;
    if (dense) {
        for (int64_t j = 0; j < nc; j++) {
            if (cls[4 * j] != 0)
                continue;
            int64_t n = (int64_t)1 << cls[4 * j + 1], p0 = cls[4 * j + 2];
            uint8_t t = (uint8_t)cls[4 * j + 3];
            for (int64_t i = 0; i < n; i++) {
                uint8_t *x = lm16 + lut3[p0 + i];
                if (*x == 0 || t < *x)
                    *x = t;
            }
        }
        for (int64_t a = 0; a < nw; a++)
            if (lm16[with0[a]])
                lut_term(a, lm16[with0[a]], with0, cum, nrg, lo, hi, rt, &bits, &unc, &len0, &zero_lut);
        for (int64_t j = 0; j < nc; j++)
            if (cls[4 * j] == 0)
                for (int64_t i = 0; i < ((int64_t)1 << cls[4 * j + 1]); i++)
                    lm16[lut3[cls[4 * j + 2] + i]] = 0;
    } else if (n3) {
        int64_t *lm = calloc(nw, sizeof(int64_t)), *seen = malloc(n3 * sizeof(int64_t)), nseen = 0;
        if (!lm || !seen) {
            free(lm);
            free(seen);
            return -1.0;
        }
        for (int64_t j = 0; j < nc; j++) {
            if (cls[4 * j] != 0)
                continue;
            int64_t n = (int64_t)1 << cls[4 * j + 1], p0 = cls[4 * j + 2], t = cls[4 * j + 3];
            for (int64_t i = 0; i < n; i++) {
                int64_t v = lut3[p0 + i], a = lower_idx(with0, nw, v);
                if (a >= nw || with0[a] != v)
                    continue;
                if (lm[a] == 0)
                    seen[nseen++] = a;
                if (lm[a] == 0 || t < lm[a])
                    lm[a] = t;
            }
        }
        for (int64_t q = 0; q < nseen; q++)
            lut_term(seen[q], lm[seen[q]], with0, cum, nrg, lo, hi, rt, &bits, &unc, &len0, &zero_lut);
        free(lm);
        free(seen);
    }
    if (!zero_lut)
        for (int64_t g = 0; g < nrg; g++)
            if (lo[g] <= 0 && 0 < hi[g] && (len0 == 0 || rt[g] < len0))
                len0 = rt[g];
    if (len0 == 0 && nz > 0 && off == 0)
        unc -= cum[1] - cum[0];                   /* zeros go through the zero-run plan */
    if (unc > 0)
        return INF;
    if (nz > 0 && hist0) {
        /* the costs up to the longest run present only (cost[r] depends on shorter runs alone: the same values) */
        while (nr > 1 && runs[nr - 1] == 0)
            nr--;
        int64_t maxr = nr - 1 > 1 ? nr - 1 : 1;
        int64_t *c = malloc((maxr + 1) * sizeof(int64_t));
        if (!c)
            return -1.0;
        lze_zrun_costs(maxr, len0, nz, zk, ztot, c);
        int64_t s = 0;
        for (int64_t r = 0; r < nr; r++) {
            if (runs[r] > 0 && c[r] >= ((int64_t)1 << 60)) {
                free(c);
                return INF;
            }
            s += runs[r] * c[r];
        }
        free(c);
        bits += s - hist0 * len0;
    }
    return (double)(bits + 48 * n_stripes);
}

/* A design's class code lengths and payload bits in one call (encoder._design + _Built.bits): the class
 * frequencies rounded half to even (Python's round), at least 1; package-merge lengths (one class: length 1) into
 * lens; then lze_exact_bits of the classes (kind, k, param, k + length). cls3: rows (kind, k, param). Returns -2.0
 * where the Python path must decide (more than 16 or 2^L classes), -1.0 without memory. */
EXPORT double lze_design_bits(int64_t nc, const int64_t *cls3, const double *freqs, int64_t L, int64_t *lens,
                              const uint16_t *lut3, int64_t nw, const int64_t *with0, int64_t off, const int64_t *cum,
                              int64_t nr, const int64_t *runs, int64_t hist0, int64_t n_stripes)
{
    double w[16];
    int64_t cls[64];
    if (nc < 1 || nc > 16 || nc > ((int64_t)1 << L))
        return -2.0;
    for (int64_t j = 0; j < nc; j++) {
        double r = nearbyint(freqs[j]);
        w[j] = r < 1.0 ? 1.0 : r;
    }
    if (nc == 1)
        lens[0] = 1;
    else if (lze_package_merge(nc, w, L, lens))
        return -1.0;
    for (int64_t j = 0; j < nc; j++) {
        cls[4 * j] = cls3[3 * j];
        cls[4 * j + 1] = cls3[3 * j + 1];
        cls[4 * j + 2] = cls3[3 * j + 2];
        cls[4 * j + 3] = cls3[3 * j + 1] + lens[j];
    }
    return lze_exact_bits(nc, cls, lut3, nw, with0, off, cum, nr, runs, hist0, n_stripes);
}

/* lze_trie_tree of the values vals[i] with keep[i] != 0 (all when keep is NULL), from their counts h and the terms
 * hl = h log2 h (as numpy computes them, elementwise): the prefix sums C and D are summed here in the same order as
 * numpy's cumsum over the kept values. Returns the node count, -1 when cap is too small, -2 without memory. */
EXPORT int64_t lze_trie_tree_sub(int64_t nv, const int64_t *vals, const double *h, const double *hl,
                                 const uint8_t *keep, int64_t W, double min_gain, int64_t cap, int64_t *keys, double *K,
                                 double *F, int64_t *left, int64_t *right, int64_t *lo, int64_t *hi)
{
    int64_t *sv = malloc((nv > 0 ? nv : 1) * sizeof(int64_t));
    double *C = malloc((nv + 1) * sizeof(double)), *D = malloc((nv + 1) * sizeof(double));
    if (!sv || !C || !D) {
        free(sv);
        free(C);
        free(D);
        return -2;
    }
    int64_t m = 0;
    double c = 0.0, d = 0.0;
    C[0] = 0.0;
    D[0] = 0.0;
    for (int64_t i = 0; i < nv; i++) {
        if (keep && !keep[i])
            continue;
        sv[m] = vals[i];
        c += h[i];
        d += hl[i];
        m++;
        C[m] = c;
        D[m] = d;
    }
    int64_t n = lze_trie_tree(m, sv, C, D, W, min_gain, cap, keys, K, F, left, right, lo, hi);
    free(sv);
    free(C);
    free(D);
    return n;
}

/* lze_exact_bits of one statistics under nt table sets (encoder._plan_tables_stats' sharing test): set t has
 * ncls[t] classes at clsp[t] and its LUT3 at lut3p[t] (0: none); its payload bits to out[t]. Returns -1 without
 * memory, else 0. */
EXPORT int64_t lze_exact_bits_many(int64_t nt, const int64_t *ncls, const uintptr_t *clsp, const uintptr_t *lut3p,
                                   int64_t nw, const int64_t *with0, int64_t off, const int64_t *cum, int64_t nr,
                                   const int64_t *runs, int64_t hist0, int64_t n_stripes, double *out)
{
    for (int64_t t = 0; t < nt; t++) {
        double r = lze_exact_bits(ncls[t], (const int64_t *)clsp[t], (const uint16_t *)lut3p[t], nw, with0, off, cum,
                                  nr, runs, hist0, n_stripes);
        if (r < 0)
            return -1;
        out[t] = r;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ a LUT size's designs */
/* This thread's grow-only work arrays of lze_design_lut (the trie, the DP tables, the walks), kept between calls
 * (fresh large blocks come as new pages, zeroed by the kernel at first touch) until lze_arena_free. */
#define ARENA_N 64
static __thread void *arena_p[ARENA_N];
static __thread size_t arena_cap[ARENA_N];

static void *arena(int i, size_t bytes)
{
    if (bytes < 64)
        bytes = 64;
    if (arena_cap[i] < bytes) {
        size_t nb = bytes + bytes / 4;
        free(arena_p[i]);
        arena_p[i] = malloc(nb);
        arena_cap[i] = arena_p[i] ? nb : 0;
    }
    return arena_p[i];
}

EXPORT void lze_arena_free(void)
{
    for (int i = 0; i < ARENA_N; i++) {
        free(arena_p[i]);
        arena_p[i] = NULL;
        arena_cap[i] = 0;
    }
}

/* a design's classes after its LUT and RANGE classes (cls3: kind, k, param per class; fr: their frequencies; j of
 * them so far): the residual RANGE class of W bits (fres > 0), the ZRUN classes (k, frequency), and where there is
 * still no class one RANGE class of W bits. Returns the class count. */
static inline int64_t design_tail(int64_t *cls3, double *fr, int64_t j, int64_t W, double fres, int64_t nz,
                                  const int64_t *zk, const double *zF)
{
    if (fres > 0) {
        cls3[3 * j] = 1;
        cls3[3 * j + 1] = W;
        cls3[3 * j + 2] = 0;
        fr[j++] = fres;
    }
    for (int64_t q = 0; q < nz; q++) {
        cls3[3 * j] = 2;
        cls3[3 * j + 1] = zk[q];
        cls3[3 * j + 2] = 0;
        fr[j++] = zF[q];
    }
    if (j == 0) {
        cls3[0] = 1;
        cls3[1] = W;
        cls3[2] = 0;
        fr[j++] = 1.0;
    }
    return j;
}

/* encoder._ZDesign.designs(t) for t > 0 in one call: the trie of the values left when the top t (ranks pos[0..t))
 * go to LUT classes (lze_trie_tree_sub), then up to two rounds (c_res 12, then the residual class's code length of
 * the first round's design when that differs by 0.5 or more) of: the trie DP (lze_trie_solve; keep_n in round 2
 * after a full round 1; lze_trie_solve_ref over a base -- t = 0's DP of the same c_res -- for trees of at least
 * ref_min nodes), the best split of the class budget Mv between the LUT DP's row lut_row and the trie's root rows
 * (the first minimum in the order of encoder._split_cands' stable sort), the walk of the trie's classes, the LUT
 * groups from lut_choice ((R + 1) x (Mv + 1)) over order / hord (the ranked values and their counts), zero-run
 * classes (zk, zF) last, and lze_design_bits. The same floats in the same order as the Python path.
 * Bases: base b = pointers bptr[8 b ..] (F, left, right, nores, res, ch_nores, ch_res, sat), bnn[b] nodes, budget
 * bM[b], c_res bcres[b]; base 0 is round 1's when has_b1, round 2 takes the first other with c_res equal.
 * Out per design d (at most 2): out_nc[d] classes as rows (kind, k, param) in out_cls + 48 d, code lengths in
 * out_lens + 16 d, out_n3[d] LUT3 entries in out_lut3 + t d, payload bits out_bits[d] (>= INF: not covered).
 * Returns the number of designs, -1 without memory, -2 where the Python path must decide, -3 trie over capacity. */
EXPORT int64_t lze_design_lut(
    int64_t nv, const int64_t *vals, const double *h, const double *hl, const int64_t *pos, int64_t t, int64_t W,
    double min_gain, double N, int64_t Mv, double class_bits, int64_t L, const double *lut_row,
    const int64_t *lut_choice, const int64_t *order, const int64_t *hord, int64_t nz, const int64_t *zk,
    const double *zF, int64_t ref_min, int64_t has_b1, int64_t nbase, const double *bcres, const int64_t *bnn,
    const int64_t *bM, const uintptr_t *bptr, int64_t nw, const int64_t *with0, int64_t off, const int64_t *cum,
    int64_t nr, const int64_t *runs, int64_t hist0, int64_t n_stripes, int64_t *out_nc, int64_t *out_cls,
    int64_t *out_lens, int64_t *out_n3, uint16_t *out_lut3, double *out_bits)
{
    int64_t W1 = Mv + 1;
    if (t < 1 || t > nv || Mv < 0)
        return -2;
    /* the trie of the values left */
    uint8_t *keep = arena(0, (size_t)nv);
    if (!keep)
        return -1;
    memset(keep, 1, (size_t)nv);
    for (int64_t j = 0; j < t; j++)
        keep[pos[j]] = 0;
    int64_t nk = nv - t, n = 0;
    int64_t *keys = NULL, *left = NULL, *right = NULL;
    double *K = NULL, *F = NULL;
    if (nk > 0) {
        int64_t cap = (W + 1) * nk + 1;
        size_t b8 = (size_t)cap * 8;
        keys = arena(1, b8);
        K = arena(2, b8);
        F = arena(3, b8);
        left = arena(4, b8);
        right = arena(5, b8);
        int64_t *lo = arena(6, b8), *hi = arena(7, b8);
        if (!keys || !K || !F || !left || !right || !lo || !hi)
            return -1;
        n = lze_trie_tree_sub(nv, vals, h, hl, keep, W, min_gain, cap, keys, K, F, left, right, lo, hi);
        if (n == -1)
            return -3;
        if (n < 0)
            return -1;
    }
    double *nores = NULL, *res = NULL;
    int64_t *chn = NULL, *chr = NULL, *sat = NULL, *same = NULL, *map = NULL, *rbase = NULL, *rk = NULL;
    double *rF = NULL;
    if (n > 0) {
        size_t tb = (size_t)n * W1 * 8;
        nores = arena(8, tb);
        res = arena(9, tb);
        chn = arena(10, tb);
        chr = arena(11, tb);
        sat = arena(12, (size_t)n * 8);
        same = arena(13, (size_t)n * 8);
        map = arena(14, (size_t)n * 8);
        rbase = arena(15, (size_t)n * 8);
        rk = arena(16, (size_t)n * 8);
        rF = arena(17, (size_t)n * 8);
        if (!nores || !res || !chn || !chr || !sat || !same || !map || !rbase || !rk || !rF)
            return -1;
    }
    int64_t *gk = arena(18, (size_t)(t + 1) * 8 * 2);     /* the LUT groups: (k, first rank) */
    if (!gk)
        return -1;
    double c_res = 12.0;
    int kept_n = 0;                 /* nores / ch_nores hold this tree's full values (a full round before) */
    int64_t count = 0;
    for (int it = 0; it < 2; it++) {
        int use_ref = 0;
        int64_t b = -1;
        if (n > 0) {
            if (it == 0) {
                if (has_b1)
                    b = 0;
            } else {
                for (int64_t j = has_b1 ? 1 : 0; j < nbase; j++)
                    if (bcres[j] == c_res) {
                        b = j;
                        break;
                    }
            }
            if (b >= 0 && !kept_n && n >= ref_min && bM[b] >= Mv) {
                const uintptr_t *p = bptr + 8 * b;
                lze_trie_same(n, F, left, right, bnn[b], (const double *)p[0], (const int64_t *)p[1],
                              (const int64_t *)p[2], map, same);
                if (same[0] < 0)
                    for (int64_t i = 0; i < n; i++)
                        if (same[i] >= 0) {
                            use_ref = 1;
                            break;
                        }
            }
            if (use_ref) {
                const uintptr_t *p = bptr + 8 * b;
                lze_trie_solve_ref(n, F, K, left, right, N, (double)W, c_res, Mv, class_bits, nores, res, chn, chr,
                                   sat, same, bM[b], (const double *)p[3], (const double *)p[4],
                                   (const int64_t *)p[7]);
                kept_n = 0;
            } else {
                lze_trie_solve(n, F, K, left, right, N, (double)W, c_res, Mv, class_bits, nores, res, chn, chr,
                               kept_n, sat);
                kept_n = 1;
            }
        }
        /* the best split: the first minimum over m1 ascending, without the residual before with it */
        double bestc = 0.0;
        int64_t bm1 = -1, bmm = 0;
        int bres = 0;
        for (int64_t m1 = 0; m1 <= Mv; m1++) {
            double a = lut_row[m1];
            if (a >= INF)
                continue;
            int64_t m2 = Mv - m1;
            double c = n > 0 ? nores[m2] : 0.0;
            if (c < INF) {
                double v = a + c;
                if (bm1 < 0 || v < bestc) {
                    bestc = v;
                    bm1 = m1;
                    bmm = m2;
                    bres = 0;
                }
            }
            if (m2 >= 1) {
                c = n > 0 ? res[m2 - 1] : 0.0;
                if (c < INF) {
                    double v = a + c;
                    if (bm1 < 0 || v < bestc) {
                        bestc = v;
                        bm1 = m1;
                        bmm = m2 - 1;
                        bres = 1;
                    }
                }
            }
        }
        if (bm1 < 0)
            return count;
        /* the trie's classes */
        int64_t nrg = 0;
        double fres = 0.0;
        if (n > 0) {
            const uintptr_t *p = use_ref ? bptr + 8 * b : NULL;
            nrg = lze_trie_walk_ref(n, Mv, bres ? chr : chn, keys, K, F, left, right, bmm, rbase, rk, rF, &fres,
                                    use_ref ? same : NULL, use_ref ? bM[b] : 0,
                                    use_ref ? (const int64_t *)p[bres ? 6 : 5] : NULL);
            if (nrg < 0)
                return -1;
        }
        /* the LUT groups, walked back from rank t */
        int64_t ng = 0;
        for (int64_t i = t, mm = bm1; i > 0; mm--) {
            int64_t k = lut_choice[i * W1 + mm];
            if (k < 0 || k > 62 || ((int64_t)1 << k) > i || mm < 1)
                return -2;
            int64_t g = (int64_t)1 << k;
            gk[2 * ng] = k;
            gk[2 * ng + 1] = i - g;
            ng++;
            i -= g;
        }
        int64_t nc = ng + nrg + (fres > 0) + nz;
        if (nc == 0)
            nc = 1;
        if (nc > 16 || nc > ((int64_t)1 << L))
            return -2;
        int64_t cls3[48];
        double fr[16];
        int64_t *lens = out_lens + 16 * count;
        uint16_t *l3 = out_lut3 + t * count;
        int64_t j = 0, n3 = 0;
        for (int64_t q = ng - 1; q >= 0; q--) {      /* groups in rank order */
            int64_t k = gk[2 * q], s = gk[2 * q + 1], g = (int64_t)1 << k, sum = 0;
            for (int64_t r = s; r < s + g; r++) {
                sum += hord[r];
                l3[n3 + r - s] = (uint16_t)order[r];
            }
            cls3[3 * j] = 0;
            cls3[3 * j + 1] = k;
            cls3[3 * j + 2] = n3;
            fr[j++] = (double)sum;
            n3 += g;
        }
        for (int64_t q = 0; q < nrg; q++) {
            cls3[3 * j] = 1;
            cls3[3 * j + 1] = rk[q];
            cls3[3 * j + 2] = rbase[q];
            fr[j++] = rF[q];
        }
        j = design_tail(cls3, fr, j, W, fres, nz, zk, zF);
        double bits = lze_design_bits(nc, cls3, fr, L, lens, l3, nw, with0, off, cum, nr, runs, hist0, n_stripes);
        if (bits == -2.0)
            return -2;
        if (bits < 0)
            return -1;
        memcpy(out_cls + 48 * count, cls3, (size_t)nc * 3 * sizeof(int64_t));
        out_nc[count] = nc;
        out_n3[count] = n3;
        out_bits[count] = bits;
        count++;
        if (!(fres > 0))
            break;
        double new_c = (double)lens[ng + nrg];
        if (fabs(new_c - c_res) < 0.5)
            break;
        c_res = new_c;
    }
    return count;
}

/* lze_design_bits of nd designs without LUT3 entries: design d has the classes off[d] .. off[d + 1] of cls3 (rows
 * kind, k, param) and freqs, its lengths go to lens + off[d], its payload bits (or -2.0: the Python path decides)
 * to bits[d]. Returns -1 without memory, else 0. */
EXPORT int64_t lze_design_bits_batch(int64_t nd, const int64_t *off, const int64_t *cls3, const double *freqs,
                                     int64_t L, int64_t *lens, double *bits, int64_t nw, const int64_t *with0,
                                     int64_t off0, const int64_t *cum, int64_t nr, const int64_t *runs, int64_t hist0,
                                     int64_t n_stripes)
{
    for (int64_t d = 0; d < nd; d++) {
        int64_t a = off[d], nc = off[d + 1] - off[d];
        double r = lze_design_bits(nc, cls3 + 3 * a, freqs + a, L, lens + a, NULL, nw, with0, off0, cum, nr, runs,
                                   hist0, n_stripes);
        if (r == -1.0)
            return -1;
        bits[d] = r;
    }
    return 0;
}

/* encoder._Grouped.designs of one ZRUN set in one call: `iters` rounds of (score every partition -- as
 * lze_score_parts, with the set's run symbol counts zF --, design and cost the `top` best not yet tried with these
 * counts, then re-estimate zF from the optimal parse at the round's best design's code lengths). Partition p has
 * the blocks poff[p] .. poff[p + 1] (index length bk, count bF, first rank bs) and the residual count resF[p] (0:
 * none); a block's LUT3 entries are order[s0 .. min(s0 + 2^k, R)], padded with the last. zF (nz, in/out scratch).
 * Per design d (at most iters * top): nc[d] classes (rows kind, k, param in cls + 48 d), their code lengths
 * (lens + 16 d), n3[d] LUT3 entries (lut3 + cap3 d), and its total bits (payload + table metadata: head_bits +
 * class_bits nc + lut3w n3; INFINITY when a present value is not covered); a design of more than lut3_max LUT3
 * entries is not returned (as the Python loop skips it). Returns the designs, -2 where the Python path must decide
 * (a part or design over 16 or 2^L classes, more than 16 ZRUN classes, LUT3 beyond cap3), -1 without memory. */
EXPORT int64_t lze_grouped_designs(int64_t np_, const int64_t *poff, const int64_t *bk, const double *bF,
                                   const int64_t *bs, const double *resF, int64_t R, const int64_t *order, int64_t W,
                                   int64_t L, int64_t lut3_max, int64_t nz, const int64_t *zks, double *zF,
                                   int64_t iters, int64_t top, double class_bits, double lut3_bits,
                                   int64_t head_bits, int64_t lut3w, int64_t nrp, const int64_t *runsp,
                                   int64_t nw, const int64_t *with0, int64_t off, const int64_t *cum, int64_t nr,
                                   const int64_t *runs, int64_t hist0, int64_t n_stripes, int64_t cap3,
                                   int64_t *out_nc, int64_t *out_cls, int64_t *out_lens, int64_t *out_n3,
                                   uint16_t *out_lut3, double *out_bits)
{
    int64_t maxc = (int64_t)1 << L;
    if (maxc > 16)
        maxc = 16;
    (void)maxc;
    if (nz > 16 || top > 16 || np_ < 1)
        return -2;
    for (int64_t p = 0; p < np_; p++)
        if (poff[p + 1] - poff[p] + (resF[p] > 0) + nz > 16)
            return -2;                      /* (the score's arrays below hold 16 classes) */
    double *sc = malloc(np_ * sizeof(double));
    int64_t *seen_n = malloc(iters * top * sizeof(int64_t) + 1);
    int64_t *seen_z = malloc((iters * top * (nz + 1) + 1) * sizeof(int64_t));
    if (!sc || !seen_n || !seen_z) {
        free(sc);
        free(seen_n);
        free(seen_z);
        return -1;
    }
    int64_t nseen = 0, count = 0, rc = 0;
    for (int64_t it = 0; it < iters && rc == 0; it++) {
        /* the scores (lze_score_parts of the part's F and ks, then zF and zks) */
        for (int64_t p = 0; p < np_; p++) {
            double w[16];
            int64_t c[16], ks[16], l3 = 0, n = 0;
            for (int64_t b = poff[p]; b < poff[p + 1]; b++) {
                double r = rint(bF[b]);
                w[n] = r > 1.0 ? r : 1.0;
                ks[n++] = bk[b];
                l3 += (int64_t)1 << bk[b];
            }
            if (resF[p] > 0) {
                double r = rint(resF[p]);
                w[n] = r > 1.0 ? r : 1.0;
                ks[n++] = W;
            }
            for (int64_t j = 0; j < nz; j++) {
                double r = rint(zF[j]);
                w[n] = r > 1.0 ? r : 1.0;
                ks[n++] = zks[j];
            }
            if (n == 0) {
                sc[p] = INF;
                continue;
            }
            if (part_score(n, w, ks, l3, L, class_bits, lut3_bits, c, sc + p)) {
                rc = -1;
                break;
            }
        }
        if (rc)
            break;
        /* the top parts by (score, index): sorted(zip(scores, range(n)))[:top] */
        int64_t pick[16], npick = 0;
        for (int64_t t = 0; t < top && t < np_; t++) {
            int64_t m = -1;
            for (int64_t p = 0; p < np_; p++) {
                int taken = 0;
                for (int64_t q = 0; q < npick; q++)
                    taken |= pick[q] == p;
                if (taken)
                    continue;
                if (m < 0 || sc[p] < sc[m])
                    m = p;
            }
            pick[npick++] = m;
        }
        int64_t best_d = -1;
        double best_bits = INFINITY;
        for (int64_t t = 0; t < npick; t++) {
            int64_t p = pick[t], dup = 0;
            for (int64_t q = 0; q < nseen && !dup; q++) {
                if (seen_n[q] != p)
                    continue;
                int same = 1;
                for (int64_t j = 0; j < nz; j++)
                    same &= seen_z[q * (nz + 1) + j] == (int64_t)zF[j];
                dup = same;
            }
            if (dup)
                continue;
            seen_n[nseen] = p;
            for (int64_t j = 0; j < nz; j++)
                seen_z[nseen * (nz + 1) + j] = (int64_t)zF[j];
            nseen++;
            /* the design: LUT classes of the blocks, the residual RANGE class, the ZRUN classes */
            int64_t *cls3 = out_cls + 48 * count, *lens = out_lens + 16 * count, nc = 0, n3 = 0;
            uint16_t *l3 = out_lut3 + cap3 * count;
            double fr[16];
            for (int64_t b = poff[p]; b < poff[p + 1]; b++) {
                int64_t g = (int64_t)1 << bk[b], s0 = bs[b], e = s0 + g < R ? s0 + g : R;
                if (n3 + g > cap3 || e <= s0) {
                    rc = -2;
                    break;
                }
                cls3[3 * nc] = 0;
                cls3[3 * nc + 1] = bk[b];
                cls3[3 * nc + 2] = n3;
                fr[nc++] = bF[b];
                for (int64_t i = s0; i < s0 + g; i++)
                    l3[n3++] = (uint16_t)order[i < e ? i : e - 1];
            }
            if (rc)
                break;
            nc = design_tail(cls3, fr, nc, W, resF[p], nz, zks, zF);
            if (n3 > lut3_max)
                continue;
            double r = lze_design_bits(nc, cls3, fr, L, lens, l3, nw, with0, off, cum, nr, runs, hist0, n_stripes);
            if (r == -2.0) {
                rc = -2;
                break;
            }
            if (r < 0) {
                rc = -1;
                break;
            }
            double bits = (r >= INF ? INFINITY : r) + (double)(head_bits + (int64_t)class_bits * nc + lut3w * n3);
            out_nc[count] = nc;
            out_n3[count] = n3;
            out_bits[count] = bits;
            if (bits < best_bits) {
                best_bits = bits;
                best_d = count;
            }
            count++;
        }
        if (rc || nz == 0 || best_d < 0)
            break;
        if (it + 1 == iters)
            break;                          /* (the Python loop re-estimates here too; nothing reads it after) */
        /* re-estimate the run symbol counts: the optimal parse at the best design's lengths (_zero_costs) */
        {
            int64_t nc = out_nc[best_d], kinds[16], ks[16], params[16], tot[16], zk[16], ztot[16], nzz = 0, len0;
            int64_t zero = 0, cnt[17];
            const int64_t *c3 = out_cls + 48 * best_d, *ln = out_lens + 16 * best_d;
            int64_t l3i[4096];
            int64_t n3 = out_n3[best_d];
            int64_t *l3b = n3 <= 4096 ? l3i : malloc(n3 * sizeof(int64_t));
            if (!l3b) {
                rc = -1;
                break;
            }
            for (int64_t i = 0; i < n3; i++)
                l3b[i] = out_lut3[cap3 * best_d + i];
            for (int64_t j = 0; j < nc; j++) {
                kinds[j] = c3[3 * j];
                ks[j] = c3[3 * j + 1];
                params[j] = c3[3 * j + 2];
                tot[j] = ks[j] + ln[j];
                if (kinds[j] == 2) {
                    zk[nzz] = ks[j];
                    ztot[nzz++] = tot[j];
                }
            }
            lze_lengths_at(1, &zero, nc, kinds, ks, params, tot, l3b, &len0);
            if (l3b != l3i)
                free(l3b);
            if (lze_zrun_parse_counts(nrp, runsp, len0, nzz, zk, ztot, cnt)) {
                rc = -1;
                break;
            }
            for (int64_t j = 0; j < nz; j++)
                zF[j] = (double)cnt[j] > 1.0 ? (double)cnt[j] : 1.0;
        }
    }
    free(sc);
    free(seen_n);
    free(seen_z);
    return rc ? rc : count;
}

/* ------------------------------------------------------------------------- the grouped design in one call */
/* The present values of hist (2^W counts; value 0 left out when !zeros) by falling count, ties by value (numpy's
 * stable argsort of -hist over the ascending values): order[0..R), freq the counts as doubles. Returns R. */
static int64_t gr_order(int64_t W, const int64_t *hist, int zeros, int64_t *order, double *freq)
{
    int64_t R = 0;
    for (int64_t v = zeros ? 0 : 1; v < ((int64_t)1 << W); v++)
        if (hist[v])
            order[R++] = v;
    for (int64_t i = 1; i < R; i++) {       /* insertion sort, stable: by falling count */
        int64_t x = order[i], c = hist[x], j = i - 1;
        while (j >= 0 && hist[order[j]] < c) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    for (int64_t i = 0; i < R; i++)
        freq[i] = (double)hist[order[i]];
    return R;
}

static int64_t bitlen(int64_t x)
{
    return x <= 0 ? 0 : 64 - __builtin_clzll((uint64_t)x);
}

/* encoder._grouped_candidates (with the C kernels) in one call: the designs of _Grouped(zeros=True) (unless most
 * words are zero), then of each ZRUN set of _Grouped(zeros=False).zrun_sets (when at least 1 % of the words are
 * zero), the search's parameters by effort and size as there; each design as lze_grouped_designs writes it, into
 * out_* at the next index (maxd room, LUT3 stride cap3). mus_t0 / mus_t1: the grids' multipliers of table() with
 * and without zeros as a value, mus_z zrun_sets' (the caller computes them as the Python code does). Returns the
 * designs written, -2 where the Python path must decide (a tie in the set search, an all-zero tensor, a design
 * beyond the arrays), -1 without memory, -3 on tables that do not walk back. */
EXPORT int64_t lze_grouped_all(int64_t W, const int64_t *hist, int64_t nrun, const int64_t *runs, int64_t L,
                               int64_t M, int64_t lut3_max, int64_t effort, int64_t max_lut_k, int64_t max_zrun_k,
                               double class_bits, double lut3_bits, int64_t head_bits, int64_t lut3w, int64_t G,
                               const double *mus_t0, const double *mus_t1, const double *mus_z, int64_t nw,
                               const int64_t *with0, int64_t off, const int64_t *cum, int64_t nr,
                               const int64_t *sruns, int64_t hist0, int64_t n_stripes, int64_t maxd, int64_t cap3,
                               int64_t *out_nc, int64_t *out_cls, int64_t *out_lens, int64_t *out_n3,
                               uint16_t *out_lut3, double *out_bits)
{
    int64_t nv = 0, n_words = 0, H = (int64_t)1 << W;
    for (int64_t v = 0; v < H; v++) {
        nv += hist[v] != 0;
        n_words += hist[v];
    }
    int64_t last = 0;
    for (int64_t r = 0; r < nrun; r++)
        if (runs[r])
            last = r;
    int any_run = runs[last] != 0;
    int64_t nrp = last + 1, M1 = M + 1;
    int64_t *order = malloc((nv + 1) * sizeof(int64_t));
    double *freq = malloc((nv + 1) * sizeof(double)), *pre = malloc((nv + 2) * sizeof(double));
    size_t gsz = (size_t)G * (nv + 1) * M1;
    double *best = malloc(gsz * sizeof(double)), *tab = malloc(G * M1 * sizeof(double));
    int64_t *ch = malloc(gsz * sizeof(int64_t)), *start = malloc(gsz * sizeof(int64_t));
    int64_t *poff = malloc((G + 1) * sizeof(int64_t)), *bk = malloc(G * M1 * sizeof(int64_t)),
            *bs = malloc(G * M1 * sizeof(int64_t));
    double *bF = malloc(G * M1 * sizeof(double)), *resF = malloc(G * sizeof(double));
    int64_t count = 0, rc = 0;
    if (!order || !freq || !pre || !best || !tab || !ch || !start || !poff || !bk || !bs || !bF || !resF) {
        rc = -1;
        goto out;
    }
    for (int pass = 0; pass < 2; pass++) {
        int zeros = pass == 0;
        if (zeros ? !((double)hist[0] < 0.5 * (double)n_words)
                  : !((double)hist[0] >= 0.01 * (double)n_words && any_run))
            continue;
        int64_t R = gr_order(W, hist, zeros, order, freq);
        int64_t kmax = bitlen(R - 1);
        if (kmax > max_lut_k)
            kmax = max_lut_k;
        if (kmax > W)
            kmax = W;
        if (R == 0) {
            if (zeros)
                continue;               /* (designs(): no value and no ZRUN class: nothing) */
            rc = -2;                    /* (an all-zero tensor: the Python path's single design) */
            goto out;
        }
        if (lze_group_dp_grid(R, freq, M, kmax, G, zeros ? mus_t0 : mus_t1, L, W, class_bits, lut3_bits, best, ch,
                              start)) {
            rc = -1;
            goto out;
        }
        pre[0] = 0.0;
        for (int64_t i = 0; i < R; i++)
            pre[i + 1] = pre[i] + freq[i];
        uint32_t sm[8];
        double sd[8], szF[8 * 32];
        int64_t sg[8], nsets = 1;
        if (zeros) {
            sm[0] = 0;
        } else {
            /* the table (_Grouped.table: the least value part with at most m classes) and the set search */
            for (int64_t g = 0; g < G; g++) {
                const double *b = best + (size_t)g * (R + 1) * M1 + (size_t)R * M1;
                double m0 = b[0];
                tab[g * M1] = m0;
                for (int64_t m = 1; m < M1; m++) {
                    m0 = b[m] < m0 ? b[m] : m0;
                    tab[g * M1 + m] = m0;
                }
            }
            int64_t maxk = bitlen(last - 1 > 0 ? last - 1 : 0);
            if (maxk > max_zrun_k)
                maxk = max_zrun_k;
            int64_t max_z = 5, beam = 5, keep = 3, ex = 3;       /* GROUPED_MAX_ZRUNS, and zrun_sets' defaults */
            if (effort < 1) {
                max_z = 3;
                beam = 2;
                keep = 1;
                ex = 1;
            } else if (n_words < 65536) {
                beam = 3;
                keep = 2;
                ex = n_words >= 16384 ? 2 : 1;
            }
            nsets = lze_zrun_sets(nrp, runs, maxk, M, max_z, beam, keep, ex, tab, G, mus_z, L, class_bits, sm, sd,
                                  sg, szF);
            if (nsets < 0) {
                rc = nsets == -2 ? -2 : -1;
                goto out;
            }
        }
        for (int64_t s = 0; s < nsets; s++) {
            int64_t zk[32], nz = 0;
            for (uint32_t m = sm[s]; m; m &= m - 1)
                zk[nz++] = __builtin_ctz(m);
            int64_t Mv = M - nz;
            if (Mv < 1)
                continue;
            int64_t np_ = lze_group_parts(R, M, G, best, ch, start, pre, Mv, W + 1, poff, bk, bF, bs, resF);
            if (np_ < 0) {
                rc = -3;
                goto out;
            }
            if (count + 4 > maxd) {
                rc = -2;
                goto out;
            }
            double zF[32];
            for (int64_t j = 0; j < nz; j++)
                zF[j] = szF[s * 32 + j];
            int64_t r = lze_grouped_designs(np_, poff, bk, bF, bs, resF, R, order, W, L, lut3_max, nz, zk, zF, 2, 2,
                                            class_bits, lut3_bits, head_bits, lut3w, nrp, runs, nw, with0, off, cum,
                                            nr, sruns, hist0, n_stripes, cap3, out_nc + count,
                                            out_cls + 48 * count, out_lens + 16 * count, out_n3 + count,
                                            out_lut3 + cap3 * count, out_bits + count);
            if (r < 0) {
                rc = r;
                goto out;
            }
            count += r;
        }
    }
    rc = count;
out:
    free(order);
    free(freq);
    free(pre);
    free(best);
    free(tab);
    free(ch);
    free(start);
    free(poff);
    free(bk);
    free(bs);
    free(bF);
    free(resF);
    return rc;
}

/* ------------------------------------------------------------------------------------------ axis orders */
/* lutzip/codec/layout.py's run_counts of a mask read in np_ axis orders at once (layout.choose_axes): mask (one
 * byte a word, 0 or 1, C-contiguous) of shape shape[0 .. nd - 1] (1 <= nd <= 4); order p reads the axes
 * perms[p * nd .. p * nd + nd - 1], outermost first (numpy.transpose's axes). Each maximal zero run of length r
 * counts as r >> capshift symbols of length cap = 1 << capshift and one of length r % cap when that is not 0.
 * Order p's counts go to out[p * maxout ..] as run_counts gives them: the counts of the lengths 1 .. cap - 1 that
 * occur, by length, then the number of cap-long symbols when it is not 0; nout[p] is how many. hist: cap int64,
 * zero on entry and left zero; buf: n + 1 int64 (the runs of one order, n the mask's size). Returns 0, or
 * -1 when an order has more than maxout counts. */
EXPORT int lze_layout_runs(const uint8_t *mask, int64_t nd, const int64_t *shape, int64_t np_, const int64_t *perms,
                           int64_t capshift, int64_t *hist, int64_t *buf, int64_t maxout, int64_t *out,
                           int64_t *nout)
{
    int64_t cstride[4], n = 1, cap = (int64_t)1 << capshift;
    for (int64_t a = nd - 1; a >= 0; a--) {
        cstride[a] = n;
        n *= shape[a];
    }
    for (int64_t p = 0; p < np_; p++) {
        int64_t s[4] = {1, 1, 1, 1}, st[4] = {0, 0, 0, 0};
        int64_t m = 4;                       /* the axes from the innermost, merged where the outer one steps
                                                over the inner one's span (the same words in the same order) */
        for (int64_t j = nd - 1; j >= 0; j--) {
            int64_t a = perms[p * nd + j];
            if (shape[a] == 1)
                continue;
            if (m < 4 && cstride[a] == st[m] * s[m])
                s[m] *= shape[a];
            else {
                m--;
                s[m] = shape[a];
                st[m] = cstride[a];
            }
        }
        int64_t run = 0, k = 0;              /* the runs, branch-free: each word stores the current run at
                                                buf[k] and moves k on where a non-zero word ends one */
        for (int64_t i0 = 0; i0 < s[0]; i0++)
            for (int64_t i1 = 0; i1 < s[1]; i1++)
                for (int64_t i2 = 0; i2 < s[2]; i2++) {
                    const uint8_t *q = mask + i0 * st[0] + i1 * st[1] + i2 * st[2];
                    const int64_t s3 = s[3], st3 = st[3];
                    for (int64_t i3 = 0; i3 < s3; i3++) {
                        int64_t v = q[i3 * st3];
                        buf[k] = run;
                        k += v & (run != 0);
                        run = (run + 1) & (v - 1);
                    }
                }
        if (run)
            buf[k++] = run;
        int64_t full = 0, maxr = 0;
        for (int64_t j = 0; j < k; j++) {
            int64_t r = buf[j] & (cap - 1);
            full += buf[j] >> capshift;
            hist[r]++;
            maxr = r > maxr ? r : maxr;
        }
        hist[0] = 0;
        int64_t c = 0, *o = out + p * maxout;
        for (int64_t r = 1; r <= maxr; r++) {
            if (hist[r]) {
                if (c == maxout)
                    return -1;
                o[c++] = hist[r];
                hist[r] = 0;
            }
        }
        if (full) {
            if (c == maxout)
                return -1;
            o[c++] = full;
        }
        nout[p] = c;
    }
    return 0;
}

/* rows.find_modes of R rows of N words (wide: uint16, else uint8), bit for bit: modes[r] = 1 (MIRROR) where
 * row[m] == row[N - m] for every m = N/2 + 1 .. N - 1, else 2 (NEG_MIRROR) where row[m] == neg(row[N - m]) for every
 * such m (neg_float: the sign bit flipped unless the other bits are zero; else two's complement in the word width),
 * else 0 (PLAIN); each row's scan stops at its first mismatch. Returns the rows with a mode that hold a non-zero
 * word (rows.candidate's count). */
#define ROW_MODES(T, MASK)                                                                                         \
    do {                                                                                                           \
        const T *x = (const T *)words;                                                                             \
        for (int64_t r = 0; r < R; r++) {                                                                          \
            const T *row = x + r * N;                                                                              \
            int mode = 1;                                                                                          \
            for (int64_t m = h; m < N; m++)                                                                        \
                if (row[m] != row[N - m]) {                                                                        \
                    mode = 0;                                                                                      \
                    break;                                                                                         \
                }                                                                                                  \
            if (!mode) {                                                                                           \
                mode = 2;                                                                                          \
                for (int64_t m = h; m < N; m++) {                                                                  \
                    unsigned v = row[N - m];                                                                       \
                    unsigned ng = neg_float ? ((v & 0x7FFFu) ? (v ^ 0x8000u) : v) : ((0u - v) & (MASK));          \
                    if (row[m] != ng) {                                                                            \
                        mode = 0;                                                                                  \
                        break;                                                                                     \
                    }                                                                                              \
                }                                                                                                  \
            }                                                                                                      \
            modes[r] = (uint8_t)mode;                                                                              \
            if (mode) {                                                                                            \
                int nz = 0;                                                                                        \
                for (int64_t m = 0; m < N && !nz; m++)                                                             \
                    nz = row[m] != 0;                                                                              \
                good += nz;                                                                                        \
            }                                                                                                      \
        }                                                                                                          \
    } while (0)

EXPORT int64_t lze_row_modes(const void *words, int64_t R, int64_t N, int wide, int neg_float, uint8_t *modes)
{
    int64_t h = N / 2 + 1, good = 0;
    if (wide)
        ROW_MODES(uint16_t, 0xFFFFu);
    else
        ROW_MODES(uint8_t, 0xFFu);
    return good;
}

/* ------------------------------------------------------------------------------------------ the trie half */
/* encoder._design_tableset after the grouped designs, for effort 0 and 1 (lze_trie_part): the zero-run choices'
 * designs without LUT classes (t = 0), the screening of the sets with ZRUN classes on one trie DP, the best set's
 * LUT sizes. The same DPs, walks, designs, floats and order as the Python path; the bases of the LUT sizes' DPs
 * (encoder._trie_dp's solve.base) where the Python path has them: trees whose tables have at least scratch_min
 * entries (fastenc.dp_tables' work arrays). Work arrays: this thread's arena 20 .. 62 (the slots 20 .. 34 and 35 .. 49, the LUT sizes 50 .. 58,
 * the walks 60 .. 62). */
typedef struct {
    double bits;                        /* the best design's total bits so far (payload + table) */
    int64_t nc, n3, improved, cap3;
    int64_t cls3[48], lens[16];
    uint16_t *lut3;                     /* room for cap3 entries */
    double *trace;                      /* (tests) every design's total bits in turn, room for cap_trace */
    int64_t ntrace, cap_trace;
} tp_best;

typedef struct {
    int64_t W, L, M, head_bits, lut3w, ref_min, scratch_min, max_lut_k;
    double class_bits, min_gain, lut3_bits;
    int64_t nw, off, nr, hist0, n_stripes;
    const int64_t *with0, *cum, *runs;
    tp_best *best;
} tp_ctx;

typedef struct {                        /* encoder._ZDesign */
    int64_t nz, zk[16];
    double zF[16];
    int64_t nv, hsum, Mv, R;
    const int64_t *vals, *cnt;
    const double *h, *hl;
    double N, zcost;
} tp_zd;

typedef struct {                        /* a t = 0 trie DP: the tree, round 1's tables, round 2's residual tables */
    int ai;                             /* its arena entries ai .. ai + 14 */
    int64_t n, M;
    int64_t *keys, *left, *right;
    double *K, *F, *nores, *res, *res2;
    int64_t *chn, *chr, *chr2, *sat1, *sat2;
    int has_r2, base_ok;
    double c_res2;
} tp_slot;

static void tp_consider(tp_best *b, double total, int64_t nc, const int64_t *cls3, const int64_t *lens, int64_t n3,
                        const uint16_t *lut3, double *found)
{
    if (total < *found)
        *found = total;
    if (b->trace && b->ntrace < b->cap_trace)
        b->trace[b->ntrace] = total;
    b->ntrace++;
    if (total < b->bits && n3 <= b->cap3) {
        b->bits = total;
        b->nc = nc;
        b->n3 = n3;
        b->improved = 1;
        memcpy(b->cls3, cls3, (size_t)nc * 3 * sizeof(int64_t));
        memcpy(b->lens, lens, (size_t)nc * sizeof(int64_t));
        if (n3)
            memcpy(b->lut3, lut3, (size_t)n3 * sizeof(uint16_t));
    }
}

/* the trie of zd's values into s (lze_trie_tree_sub); 0, -1 without memory, -3 over capacity */
static int tp_tree(const tp_ctx *c, tp_slot *s, const tp_zd *zd)
{
    int64_t cap = (c->W + 1) * zd->nv + 1;
    size_t b8 = (size_t)cap * 8;
    s->keys = arena(s->ai, b8);
    s->K = arena(s->ai + 1, b8);
    s->F = arena(s->ai + 2, b8);
    s->left = arena(s->ai + 3, b8);
    s->right = arena(s->ai + 4, b8);
    int64_t *lo = arena(s->ai + 5, b8), *hi = arena(s->ai + 6, b8);
    if (!s->keys || !s->K || !s->F || !s->left || !s->right || !lo || !hi)
        return -1;
    int64_t n = lze_trie_tree_sub(zd->nv, zd->vals, zd->h, zd->hl, NULL, c->W, c->min_gain, cap, s->keys, s->K,
                                  s->F, s->left, s->right, lo, hi);
    if (n == -1)
        return -3;
    if (n < 0)
        return -1;
    s->n = n;
    return 0;
}

/* round 1's (r2 0) or round 2's residual tables of s for budget M */
static int tp_tables(tp_slot *s, int64_t M, int r2)
{
    size_t tb = (size_t)s->n * (M + 1) * 8, nb = (size_t)s->n * 8;
    if (!r2) {
        s->nores = arena(s->ai + 7, tb);
        s->res = arena(s->ai + 8, tb);
        s->chn = arena(s->ai + 9, tb);
        s->chr = arena(s->ai + 10, tb);
        s->sat1 = arena(s->ai + 11, nb);
        return s->nores && s->res && s->chn && s->chr && s->sat1 ? 0 : -1;
    }
    s->res2 = arena(s->ai + 12, tb);
    s->chr2 = arena(s->ai + 13, tb);
    s->sat2 = arena(s->ai + 14, nb);
    return s->res2 && s->chr2 && s->sat2 ? 0 : -1;
}

/* encoder._design of zd's RANGE classes (rbase, rk, rF: nrg of them), the residual (fres) and ZRUN classes, and
 * its bits (lze_design_bits), considered; lens: its code lengths. 0, -1 without memory, -2 where the Python path
 * decides. */
static int tp_design_ranges(const tp_ctx *c, const tp_zd *zd, int64_t nrg, const int64_t *rbase, const int64_t *rk,
                            const double *rF, double fres, double *found, int64_t *lens)
{
    int64_t cls3[48];
    double fr[16];
    if (nrg + (fres > 0) + zd->nz > 16)
        return -2;
    int64_t j = 0;
    for (int64_t q = 0; q < nrg; q++) {
        cls3[3 * j] = 1;
        cls3[3 * j + 1] = rk[q];
        cls3[3 * j + 2] = rbase[q];
        fr[j++] = rF[q];
    }
    int64_t nc = design_tail(cls3, fr, j, c->W, fres, zd->nz, zd->zk, zd->zF);
    double bits = lze_design_bits(nc, cls3, fr, c->L, lens, NULL, c->nw, c->with0, c->off, c->cum, c->nr, c->runs,
                                  c->hist0, c->n_stripes);
    if (bits == -2.0)
        return -2;
    if (bits < 0)
        return -1;
    double total = (bits >= INF ? INFINITY : bits) + (double)(c->head_bits + (int64_t)c->class_bits * nc);
    tp_consider(c->best, total, nc, cls3, lens, 0, NULL, found);
    return 0;
}

/* encoder._ZDesign.designs(0): the least total bits found in *found. screen: s holds the screening's DP (round 1,
 * budget s->M >= Mv) of zd's tree. */
static int tp_designs0(const tp_ctx *c, const tp_zd *zd, tp_slot *s, int screen, double *found)
{
    int64_t lens[16];
    *found = INFINITY;
    s->has_r2 = 0;
    if (zd->hsum == 0)
        return tp_design_ranges(c, zd, 0, NULL, NULL, NULL, 0.0, found, lens);
    int64_t Mv = zd->Mv, Mdp;
    if (screen) {
        Mdp = s->M;
    } else {
        int r = tp_tree(c, s, zd);
        if (r)
            return r;
        Mdp = Mv;
        if (tp_tables(s, Mdp, 0))
            return -1;
        lze_trie_solve(s->n, s->F, s->K, s->left, s->right, zd->N, (double)c->W, 12.0, Mdp, c->class_bits, s->nores,
                       s->res, s->chn, s->chr, 0, s->sat1);
        s->M = Mdp;
        s->base_ok = s->n * (Mdp + 1) >= c->scratch_min;
    }
    int64_t *rbase = arena(60, (size_t)s->n * 8), *rk = arena(61, (size_t)s->n * 8);
    double *rF = arena(62, (size_t)s->n * 8);
    if (!rbase || !rk || !rF)
        return -1;
    double c_res = 12.0;
    for (int it = 0; it < 2; it++) {
        double *rr = s->res;
        int64_t *chr = s->chr;
        if (it == 1) {
            if (tp_tables(s, Mdp, 1))
                return -1;
            lze_trie_solve(s->n, s->F, s->K, s->left, s->right, zd->N, (double)c->W, c_res, Mdp, c->class_bits,
                           s->nores, s->res2, s->chn, s->chr2, 1, s->sat2);
            s->has_r2 = 1;
            s->c_res2 = c_res;
            rr = s->res2;
            chr = s->chr2;
        }
        /* encoder._split_cands with the LUT row (0, INF, ...): m1 = 0 only; by cost, without the residual first */
        double cc[2];
        int64_t cm[2];
        int cr[2], ncand = 0;
        double v = s->nores[Mv];
        if (v < INF) {
            cc[ncand] = 0.0 + v;
            cm[ncand] = Mv;
            cr[ncand++] = 0;
        }
        if (Mv >= 1 && rr[Mv - 1] < INF) {
            cc[ncand] = 0.0 + rr[Mv - 1];
            cm[ncand] = Mv - 1;
            cr[ncand++] = 1;
        }
        if (!ncand)
            return 0;
        if (ncand == 2 && cc[1] < cc[0]) {
            cm[0] = Mv - 1;
            cr[0] = 1;
            cm[1] = Mv;
            cr[1] = 0;
        }
        int have_new = 0;
        double new_c = 0.0;
        for (int q = 0; q < ncand; q++) {
            double fres = 0.0;
            int64_t nrg = lze_trie_walk_ref(s->n, Mdp, cr[q] ? chr : s->chn, s->keys, s->K, s->F, s->left, s->right,
                                            cm[q], rbase, rk, rF, &fres, NULL, 0, NULL);
            if (nrg < 0)
                return -1;
            int r = tp_design_ranges(c, zd, nrg, rbase, rk, rF, fres, found, lens);
            if (r)
                return r;
            if (fres > 0 && !have_new) {
                have_new = 1;
                new_c = (double)lens[nrg];
            }
        }
        if (!have_new || fabs(new_c - c_res) < 0.5)
            return 0;
        c_res = new_c;
    }
    return 0;
}

typedef struct {
    int64_t c, i;
} tp_ci;

static int tp_ci_cmp(const void *pa, const void *pb)    /* count falling, then index: numpy's stable argsort */
{
    const tp_ci *a = pa, *b = pb;
    if (a->c != b->c)
        return a->c > b->c ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

typedef struct {
    double lb;
    int64_t t;
} tp_lbt;

static int tp_lbt_cmp(const void *pa, const void *pb)  /* Python's order of (lb, t) tuples */
{
    const tp_lbt *a = pa, *b = pb;
    if (a->lb != b->lb)
        return a->lb < b->lb ? -1 : 1;
    return a->t < b->t ? -1 : (a->t > b->t);
}

/* the LUT sizes of zd at effort 1 (encoder._design_tableset's last loop for one set): _lut_part, lower_bound, the
 * picks and designs(t) by lze_design_lut with s's bases. */
static int tp_lut_sizes(const tp_ctx *c, const tp_zd *zd, tp_slot *s)
{
    int64_t nv = zd->nv, R = zd->R, Mv = zd->Mv, W1 = Mv + 1;
    tp_ci *ci = arena(50, (size_t)(nv + 1) * sizeof(tp_ci));
    int64_t *pos = arena(51, (size_t)(nv + 1) * 8), *order = arena(52, (size_t)(R + 1) * 8),
            *hord = arena(53, (size_t)(R + 1) * 8);
    double *freq = arena(54, (size_t)(R + 1) * 8), *tail = arena(55, (size_t)(nv + 1) * 8);
    double *lbest = arena(56, (size_t)(R + 1) * W1 * 8);
    int64_t *lch = arena(57, (size_t)(R + 1) * W1 * 8);
    if (!ci || !pos || !order || !hord || !freq || !tail || !lbest || !lch)
        return -1;
    for (int64_t i = 0; i < nv; i++) {
        ci[i].c = zd->cnt[i];
        ci[i].i = i;
    }
    qsort(ci, (size_t)nv, sizeof(tp_ci), tp_ci_cmp);
    for (int64_t i = 0; i < nv; i++)
        pos[i] = ci[i].i;
    for (int64_t i = 0; i < R; i++) {
        order[i] = zd->vals[pos[i]];
        hord[i] = zd->cnt[pos[i]];
        freq[i] = (double)hord[i];
    }
    lze_lut_dp(R, freq, zd->N, Mv, c->max_lut_k, c->class_bits, c->lut3_bits, lbest, lch);
    /* the entropy tails, summed from the end (numpy's cumsum of the reversed terms) */
    double acc = 0.0;
    tail[nv] = 0.0;
    for (int64_t i = nv - 1; i >= 0; i--) {
        double hs = (double)ci[i].c;
        double x = hs * log2(zd->N / hs);
        acc = i == nv - 1 ? x : acc + x;
        tail[i] = acc;
    }
    /* t_candidates(1): the powers of two up to R and R; their lower bounds, sorted */
    tp_lbt cand[16];
    int64_t nt = 0;
    for (int a = 0; a < 13; a++)
        if (((int64_t)1 << a) <= R && ((int64_t)1 << a) != R)
            cand[nt++].t = (int64_t)1 << a;
    cand[nt++].t = R;
    for (int64_t q = 0; q < nt; q++) {
        int64_t t = cand[q].t;
        double m = lbest[t * W1];
        for (int64_t j = 1; j < W1; j++)
            if (lbest[t * W1 + j] < m)
                m = lbest[t * W1 + j];
        cand[q].lb = m + tail[t] + (double)c->head_bits + zd->zcost;
    }
    qsort(cand, (size_t)nt, sizeof(tp_lbt), tp_lbt_cmp);
    /* the picks: the 4 best, then (if not among them) the size R and the median */
    tp_lbt picks[8];
    int64_t np_ = nt < 4 ? nt : 4;
    for (int64_t q = 0; q < np_; q++)
        picks[q] = cand[q];
    int64_t n0 = np_;
    tp_lbt extra[2];
    int64_t ne = 0;
    for (int64_t q = 0; q < nt; q++)
        if (cand[q].t == R)
            extra[ne++] = cand[q];
    extra[ne++] = cand[nt / 2];
    for (int64_t e = 0; e < ne; e++) {
        int in = 0;
        for (int64_t q = 0; q < n0; q++)
            in |= picks[q].t == extra[e].t && picks[q].lb == extra[e].lb;
        if (!in)
            picks[np_++] = extra[e];
    }
    /* the bases: round 1's and round 2's DP of t = 0 */
    double bcres[2];
    int64_t bnn[2], bM[2], nbase = 0, has_b1 = 0;
    uintptr_t bptr[16];
    if (s->base_ok) {
        has_b1 = 1;
        bcres[0] = 12.0;
        bnn[0] = s->n;
        bM[0] = s->M;
        const void *p[8] = {s->F, s->left, s->right, s->nores, s->res, s->chn, s->chr, s->sat1};
        for (int j = 0; j < 8; j++)
            bptr[j] = (uintptr_t)p[j];
        nbase = 1;
        if (s->has_r2) {
            bcres[1] = s->c_res2;
            bnn[1] = s->n;
            bM[1] = s->M;
            const void *p2[8] = {s->F, s->left, s->right, s->nores, s->res2, s->chn, s->chr2, s->sat2};
            for (int j = 0; j < 8; j++)
                bptr[8 + j] = (uintptr_t)p2[j];
            nbase = 2;
        }
    }
    uint16_t *ol3 = arena(58, (size_t)(2 * R + 2) * sizeof(uint16_t));
    if (!ol3)
        return -1;
    for (int64_t q = 0; q < np_; q++) {
        int64_t t = picks[q].t;
        if (picks[q].lb >= c->best->bits)
            continue;
        int64_t onc[2], ocls[96], olens[32], on3[2];
        double obits[2], found = INFINITY;
        int64_t r = lze_design_lut(nv, zd->vals, zd->h, zd->hl, pos, t, c->W, c->min_gain, zd->N, Mv, c->class_bits,
                                   c->L, lbest + t * W1, lch, order, hord, zd->nz, zd->zk, zd->zF, c->ref_min, has_b1,
                                   nbase, bcres, bnn, bM, bptr, c->nw, c->with0, c->off, c->cum, c->nr, c->runs,
                                   c->hist0, c->n_stripes, onc, ocls, olens, on3, ol3, obits);
        if (r < 0)
            return (int)r;
        for (int64_t d = 0; d < r; d++) {
            double total = (obits[d] >= INF ? INFINITY : obits[d]) +
                           (double)(c->head_bits + (int64_t)c->class_bits * onc[d] + c->lut3w * on3[d]);
            tp_consider(c->best, total, onc[d], ocls + 48 * d, olens + 16 * d, on3[d], ol3 + t * d, &found);
        }
    }
    return 0;
}

/* encoder._design_tableset's trie half at effort 0 or 1 in one call. The present values vals (nv, sorted) with
 * their counts cnt, h = cnt as doubles and hl = h log2 h (numpy's, elementwise); the zero-run candidates are
 * encoder._zrun_candidates_iter's (lze_zrun_candidates with per_size, index lengths up to max_zrun_k) over the zero-run
 * histogram runs of the statistics; best_bits: the best design's total bits so far. Statistics as lze_exact_bits'. The best design when one is
 * smaller than best_bits: *out_nc classes (rows kind, k, param in out_cls), code lengths out_lens, *out_n3 LUT3
 * entries (out_lut3, room for cap3), total bits *out_bits. trace (tests; else NULL): every design's total bits in the
 * order the Python path considers them, room for *ntrace on entry, how many there were on return. Returns 1 (a smaller design), 0 (none), -1 without
 * memory, -2 where the Python path decides, -3 a trie over capacity. */
EXPORT int64_t lze_trie_part(int64_t W, int64_t L, int64_t M, int64_t lut3_max, int64_t effort, int64_t max_lut_k,
                             double class_bits, double lut3_bits, int64_t head_bits, int64_t lut3w, int64_t ref_min,
                             int64_t scratch_min, double min_gain, int64_t nv, const int64_t *vals, const int64_t *cnt,
                             const double *h, const double *hl, int64_t n_words, int64_t max_zrun_k,
                             int64_t per_size, double best_bits, int64_t nw,
                             const int64_t *with0, int64_t off, const int64_t *cum, int64_t nr, const int64_t *runs,
                             int64_t hist0, int64_t n_stripes, int64_t cap3, int64_t *out_nc, int64_t *out_cls,
                             int64_t *out_lens, int64_t *out_n3, uint16_t *out_lut3, double *out_bits,
                             double *trace, int64_t *ntrace)
{
    if (effort > 1 || M > 16 || per_size < 0 || per_size > 2)
        return -2;
    /* the zero-run candidates (encoder._zrun_candidates_iter, those of fewer than M classes; effort 0: the first
     * two) and their run symbol counts (encoder._zrun_symbols) */
    int64_t zoff[17], zk[16 * 16], zc[16 * 16], nzc = 1;
    zoff[0] = zoff[1] = 0;
    if (hist0 != 0 && !((double)hist0 < 0.01 * (double)n_words)) {
        int64_t last = 0;
        for (int64_t r = 0; r < nr; r++)
            if (runs[r])
                last = r;
        int64_t maxk = bitlen(last);
        if (maxk > max_zrun_k)
            maxk = max_zrun_k;
        uint32_t masks[16];
        int64_t nm = lze_zrun_candidates(nr, runs, maxk, n_words - hist0, per_size, effort <= 0 ? 1 : -1, class_bits,
                                         masks);
        if (nm < 0)
            return -1;
        if (effort <= 0 && nm == 1 && __builtin_popcount(masks[0]) >= M)
            nm = lze_zrun_candidates(nr, runs, maxk, n_words - hist0, per_size, -1, class_bits, masks);
        if (nm < 0)
            return -1;
        for (int64_t q = 0; q < nm && !(effort <= 0 && nzc == 2); q++) {
            int64_t nk = __builtin_popcount(masks[q]), desc[16], cd[16];
            if (nk >= M)
                continue;
            if (nk > 15)
                return -2;
            int64_t j = 0;
            for (int k = 31; k >= 0; k--)
                if (masks[q] >> k & 1)
                    desc[j++] = k;
            lze_zrun_symbols(nr, runs, nk, desc, cd);
            for (j = 0; j < nk; j++) {              /* ascending index lengths, as the sets' tuples */
                zk[zoff[nzc] + j] = desc[nk - 1 - j];
                zc[zoff[nzc] + j] = cd[nk - 1 - j];
            }
            zoff[nzc + 1] = zoff[nzc] + nk;
            nzc++;
        }
    }
    tp_best best = {.bits = best_bits, .nc = 0, .n3 = 0, .improved = 0, .cap3 = cap3, .lut3 = out_lut3,
                    .trace = trace, .ntrace = 0, .cap_trace = trace ? *ntrace : 0};
    tp_ctx c = {.W = W, .L = L, .M = M, .head_bits = head_bits, .lut3w = lut3w, .ref_min = ref_min,
                .scratch_min = scratch_min, .max_lut_k = max_lut_k, .class_bits = class_bits, .min_gain = min_gain,
                .lut3_bits = lut3_bits, .nw = nw, .off = off, .nr = nr, .hist0 = hist0, .n_stripes = n_stripes,
                .with0 = with0, .cum = cum, .runs = runs, .best = &best};
    tp_zd zds[16];
    int64_t z0 = nv && vals[0] == 0;           /* the values without zero start here */
    for (int64_t s = 0; s < nzc; s++) {
        tp_zd *zd = &zds[s];
        int64_t nz = zoff[s + 1] - zoff[s];
        if (nz > 15 || (s > 0 && nz < 1) || nz >= M)
            return -2;
        zd->nz = nz;
        int64_t zsum = 0;
        for (int64_t q = 0; q < nz; q++) {
            zd->zk[q] = zk[zoff[s] + q];
            zd->zF[q] = (double)zc[zoff[s] + q];
            zsum += zc[zoff[s] + q];
        }
        int64_t d = nz ? z0 : 0;
        zd->vals = vals + d;
        zd->cnt = cnt + d;
        zd->h = h + d;
        zd->hl = hl + d;
        zd->nv = nv - d;
        zd->hsum = nz ? n_words - hist0 : n_words;
        zd->N = (double)(zd->hsum + zsum);
        double zc_ = 0.0;
        for (int64_t q = 0; q < nz; q++) {
            double F = zd->zF[q];
            zc_ += F != 0.0 ? F * ((double)zd->zk[q] + log2(zd->N / F)) : 0.0;
        }
        zd->zcost = zc_ + class_bits * (double)nz;
        zd->Mv = M - nz;
        zd->R = zd->nv < lut3_max ? zd->nv : lut3_max;
    }
    tp_slot sA = {.ai = 20}, sB = {.ai = 35};
    double scores[16];
    int rc = tp_designs0(&c, &zds[0], &sA, 0, &scores[0]);
    if (rc)
        return rc;
    if (nzc > 1) {
        /* the screening: one trie DP of the values without zero (budget M - 1, c_res 12) for every set */
        tp_zd *ref = &zds[1];
        int has = ref->nv > 0;
        if (has) {
            rc = tp_tree(&c, &sB, ref);
            if (rc)
                return rc;
            if (tp_tables(&sB, M - 1, 0))
                return -1;
            lze_trie_solve(sB.n, sB.F, sB.K, sB.left, sB.right, ref->N, (double)W, 12.0, M - 1, class_bits, sB.nores,
                           sB.res, sB.chn, sB.chr, 0, sB.sat1);
            sB.M = M - 1;
            sB.base_ok = sB.n * M >= scratch_min;
        }
        int64_t *rbase = arena(60, (size_t)(has ? sB.n : 1) * 8), *rk = arena(61, (size_t)(has ? sB.n : 1) * 8);
        double *rF = arena(62, (size_t)(has ? sB.n : 1) * 8);
        if (!rbase || !rk || !rF)
            return -1;
        int64_t lens[16];
        for (int64_t s = 1; s < nzc; s++) {
            tp_zd *zd = &zds[s];
            scores[s] = INFINITY;
            for (int residual = 0; residual < 2; residual++) {
                int64_t mm = zd->Mv - residual, nrg = 0;
                double fres = 0.0;
                if (!has) {
                    if (residual)
                        continue;
                } else {
                    if (mm < 0)
                        continue;
                    double cost = (residual ? sB.res : sB.nores)[mm];
                    if (cost >= INF)
                        continue;
                    nrg = lze_trie_walk_ref(sB.n, sB.M, residual ? sB.chr : sB.chn, sB.keys, sB.K, sB.F, sB.left,
                                            sB.right, mm, rbase, rk, rF, &fres, NULL, 0, NULL);
                    if (nrg < 0)
                        return -1;
                }
                rc = tp_design_ranges(&c, zd, nrg, rbase, rk, rF, fres, &scores[s], lens);
                if (rc)
                    return rc;
            }
        }
    }
    /* the set of the least score (the first of equal ones) */
    int64_t nb = 0;
    for (int64_t s = 1; s < nzc; s++)
        if (scores[s] < scores[nb])
            nb = s;
    tp_slot *sl = nb == 0 ? &sA : &sB;
    if (nb > 0) {
        double found;
        rc = tp_designs0(&c, &zds[nb], sl, nb == 1 && zds[1].nv > 0, &found);
        if (rc)
            return rc;
    }
    if (effort >= 1 && zds[nb].R > 0) {
        rc = tp_lut_sizes(&c, &zds[nb], sl);
        if (rc)
            return rc;
    }
    if (trace)
        *ntrace = best.ntrace;
    if (!best.improved)
        return 0;
    *out_nc = best.nc;
    memcpy(out_cls, best.cls3, (size_t)best.nc * 3 * sizeof(int64_t));
    memcpy(out_lens, best.lens, (size_t)best.nc * sizeof(int64_t));
    *out_n3 = best.n3;
    *out_bits = best.bits;
    return 1;
}
