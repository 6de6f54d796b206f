/* The two-code-table encoder's kernels in C (format version 5, lutzip/codec/states.py).
 *
 * Each function computes what the Python / numba code of the same name in lutzip/codec/states.py and
 * lutzip/codec/_statesnumba.py computes, with the same tie-breaking, so both write the same bytes:
 *   lzs_lengths   states._lengths (huffman.limited_code_lengths: package-merge, leaves first on equal weights)
 *   lzs_design    the follow-set search of states.design (memoised costs, the same first minimum)
 *   lzs_walk      _statesnumba._walk_kernel (mode 0: class pairs; 1: the symbols with two-state codes;
 *                 2: only the stripe words mode 1 would write)
 *   lzs_literals  states._literals
 *   lzs_run_dp    _statesnumba._run_dp
 *   lzs_encode2   _statesnumba._encode2_kernel (out NULL: only the stripe words and the pairs; pairs NULL:
 *                 the stripes only)
 *   lzs_tokstats, lzs_tokeval   the token statistics of states_plan and a two-state coding's bits from them
 * Loaded with ctypes by lutzip/codec/states_c.py; every array is C-contiguous int64 unless said otherwise.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define NC 16                      /* MAX_CLASSES */

/* ------------------------------------------------------------------------------------ package-merge */
typedef struct {
    double w;
    uint8_t c[NC];                  /* how often each symbol is in the item */
} item_t;

/* Code lengths (at most L bits) of n <= 16 weights w (> 0: used, else no code): 0 used -> all 0, 1 used -> 1,
 * else package-merge as huffman.limited_code_lengths (leaves sorted stably by weight; leaves before packages
 * of the same weight). Returns -1 when more than 2^L symbols are used. */
static int pm_lengths(int n, const double *w, int L, int64_t *len)
{
    int used[NC], nu = 0;
    for (int i = 0; i < n; i++) {
        len[i] = 0;
        if (w[i] > 0.0)
            used[nu++] = i;
    }
    if (nu == 0)
        return 0;
    if (nu == 1) {
        len[used[0]] = 1;
        return 0;
    }
    if (L < 31 && nu > (1 << L))
        return -1;
    item_t leaves[NC], pk[2 * NC], nx[2 * NC], mg[NC];
    for (int a = 0; a < nu; a++) {          /* stable insertion sort of the used symbols by weight */
        int s = used[a], b = a - 1;
        while (b >= 0 && leaves[b].w > w[s]) {
            leaves[b + 1] = leaves[b];
            b--;
        }
        memset(&leaves[b + 1], 0, sizeof(item_t));
        leaves[b + 1].w = w[s];
        leaves[b + 1].c[s] = 1;
    }
    int np_ = nu;
    memcpy(pk, leaves, nu * sizeof(item_t));
    for (int it = 0; it < L - 1; it++) {
        int m = np_ / 2;
        for (int j = 0; j < m; j++) {
            mg[j].w = pk[2 * j].w + pk[2 * j + 1].w;
            for (int s = 0; s < NC; s++)
                mg[j].c[s] = (uint8_t)(pk[2 * j].c[s] + pk[2 * j + 1].c[s]);
        }
        int a = 0, b = 0;
        for (int t = 0; t < nu + m; t++) {
            if (b >= m || (a < nu && leaves[a].w <= mg[b].w))
                nx[t] = leaves[a++];
            else
                nx[t] = mg[b++];
        }
        np_ = nu + m;
        memcpy(pk, nx, np_ * sizeof(item_t));
    }
    for (int t = 0; t < 2 * nu - 2; t++)
        for (int s = 0; s < n; s++)
            len[s] += pk[t].c[s];
    return 0;
}

/* states._lengths of counts: every != 0 gives a class of count <= 0 the weight 1e-9 (a code). */
static int lengths_of(int64_t n, const double *counts, int64_t L, int every, int64_t *len)
{
    double w[NC] = {0};
    if (n < 0 || n > NC)
        return -2;
    for (int i = 0; i < n; i++)
        w[i] = counts[i] > 0 ? counts[i] : (every ? 1e-9 : 0.0);
    return pm_lengths((int)n, w, (int)L, len);
}

EXPORT int lzs_lengths(int64_t n, const double *counts, int64_t L, int every, int64_t *len)
{
    return lengths_of(n, counts, L, every, len);
}

/* ------------------------------------------------------------------------------------ follow-set search */
typedef struct {
    int F;
    int64_t bits;
} memo_t;

typedef struct {
    const int64_t *pairs;           /* 17 x 16 */
    int n, L, cnt, cap, err;
    memo_t *memo;
} design_t;

/* states._cost: bits of all class codes with follow set F; la / lb (n each) when not NULL */
static int64_t cost_of(design_t *d, int F, int64_t *la_out, int64_t *lb_out)
{
    int64_t ca[NC] = {0}, cb[NC] = {0}, la[NC], lb[NC];
    int n = d->n, anyb = 0;
    for (int r = 0; r <= NC; r++) {
        int inF = r < NC && ((F >> r) & 1);
        const int64_t *row = d->pairs + (int64_t)r * NC;
        for (int j = 0; j < n; j++) {
            if (inF)
                cb[j] += row[j];
            else
                ca[j] += row[j];
        }
    }
    for (int j = 0; j < n; j++)
        anyb |= cb[j] != 0;
    double fa[NC] = {0}, fb[NC] = {0};
    for (int j = 0; j < n; j++) {
        fa[j] = (double)ca[j];
        fb[j] = (double)cb[j];
    }
    if (lengths_of(n, fa, d->L, 1, la))
        d->err = 1;
    if (anyb) {
        if (lengths_of(n, fb, d->L, 0, lb))
            d->err = 1;
    } else
        memset(lb, 0, sizeof(lb));
    int64_t bits = 0;
    for (int j = 0; j < n; j++)
        bits += ca[j] * la[j] + cb[j] * lb[j];
    if (la_out) {
        memcpy(la_out, la, n * sizeof(int64_t));
        memcpy(lb_out, lb, n * sizeof(int64_t));
    }
    return bits;
}

static int64_t cost(design_t *d, int F)
{
    for (int i = 0; i < d->cnt; i++)
        if (d->memo[i].F == F)
            return d->memo[i].bits;
    int64_t b = cost_of(d, F, NULL, NULL);
    if (d->cnt == d->cap) {
        int cap = d->cap ? 2 * d->cap : 64;
        memo_t *m = realloc(d->memo, cap * sizeof(memo_t));
        if (!m) {
            d->err = 2;
            return b;
        }
        d->memo = m;
        d->cap = cap;
    }
    d->memo[d->cnt].F = F;
    d->memo[d->cnt++].bits = b;
    return b;
}

/* The follow set states.design chooses for pairs (17 x 16), n classes, L, the ZRUN classes zr: *F_out (0: none),
 * its bits and code lengths. Returns 0, or -1 (package-merge refused: more classes than codes of L bits), -2
 * (no memory). */
EXPORT int lzs_design(const int64_t *pairs, int64_t n, int64_t L, int64_t zr, int greedy, int64_t max_steps,
                      int64_t *F_out, int64_t *bits_out, int64_t *la, int64_t *lb)
{
    design_t d = {pairs, (int)n, (int)L, 0, 0, 0, NULL};
    int best = 0;
    *F_out = 0;
    if (n < 1 || n > NC)
        return -1;
    if (zr)
        best = (int)zr;
    if (greedy) {
        int F;
        if (zr)
            F = (int)zr;
        else {
            F = 1;
            int64_t bc = cost(&d, 1);
            for (int j = 1; j < n; j++) {
                int64_t c = cost(&d, 1 << j);
                if (c < bc) {
                    bc = c;
                    F = 1 << j;
                }
            }
        }
        for (int64_t step = 0; step < max_steps; step++) {
            int nb = F, have = 0;
            int64_t bc = 0;
            for (int j = 0; j < n; j++) {
                int G = F ^ (1 << j);
                if (!G)
                    continue;
                int64_t c = cost(&d, G);
                if (!have || c < bc) {
                    bc = c;
                    nb = G;
                    have = 1;
                }
            }
            if (cost(&d, nb) >= cost(&d, F))
                break;
            F = nb;
        }
        if (!best || cost(&d, F) < cost(&d, best))
            best = F;
    }
    int rc = 0;
    if (best) {
        *F_out = best;
        *bits_out = cost_of(&d, best, la, lb);
    }
    if (d.err)
        rc = d.err == 2 ? -2 : -1;
    free(d.memo);
    return rc;
}

/* ------------------------------------------------------------------------------------ stripe walk */
/* Append one symbol (a clen-bit code, then k index bits) to the accumulator; a full word goes to out[*p]
 * (out NULL: only counted). */
#define PUT_SYMBOL(out, p, oacc, nacc, code, clen, k, idx)                                         \
    do {                                                                                           \
        int ln_ = (int)(clen) + (int)(k);                                                          \
        oacc = (oacc << ln_) | ((uint64_t)(code) << (k)) | (uint64_t)(idx);                       \
        nacc += ln_;                                                                               \
        if (nacc >= 32) {                                                                          \
            nacc -= 32;                                                                            \
            if (out)                                                                               \
                out[p] = (uint32_t)(oacc >> nacc);                                                 \
            p++;                                                                                   \
            oacc &= (((uint64_t)1) << nacc) - 1;                                                   \
        }                                                                                          \
    } while (0)

/* _walk_kernel over one-table stripes (trusted: written by the encoder). mode 0: pairs[prev * 16 + cls] += 1
 * (prev 16: the stripe start); mode 1: the symbols with codes2 / lens2 (by state * 16 + class) into out,
 * out_sw[s] the words of stripe s; mode 2: as 1 without writing out; mode 3: as 0 with the pairs of stripe s
 * in pairs[s * 17 * 16 ...]. Returns the words written (mode 1, 2). words[n_words] and words[n_words + 1] must
 * exist (zeros: the caller pads).
 *
 * A symbol is read from a 64-bit window at its bit position (two words; the code is at most 32 bits); the bits
 * past the stripe's end that the window may hold are the next stripe's, where the numba kernel has zeros: a
 * valid code's LUT1 entry is the same for every bit after it (the whole range of its prefix is filled). */
/* one symbol of a counting walk: bit position bp, words done o, previous class prev, pairs pr (scalars, so that
 * the stores into pr cannot alias them) */
#define WALK_COUNT(bp, o, prev, pr)                                                                    \
    do {                                                                                               \
        uint64_t win_ = window_at(words, n_words, bp);                                                 \
        int64_t e_ = lut1[win_ >> sh];                                                                 \
        int cls_ = (int)((e_ >> 10) & 15), c_ = (int)((e_ >> 6) & 15);                                 \
        uint64_t idx_ = ((win_ << c_) >> 1) >> (63 - kk[cls_]);                                        \
        bp += e_ & 63;                                                                                 \
        o += 1 + (int64_t)(idx_ & zmask[cls_]);                                                        \
        pr[prev * NC + cls_] += 1;                                                                     \
        prev = cls_;                                                                                   \
    } while (0)

static inline uint64_t window_at(const uint32_t *words, int64_t n_words, int64_t bitpos)
{
    int64_t q = bitpos >> 5;        /* words has two more (zero) words after its n_words: no bounds checks */
    (void)n_words;
    return (((uint64_t)words[q] << 32) | words[q + 1]) << (bitpos & 31);
}

EXPORT int64_t lzs_walk(const uint32_t *words, int64_t n_words, const int64_t *starts, const int64_t *nwords,
                        int64_t n_stripes, const int64_t *lut1, int64_t L, const int64_t *kinds, const int64_t *ks,
                        int64_t mode, const int64_t *nxt, const int64_t *codes2, const int64_t *lens2, uint32_t *out,
                        uint32_t *out_sw, int64_t *pairs)
{
    (void)nwords;                   /* the stripes end where their symbols do */
    int64_t p = 0;
    uint32_t *o_ = mode == 1 ? out : NULL;
    int count = mode == 0 || mode == 3;
    uint64_t zmask[NC], kk[NC];
    for (int j = 0; j < NC; j++) {
        zmask[j] = kinds[j] == 2 ? ~(uint64_t)0 : 0;
        kk[j] = (uint64_t)ks[j];
    }
    const int sh = (int)(64 - L);
    if (mode == 3 && n_stripes >= 2) {
        /* per-stripe pairs: two stripes at a time (the bit position -> window -> LUT1 chains of the two stripes
         * overlap), stripe a of the first half with stripe a + half; the stripe left over below */
        int64_t half = n_stripes / 2;
        for (int64_t a = 0; a < half; a++) {
            int64_t *pr0 = pairs + a * (NC + 1) * NC, *pr1 = pairs + (a + half) * (NC + 1) * NC;
            int64_t n0 = (int64_t)(words[starts[a]] & 0xFFFF) + 1, n1 = (int64_t)(words[starts[a + half]] & 0xFFFF) + 1;
            int64_t bp0 = (starts[a] + 1) * 32, bp1 = (starts[a + half] + 1) * 32;
            int64_t o0 = 0, o1 = 0, prev0 = 16, prev1 = 16;
            while (o0 < n0 && o1 < n1) {
                WALK_COUNT(bp0, o0, prev0, pr0);
                WALK_COUNT(bp1, o1, prev1, pr1);
            }
            while (o0 < n0)
                WALK_COUNT(bp0, o0, prev0, pr0);
            while (o1 < n1)
                WALK_COUNT(bp1, o1, prev1, pr1);
        }
        int64_t done = 2 * half;
        starts += done;
        pairs += done * (NC + 1) * NC;
        n_stripes -= done;
    }
    for (int64_t s = 0; s < n_stripes; s++) {
        int64_t *pr = mode == 3 ? pairs + s * (NC + 1) * NC : pairs;
        int64_t base = starts[s];
        uint32_t hdr = words[base];
        int64_t n_exp = (int64_t)(hdr & 0xFFFF) + 1;
        int64_t start = p, bp = (base + 1) * 32;
        int64_t o = 0;
        int64_t prev = 16;
        if (count) {
            while (o < n_exp) {
                uint64_t win = window_at(words, n_words, bp);
                int64_t e = lut1[win >> sh];
                int tot = (int)(e & 63), cls = (int)((e >> 10) & 15), c = (int)((e >> 6) & 15);
                uint64_t idx = ((win << c) >> 1) >> (63 - kk[cls]);
                bp += tot;
                o += 1 + (int64_t)(idx & zmask[cls]);
                pr[prev * NC + cls] += 1;
                prev = cls;
            }
            continue;
        }
        if (o_)
            o_[p] = hdr;
        p++;
        uint64_t oacc = 0;
        int nacc = 0, state = 0;
        while (o < n_exp) {
            uint64_t win = window_at(words, n_words, bp);
            int64_t e = lut1[win >> sh];
            int tot = (int)(e & 63), cls = (int)((e >> 10) & 15), c = (int)((e >> 6) & 15);
            int k = (int)kk[cls];
            uint64_t idx = ((win << c) >> 1) >> (63 - k);
            bp += tot;
            o += 1 + (int64_t)(idx & zmask[cls]);
            int j = state * NC + cls;
            PUT_SYMBOL(o_, p, oacc, nacc, codes2[j], lens2[j], k, idx);
            state = (int)nxt[cls];
        }
        if (nacc > 0) {
            if (o_)
                o_[p] = (uint32_t)(oacc << (32 - nacc));
            p++;
        } else if (p == start + 1) {
            if (o_)
                o_[p] = 0;
            p++;
        }
        out_sw[s] = (uint32_t)(p - start);
    }
    return p;
}

/* ------------------------------------------------------------------------------------ literals */
/* states._literals: for every value v < size the class (not ZRUN, kind 2) coding it in the fewest total bits (the
 * first class among equals, its first index); lit_cls -1 where none. Classes: kinds / ks / params / totals (n);
 * LUT classes (kind 0) read lut3 (n3 entries). Returns -1 when a LUT class reads past lut3 or a value is >= size. */
EXPORT int lzs_literals(int64_t size, int64_t n, const int64_t *kinds, const int64_t *ks, const int64_t *params,
                        const int64_t *totals, const uint16_t *lut3, int64_t n3, int64_t *lit_cls, int64_t *lit_idx,
                        int64_t *best)
{
    for (int64_t v = 0; v < size; v++) {
        best[v] = (int64_t)1 << 20;
        lit_cls[v] = -1;
        lit_idx[v] = 0;
    }
    for (int64_t j = 0; j < n; j++) {
        if (kinds[j] == 2)
            continue;
        int64_t m = (int64_t)1 << ks[j], t = totals[j];
        for (int64_t i = 0; i < m; i++) {
            int64_t v;
            if (kinds[j] == 0) {
                if (params[j] + i >= n3)
                    return -1;
                v = lut3[params[j] + i];
            } else
                v = params[j] + i;
            if (v < 0 || v >= size)
                return -1;
            if (t < best[v]) {
                best[v] = t;
                lit_cls[v] = j;
                lit_idx[v] = i;
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ run plan and coder */
/* _run_dp: g / ch are (2, S + 1, 2) */
EXPORT void lzs_run_dp(int64_t S, int64_t n_opt, const int64_t *opt_cls, const int64_t *opt_cap,
                       const int64_t *lens2, const int64_t *ks, const int64_t *nxt, int64_t *g, int64_t *ch)
{
    const int64_t big = (int64_t)1 << 40;
#define G(s, r, e) g[((s) * (S + 1) + (r)) * 2 + (e)]
#define CH(s, r, e) ch[((s) * (S + 1) + (r)) * 2 + (e)]
    for (int s = 0; s < 2; s++) {
        for (int e = 0; e < 2; e++)
            for (int64_t r = 0; r <= S; r++) {
                G(s, r, e) = big;
                CH(s, r, e) = -1;
            }
        G(s, 0, s) = 0;
    }
    for (int64_t r = 1; r <= S; r++)
        for (int s = 0; s < 2; s++)
            for (int64_t o = 0; o < n_opt; o++) {
                int64_t j = opt_cls[o], ln = lens2[s * NC + j];
                if (ln == 0)
                    continue;
                int64_t m = r < opt_cap[o] ? r : opt_cap[o];
                int64_t t = nxt[j], c = ln + ks[j];
                for (int e = 0; e < 2; e++) {
                    int64_t v = c + G(t, r - m, e);
                    if (v < G(s, r, e)) {
                        G(s, r, e) = v;
                        CH(s, r, e) = o;
                    }
                }
            }
}

/* The first word of words[i..hi) that is not zero (hi when none), eight bytes at a time. */
static inline int64_t run_end8(const uint8_t *w, int64_t i, int64_t hi)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (i + 8 <= hi) {
        uint64_t x;
        memcpy(&x, w + i, 8);
        if (x)
            return i + (__builtin_ctzll(x) >> 3);
        i += 8;
    }
#endif
    while (i < hi && !w[i])
        i++;
    return i;
}

static inline int64_t run_end16(const uint16_t *w, int64_t i, int64_t hi)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (i + 4 <= hi) {
        uint64_t x;
        memcpy(&x, w + i, 8);
        if (x)
            return i + (__builtin_ctzll(x) >> 4);
        i += 4;
    }
#endif
    while (i < hi && !w[i])
        i++;
    return i;
}

/* a literal's entry in the (state, value) table of lzs_encode2 */
#define LT_BITS(e) ((e) & 0xFFFFFFFFu)
#define LT_LEN(e) ((int)(((e) >> 32) & 63))
#define LT_CLS(e) ((int64_t)(((e) >> 38) & 15))
#define LT_NXT(e) ((int)(((e) >> 42) & 1))
#define LT_BAD ((uint64_t)1 << 43)
#define LT_CLEN(e) ((int64_t)(((e) >> 44) & 15))

/* A zero run's whole plan for r <= RMAX words from state s ending in state e (lzs_encode2): the chunks' code and
 * index bits one after the other (at most 32), their length, the first and the last chunk's class, the end
 * state; ok = 0: the chunk loop writes it (no plan, or more than 32 bits). The pairs inside a plan are counted
 * by uses[] and added at the end. */
#define RMAX 64
typedef struct {
    uint64_t bits;
    int32_t len, first, last, nxt, ok;
} runplan_t;

#define RP(s, r, e) (((s) * (RMAX + 1) + (r)) * 2 + (e))

static inline __attribute__((always_inline)) int64_t
encode2_impl(const void *words_, const int wide, const int count, int64_t n, int64_t S, const runplan_t *rp, int64_t *uses,
             const uint64_t *lt, int64_t size,
             const int64_t *lit_idx, const int64_t *opt_cls, const int64_t *opt_cap, const int64_t *opt_lit,
             const int64_t *lens2, const int64_t *codes2, const int64_t *ks, const int64_t *nxt, const int64_t *g,
             const int64_t *ch, uint32_t *out, uint32_t *out_sw, int64_t *pairs)
{
    const uint8_t *w8 = (const uint8_t *)words_;
    const uint16_t *w16 = (const uint16_t *)words_;
#define W(i) (wide ? (int64_t)w16[i] : (int64_t)w8[i])
#define G(s, r, e) g[((s) * (S + 1) + (r)) * 2 + (e)]
#define CH(s, r, e) ch[((s) * (S + 1) + (r)) * 2 + (e)]
    int64_t p = 0, s_i = 0;
    /* the pair counts in four copies, symbol by symbol in turn (a pair that repeats does not wait for its
     * previous increment), added up at the end */
    int64_t pr4[4][(NC + 1) * NC];
    memset(pr4, 0, sizeof(pr4));
    uint64_t sc = 0;
    for (int64_t lo = 0; lo < n; lo += S) {
        int64_t hi = lo + S < n ? lo + S : n;
        int64_t start = p;
        if (out)
            out[p] = (uint32_t)(0x4C5A0000u | (uint32_t)(hi - lo - 1));
        p++;
        uint64_t oacc = 0;
        int nacc = 0, state = 0;
        int64_t prev = 16, i = lo;
        while (i < hi) {
            int64_t v = W(i);
            if (v != 0) {
                uint64_t m_ = -(uint64_t)(state & 1), e = (lt[v] & ~m_) | (lt[size + v] & m_);
                if (e & LT_BAD)
                    return -1 - i;
                int ln_ = LT_LEN(e);
                oacc = (oacc << ln_) | LT_BITS(e);
                nacc += ln_;
                if (nacc >= 32) {
                    nacc -= 32;
                    if (out)
                        out[p] = (uint32_t)(oacc >> nacc);
                    p++;
                    oacc &= (((uint64_t)1) << nacc) - 1;
                }
                int64_t j = LT_CLS(e);
                if (count)
                    pr4[sc++ & 3][prev * NC + j] += 1;
                prev = j;
                state = LT_NXT(e);
                i++;
                continue;
            }
            int64_t end = wide ? run_end16(w16, i + 1, hi) : run_end8(w8, i + 1, hi);
            int64_t r = end - i;
            int e_best = -1;
            int64_t best = (int64_t)1 << 50;
            uint64_t nx0 = 0, nx1 = 0;
            if (end < hi) {
                int64_t vn = W(end);
                nx0 = lt[vn];
                nx1 = lt[size + vn];
            }
            for (int e = 0; e < 2; e++) {
                int64_t t = G(state, r, e);
                if (end < hi) {
                    uint64_t x = e ? nx1 : nx0;
                    if (x & LT_BAD)
                        continue;
                    t += LT_CLEN(x);
                }
                if (t < best) {
                    best = t;
                    e_best = e;
                }
            }
            if (e_best < 0 || best >= ((int64_t)1 << 40))
                return -1 - (end < hi ? end : i);
            if (r <= RMAX && rp[RP(state, r, e_best)].ok) {
                const runplan_t *q = rp + RP(state, r, e_best);
                if (count)
                    uses[RP(state, r, e_best)]++;
                int ln_ = q->len;
                oacc = (oacc << ln_) | q->bits;
                nacc += ln_;
                if (nacc >= 32) {
                    nacc -= 32;
                    if (out)
                        out[p] = (uint32_t)(oacc >> nacc);
                    p++;
                    oacc &= (((uint64_t)1) << nacc) - 1;
                }
                if (count)
                    pr4[sc++ & 3][prev * NC + q->first] += 1;
                prev = q->last;
                state = q->nxt;
                i = end;
                continue;
            }
            int64_t rr = r;
            while (rr > 0) {
                int64_t o = CH(state, rr, e_best);
                int64_t j = opt_cls[o];
                int64_t m = rr < opt_cap[o] ? rr : opt_cap[o];
                uint64_t idx = opt_lit[o] ? (uint64_t)lit_idx[0] : (uint64_t)(m - 1);
                PUT_SYMBOL(out, p, oacc, nacc, codes2[state * NC + j], lens2[state * NC + j], ks[j], idx);
                if (count)
                    pr4[sc++ & 3][prev * NC + j] += 1;
                prev = j;
                state = (int)nxt[j];
                rr -= m;
            }
            i = end;
        }
        if (nacc > 0) {
            if (out)
                out[p] = (uint32_t)(oacc << (32 - nacc));
            p++;
        }
        out_sw[s_i++] = (uint32_t)(p - start);
    }
    if (count)
        for (int c4 = 0; c4 < 4; c4++)
            for (int x = 0; x < (NC + 1) * NC; x++)
                pairs[x] += pr4[c4][x];
#undef W
#undef G
#undef CH
    return p;
}

/* _encode2_kernel on words (uint8 when wide == 0, else uint16; values below 2^word_bits); out NULL: only out_sw and
 * pairs. Returns the words written, or -1 - i for a word i no class covers in the state it is read in, or
 * -(1 << 62) when there is no memory. A literal is one look-up in a table of (state, value) entries: its code
 * and index bits, length, class, next state, code length, and whether it has a code there (LT_BAD: no class,
 * or its class has no code in that state: the numba kernel's two refusals, at the same word). */
EXPORT int64_t lzs_encode2(const void *words_, int wide, int64_t n, int64_t word_bits, int64_t S,
                           const int64_t *lit_cls, const int64_t *lit_idx, const int64_t *opt_cls,
                           const int64_t *opt_cap, const int64_t *opt_lit, const int64_t *lens2,
                           const int64_t *codes2, const int64_t *ks, const int64_t *nxt, const int64_t *g,
                           const int64_t *ch, uint32_t *out, uint32_t *out_sw, int64_t *pairs)
{
    int64_t size = (int64_t)1 << word_bits;
    uint64_t *lt = malloc(2 * size * sizeof(uint64_t));
    if (!lt)
        return -((int64_t)1 << 62);
    for (int st = 0; st < 2; st++)
        for (int64_t v = 0; v < size; v++) {
            int64_t j = lit_cls[v];
            uint64_t e;
            if (j < 0 || lens2[st * NC + j] == 0)
                e = LT_BAD;
            else {
                int64_t c = lens2[st * NC + j], k = ks[j];
                e = (((uint64_t)codes2[st * NC + j] << k) | (uint64_t)lit_idx[v]) | ((uint64_t)(c + k) << 32)
                    | ((uint64_t)j << 38) | ((uint64_t)(nxt[j] & 1) << 42) | ((uint64_t)c << 44);
            }
            lt[st * size + v] = e;
        }
#define G(s, r, e) g[((s) * (S + 1) + (r)) * 2 + (e)]
#define CH(s, r, e) ch[((s) * (S + 1) + (r)) * 2 + (e)]
    runplan_t *rp = calloc(2 * (RMAX + 1) * 2, sizeof(runplan_t));
    int64_t *uses = calloc(2 * (RMAX + 1) * 2, sizeof(int64_t));
    if (!rp || !uses) {
        free(rp);
        free(uses);
        free(lt);
        return -((int64_t)1 << 62);
    }
    for (int st = 0; st < 2; st++)
        for (int64_t r = 1; r <= RMAX && r <= S; r++)
            for (int e = 0; e < 2; e++) {
                runplan_t *q = rp + RP(st, r, e);
                if (G(st, r, e) >= ((int64_t)1 << 40))
                    continue;
                int64_t rr = r, s2 = st, len = 0, first = -1, last = -1;
                uint64_t bits = 0;
                int ok = 1;
                while (rr > 0) {
                    int64_t o = CH(s2, rr, e);
                    if (o < 0) {
                        ok = 0;
                        break;
                    }
                    int64_t j = opt_cls[o], m = rr < opt_cap[o] ? rr : opt_cap[o];
                    int64_t c = lens2[s2 * NC + j], k = ks[j];
                    uint64_t idx = opt_lit[o] ? (uint64_t)lit_idx[0] : (uint64_t)(m - 1);
                    len += c + k;
                    if (len > 32) {
                        ok = 0;
                        break;
                    }
                    bits = (bits << (c + k)) | ((uint64_t)codes2[s2 * NC + j] << k) | idx;
                    if (first < 0)
                        first = j;
                    last = j;
                    s2 = nxt[j];
                    rr -= m;
                }
                if (!ok)
                    continue;
                q->bits = bits;
                q->len = (int32_t)len;
                q->first = (int32_t)first;
                q->last = (int32_t)last;
                q->nxt = (int32_t)s2;
                q->ok = 1;
            }
    int64_t rc;
    if (pairs)
        rc = wide ? encode2_impl(words_, 1, 1, n, S, rp, uses, lt, size, lit_idx, opt_cls, opt_cap, opt_lit, lens2, codes2, ks,
                                 nxt, g, ch, out, out_sw, pairs)
                  : encode2_impl(words_, 0, 1, n, S, rp, uses, lt, size, lit_idx, opt_cls, opt_cap, opt_lit, lens2, codes2, ks,
                                 nxt, g, ch, out, out_sw, pairs);
    else                                /* states_plan.code: the stripes only, no pairs counted */
        rc = wide ? encode2_impl(words_, 1, 0, n, S, rp, uses, lt, size, lit_idx, opt_cls, opt_cap, opt_lit, lens2, codes2, ks,
                                 nxt, g, ch, out, out_sw, pairs)
                  : encode2_impl(words_, 0, 0, n, S, rp, uses, lt, size, lit_idx, opt_cls, opt_cap, opt_lit, lens2, codes2, ks,
                                 nxt, g, ch, out, out_sw, pairs);
    if (rc >= 0 && pairs)               /* the pairs inside the plans used */
        for (int st = 0; st < 2; st++)
            for (int64_t r = 1; r <= RMAX && r <= S; r++)
                for (int e = 0; e < 2; e++) {
                    int64_t u = uses[RP(st, r, e)];
                    if (!u)
                        continue;
                    int64_t rr = r, s2 = st, prev = -1;
                    while (rr > 0) {
                        int64_t o = CH(s2, rr, e), j = opt_cls[o];
                        if (prev >= 0)
                            pairs[prev * NC + j] += u;
                        prev = j;
                        s2 = nxt[j];
                        rr -= rr < opt_cap[o] ? rr : opt_cap[o];
                    }
                }
#undef G
#undef CH
    free(uses);
    free(rp);
    free(lt);
    return rc;
}

/* ------------------------------------------------------------------------------------ token statistics */
/* The order-1 token statistics of words coded in stripes of S, of every step-th stripe from the first (the two-table design of states.plan_two works on
 * them instead of on a coded stream): a token is a nonzero word (a literal, of class lit_cls[value]) or a maximal
 * run of zero words inside a stripe.
 *   ll[a * NC + b]                 literal of class b after a literal of class a (a = 16: at the stripe start)
 *   rh[(a * (NC + 1) + b) * (rcap + 1) + r]   runs of r <= rcap zeros after a (16: stripe start) before a literal
 *                                  of class b (16: the stripe end)
 *   lr[3 * i .. 3 * i + 2]         (a, b, r) of each longer run (at most lr_cap of them)
 * Returns the number of longer runs, -1 - i for a word i no class covers, or -2 - n when lr_cap is too small. The
 * literal pairs are counted in four copies (a pair that repeats does not wait for its previous increment). */
EXPORT int64_t lzs_tokstats(const void *words_, int wide, int64_t n, int64_t S, int64_t step, const int8_t *lit_cls,
                            int64_t size, int64_t rcap, int64_t *ll, int64_t *rh, int64_t *lr, int64_t lr_cap)
{
    const uint8_t *w8 = (const uint8_t *)words_;
    const uint16_t *w16 = (const uint16_t *)words_;
    uint32_t ll4[4][(NC + 1) * NC];
    memset(ll4, 0, sizeof(ll4));
    int64_t n_long = 0;
    unsigned sc = 0;
    for (int64_t lo = 0; lo < n; lo += step * S) {
        int64_t hi = lo + S < n ? lo + S : n;
        int prev = 16;
        int64_t i = lo;
        while (i < hi) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            if (!wide && size >= 256) {
                /* 8-bit words: eight literals at a time while eight words hold no zero (dense tensors) */
                while (i + 8 <= hi) {
                    uint64_t x;
                    memcpy(&x, w8 + i, 8);
                    if ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull)
                        break;
                    for (int q = 0; q < 8; q++) {
                        int c = lit_cls[(x >> (8 * q)) & 0xFF];
                        if (c < 0)
                            return -1 - (i + q);
                        ll4[q & 3][prev * NC + c]++;
                        prev = c;
                    }
                    i += 8;
                }
                if (i >= hi)
                    break;
            }
#endif
            int64_t v = wide ? (int64_t)w16[i] : (int64_t)w8[i];
            if (v != 0) {
                int c = v < size ? lit_cls[v] : -1;
                if (c < 0)
                    return -1 - i;
                ll4[sc++ & 3][prev * NC + c]++;
                prev = c;
                i++;
                continue;
            }
            int64_t end = wide ? run_end16(w16, i + 1, hi) : run_end8(w8, i + 1, hi);
            int64_t r = end - i;
            int b = 16;
            if (end < hi) {
                int64_t vn = wide ? (int64_t)w16[end] : (int64_t)w8[end];
                b = vn < size ? lit_cls[vn] : -1;
                if (b < 0)
                    return -1 - end;
            }
            if (r <= rcap)
                rh[(prev * (NC + 1) + b) * (rcap + 1) + r]++;
            else {
                if (n_long >= lr_cap)
                    return -2 - n;
                lr[3 * n_long] = prev;
                lr[3 * n_long + 1] = b;
                lr[3 * n_long + 2] = r;
                n_long++;
            }
            if (b < 16) {                   /* the literal after the run is read here, its pair counted with the run */
                prev = b;
                i = end + 1;
            } else
                i = end;
        }
    }
    for (int c4 = 0; c4 < 4; c4++)
        for (int x = 0; x < (NC + 1) * NC; x++)
            ll[x] += ll4[c4][x];
    return n_long;
}

/* The class-code and index bits of the tokens of lzs_tokstats (ll; runs as (a, b, r, count) in ra, rb, rr, rn)
 * coded with a two-state table set as lzs_encode2 codes them (a run ends in the state of the least bits for it
 * and its literal's code, state A on a tie; its chunks as the run plan g / ch of lzs_run_dp says), stripe
 * padding not counted; the class pairs of that parse are added to pairs. Returns -1 when a literal has no code
 * in the state it is read in (the table set cannot code these tokens). */
EXPORT int64_t lzs_tokeval(const int64_t *ll, int64_t n_runs, const int64_t *ra, const int64_t *rb,
                           const int64_t *rr, const int64_t *rn, int64_t S, const int64_t *opt_cls,
                           const int64_t *opt_cap, const int64_t *lens2, const int64_t *ks, const int64_t *nxt,
                           const int64_t *g, const int64_t *ch, int64_t *pairs)
{
#define G(s, r, e) g[((s) * (S + 1) + (r)) * 2 + (e)]
#define CH(s, r, e) ch[((s) * (S + 1) + (r)) * 2 + (e)]
    const int64_t big = (int64_t)1 << 40;
    int64_t bits = 0;
    for (int a = 0; a <= NC; a++) {
        int s = a < NC ? (int)nxt[a] : 0;
        for (int b = 0; b < NC; b++) {
            int64_t cnt = ll[a * NC + b];
            if (!cnt)
                continue;
            int64_t c = lens2[s * NC + b];
            if (!c)
                return -1;
            bits += cnt * (c + ks[b]);
            pairs[a * NC + b] += cnt;
        }
    }
    for (int64_t t = 0; t < n_runs; t++) {
        int64_t a = ra[t], b = rb[t], r = rr[t], cnt = rn[t];
        int s = a < NC ? (int)nxt[a] : 0;
        int e_best = -1;
        int64_t best = big;
        for (int e = 0; e < 2; e++) {
            int64_t v = G(s, r, e);
            if (b < NC) {
                int64_t c = lens2[e * NC + b];
                if (!c)
                    continue;
                v += c;
            }
            if (v < best) {
                best = v;
                e_best = e;
            }
        }
        if (e_best < 0 || best >= big)
            return -1;
        bits += cnt * (best + (b < NC ? ks[b] : 0));
        int64_t prev = a, x = r, s2 = s;
        while (x > 0) {
            int64_t o = CH(s2, x, e_best), j = opt_cls[o];
            pairs[prev * NC + j] += cnt;
            prev = j;
            s2 = nxt[j];
            x -= x < opt_cap[o] ? x : opt_cap[o];
        }
        if (b < NC)
            pairs[prev * NC + b] += cnt;
    }
#undef G
#undef CH
    return bits;
}
