/* lutzip fast stripe decoder (docs/FORMAT.md sections 1-3), loaded by lutzip.codec.fastdec through ctypes.
 *
 * Built at first use with the machine's C compiler into the lutzip cache; only the C library and pthreads
 * are needed (no Python headers).  The numba decoder of lutzip.codec.bitstream stays the reference.
 *
 * Decoding: several stripes ("lanes") are decoded in one loop so that their dependency chains
 * (bit position -> 64-bit window -> table entry -> symbol length -> next bit position) overlap.  One combined
 * table (LUT1 + LUT2) gives, for the next L bits, the symbol length, the shift of its index, its kind and its
 * param.  Anything unusual (an invalid prefix, a zero run longer than one word, a stripe whose bits do not end
 * where its symbols end) sends the stripe to the exact decoder (exact_stripe), a line-by-line port of the
 * numba kernel, which decodes it again and reports the same error code and word as the reference.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__PCLMUL__) && defined(__SSE4_1__)
#define LZ_HAVE_CLMUL 1
#if defined(__VPCLMULQDQ__) && defined(__AVX512F__)
#define LZ_HAVE_VPCLMUL 1     /* four 512-bit accumulators: 256 bytes a step */
#endif
#endif

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

#ifndef LZ_LANES
#define LZ_LANES 6
#endif

/* combined table entry; must match ENTRY_DTYPE of fastdec.py */
typedef struct {
    uint8_t tot;     /* code + index bits (1..28) */
    uint8_t flags;   /* F_* | class << 4 */
    uint8_t sh;      /* 64 - tot: x >> sh is the symbol's code and index bits, code << k | index; 63 if slow */
    uint8_t adv;     /* what the batched loops add to the bit position: tot, or ADV_SLOW (64) for a slow symbol (the
                        lane leaving the batch takes it off again; the pair loop's one test of s + adv1 + adv2 > 64
                        catches slow symbols and pairs longer than the window) */
    uint32_t param;  /* added to x >> sh: the LUT3 offset (LUT mode) or RANGE base minus code << k (mod 2^32);
                        0 for a slow symbol */
} lz_entry;

#define ADV_SLOW 64
#define F_LUT 1       /* fast path: word = lut3[param + index] (in MIX mode; else the mode says) */
#define F_INVALID 4   /* no class has this prefix */
#define F_SLOW 8      /* the slow branch decodes it (invalid prefix, zero run of k > 0, the minority kind) */
#define CLASS(e) ((e)->flags >> 4)

/* fast-path modes: every fast symbol is a LUT3 look-up / a RANGE value / either (flag F_LUT) */
enum { MODE_LUT = 0, MODE_RANGE = 1, MODE_MIX = 2 };
#define MIX_MASK 8191  /* the kernel's lut3 has 8192 entries */

enum { ERR_OK = 0, ERR_BAD_HEADER = 1, ERR_COUNT = 2, ERR_INVALID_PREFIX = 3, ERR_OVERRUN = 4,
       ERR_LUT3_RANGE = 5, ERR_ZRUN_OVERFLOW = 6, ERR_LEFTOVER = 7, ERR_PADDING = 8, ERR_CRC = 100,
       ERR_INDEX = 101, ERR_NOMEM = 102 };

/* ------------------------------------------------------------------------------------------------ CRC32 */
static uint32_t crc_tab[16][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_tab[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 16; t++) crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xFF];
}

/* slicing-by-16 on the inverted CRC */
static uint32_t crc_sw(const uint8_t *p, size_t n, uint32_t c) {
    while (n >= 16) {
        uint32_t a, b, d, e;
        memcpy(&a, p, 4); memcpy(&b, p + 4, 4); memcpy(&d, p + 8, 4); memcpy(&e, p + 12, 4);
        a ^= c;
        c = crc_tab[15][a & 0xFF] ^ crc_tab[14][(a >> 8) & 0xFF] ^ crc_tab[13][(a >> 16) & 0xFF] ^ crc_tab[12][a >> 24] ^
            crc_tab[11][b & 0xFF] ^ crc_tab[10][(b >> 8) & 0xFF] ^ crc_tab[9][(b >> 16) & 0xFF] ^ crc_tab[8][b >> 24] ^
            crc_tab[7][d & 0xFF] ^ crc_tab[6][(d >> 8) & 0xFF] ^ crc_tab[5][(d >> 16) & 0xFF] ^ crc_tab[4][d >> 24] ^
            crc_tab[3][e & 0xFF] ^ crc_tab[2][(e >> 8) & 0xFF] ^ crc_tab[1][(e >> 16) & 0xFF] ^ crc_tab[0][e >> 24];
        p += 16;
        n -= 16;
    }
    while (n--) c = crc_tab[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c;
}

#ifdef LZ_HAVE_CLMUL
/* carry-less multiplication folding (Gopal et al., "Fast CRC computation for generic polynomials using
 * PCLMULQDQ", Intel 2009), as in zlib/Chromium's crc32_sse42_simd_: n >= 64 and a multiple of 16; the CRC is
 * the inverted one. */
static uint32_t crc_clmul(const uint8_t *buf, size_t len, uint32_t crc) {
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124LL);
    const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
    __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8, y5, y6, y7, y8;
#ifdef LZ_HAVE_VPCLMUL
    if (len >= 512) {
        /* the same folding on four 512-bit accumulators (16 lanes of 128 bits): fold distance 2048 bits, constants
         * x^(2048+32) and x^(2048-32) mod P bit-reflected (as k1 / k2 are for 512), then the accumulators folded
         * into one (512 bits apart) and its four lanes handed to the 128-bit tail below */
        const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(0x01322d1430LL, 0x011542778aLL));
        const __m512i k512 = _mm512_broadcast_i32x4(k1k2);
        __m512i z1 = _mm512_loadu_si512((const void *)(buf + 0x00));
        __m512i z2 = _mm512_loadu_si512((const void *)(buf + 0x40));
        __m512i z3 = _mm512_loadu_si512((const void *)(buf + 0x80));
        __m512i z4 = _mm512_loadu_si512((const void *)(buf + 0xc0));
        z1 = _mm512_xor_si512(z1, _mm512_castsi128_si512(_mm_cvtsi32_si128((int)crc)));
        buf += 256;
        len -= 256;
        while (len >= 256) {
            z1 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, k2048, 0x00),
                                           _mm512_clmulepi64_epi128(z1, k2048, 0x11),
                                           _mm512_loadu_si512((const void *)(buf + 0x00)), 0x96);
            z2 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z2, k2048, 0x00),
                                           _mm512_clmulepi64_epi128(z2, k2048, 0x11),
                                           _mm512_loadu_si512((const void *)(buf + 0x40)), 0x96);
            z3 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z3, k2048, 0x00),
                                           _mm512_clmulepi64_epi128(z3, k2048, 0x11),
                                           _mm512_loadu_si512((const void *)(buf + 0x80)), 0x96);
            z4 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z4, k2048, 0x00),
                                           _mm512_clmulepi64_epi128(z4, k2048, 0x11),
                                           _mm512_loadu_si512((const void *)(buf + 0xc0)), 0x96);
            buf += 256;
            len -= 256;
        }
        z1 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, k512, 0x00),
                                       _mm512_clmulepi64_epi128(z1, k512, 0x11), z2, 0x96);
        z1 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, k512, 0x00),
                                       _mm512_clmulepi64_epi128(z1, k512, 0x11), z3, 0x96);
        z1 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, k512, 0x00),
                                       _mm512_clmulepi64_epi128(z1, k512, 0x11), z4, 0x96);
        while (len >= 64) {
            z1 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, k512, 0x00),
                                           _mm512_clmulepi64_epi128(z1, k512, 0x11),
                                           _mm512_loadu_si512((const void *)buf), 0x96);
            buf += 64;
            len -= 64;
        }
        x1 = _mm512_extracti32x4_epi32(z1, 0);
        x2 = _mm512_extracti32x4_epi32(z1, 1);
        x3 = _mm512_extracti32x4_epi32(z1, 2);
        x4 = _mm512_extracti32x4_epi32(z1, 3);
        goto tail;
    }
#endif
    x1 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
    x2 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
    x3 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
    x4 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    x0 = k1k2;
    buf += 64;
    len -= 64;
    while (len >= 64) {
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
        x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
        x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
        x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
        x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
        y5 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
        y6 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
        y7 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
        y8 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), y5);
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), y6);
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), y7);
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), y8);
        buf += 64;
        len -= 64;
    }
#ifdef LZ_HAVE_VPCLMUL
tail:
#endif
    x0 = k3k4;
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);
    while (len >= 16) {
        x2 = _mm_loadu_si128((const __m128i *)buf);
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
        buf += 16;
        len -= 16;
    }
    x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
    x3 = _mm_setr_epi32(~0, 0, ~0, 0);
    x1 = _mm_srli_si128(x1, 8);
    x1 = _mm_xor_si128(x1, x2);
    x0 = k5k0;
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, x3);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    x0 = poly;
    x2 = _mm_and_si128(x1, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
    x2 = _mm_and_si128(x2, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

#ifdef LZ_HAVE_CLMUL
static int use_clmul = 1;
#endif

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n) {
    uint32_t c = ~crc;
#ifdef LZ_HAVE_CLMUL
    if (use_clmul && n >= 64) {
        size_t m = n & ~(size_t)15;
        c = crc_clmul(p, m, c);
        p += m;
        n -= m;
    }
#endif
    return ~crc_sw(p, n, c);
}

/* zlib.crc32(bytes, crc) */
EXPORT uint32_t lz_crc32(const uint8_t *p, int64_t n, uint32_t crc) {
    pthread_once(&crc_once, crc_init);
    return crc32_update(crc, p, (size_t)n);
}

/* 1 if the carry-less multiply path is compiled in; mode 0/1 switches it off/on (for the benchmark) */
EXPORT int lz_crc_mode(int mode) {
#ifdef LZ_HAVE_CLMUL
    if (mode >= 0) use_clmul = mode;
    return 1;
#else
    (void)mode;
    return 0;
#endif
}

/* first stripe whose CRC32 (of its little-endian words) differs from crcs[s], or -1 */
EXPORT int64_t lz_crc_check(const uint32_t *words, const int64_t *starts, const int64_t *nw, int64_t n_stripes,
                            const uint32_t *crcs) {
    pthread_once(&crc_once, crc_init);
    for (int64_t s = 0; s < n_stripes; s++)
        if (crc32_update(0, (const uint8_t *)(words + starts[s]), 4 * (size_t)nw[s]) != crcs[s]) return s;
    return -1;
}

/* --------------------------------------------------------------------------------------------- decoder */
enum { K_LUT = 0, K_RANGE = 1, K_ZRUN = 2 };

typedef struct {
    const uint32_t *words;    /* the whole payload of the tensor (or stream) */
    int64_t total;            /* its length in words */
    const int64_t *starts;    /* first word (the header) of each stripe */
    const uint32_t *nw;       /* words of each stripe, header included (>= 2) */
    int64_t S, numel;
    const lz_entry *T;        /* 4096 entries (2^L used), then the kernel's LUT3 of 8192 entries */
    int L, mode;
    const uint16_t *lut3;     /* the table set's LUT3 */
    int64_t n_lut3;
    const int32_t *cls;       /* per class: kind, k, param, c (4 x 16) */
    void *out;
    int out8;                 /* out is uint8 (else uint16) */
    const uint32_t *crcs;     /* NULL: no CRC check */
    int loop;                 /* LOOP_SINGLE, LOOP_PAIR or LOOP_ZERO: the lane loop of the full lanes */
    int zk;                   /* LOOP_ZERO: k of the zero run of code 0 (0..4) */
    int two;                  /* two code tables (format version 5): T of state B at T + B_OFF */
} lz_job;

/* Two code tables (format version 5, docs/FORMAT.md section 2.1): the combined table of state B lies B_OFF entries
 * behind that of state A (the kernel's LUT3 between them, then unused space); every valid entry of either carries
 * the state after its symbol in bit 7 of sh (the loops shift by sh & 63, which x86 does anyway).  A lane's state is
 * the entry offset of its table (0 or B_OFF).  One-table sets never set the bit: their state stays 0. */
#define B_OFF 8192
#define SH_NEXT_B 128
#define NEXT_ST(e) ((uint64_t)((e)->sh & SH_NEXT_B) << 6)
_Static_assert(B_OFF == SH_NEXT_B << 6, "NEXT_ST: the state-B offset is bit 7 of sh shifted by 6");

/* ------------------------------------------------------------------------------------- CRC cursor
 * The stripe CRCs of a range checked inside the lane loops: a cursor walks the range's stripes in order, and each
 * step of a lane loop folds the cursor's next 16 bytes into one 128-bit accumulator (carry-less multiplication,
 * the fold-by-one of crc_clmul's tail): the multiplications run on the vector units beside the loop's integer
 * work.  At the end of a stripe's 16-byte blocks crc_next (out of the loop) reduces the accumulator, adds the
 * stripe's last 0..12 bytes, compares with the recorded CRC and starts the next stripe.  Stripes of fewer than
 * 32 bytes, builds without carry-less multiplication and lz_crc_mode(0) are checked by crc32_update directly.
 * run_range finishes whatever the loops left (crc_finish).  The cursor is ahead of or behind the lanes: the first
 * mismatch of the range is reported whatever was decoded, as before. */
typedef struct {
    uintptr_t p, e;           /* next 16 bytes to fold, end of the current stripe's 16-byte blocks (both 0: none) */
#ifdef LZ_HAVE_CLMUL
    __m128i x;                /* the accumulator */
#endif
    int64_t s, hi;            /* the stripe being checked, the end of the range */
    int64_t bad;              /* the first stripe whose CRC differs, or -1 */
    const lz_job *j;
} lz_crc;

#ifdef LZ_HAVE_CLMUL
static inline __m128i crc_fold16(__m128i x, uintptr_t p) {
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
    __m128i lo = _mm_clmulepi64_si128(x, k3k4, 0x00), hi = _mm_clmulepi64_si128(x, k3k4, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), _mm_loadu_si128((const __m128i *)p));
}

/* the inverted CRC of a 128-bit accumulator (crc_clmul's final reduction) */
static uint32_t crc_reduce(__m128i x1) {
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124LL);
    const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
    __m128i x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10), x3 = _mm_setr_epi32(~0, 0, ~0, 0);
    x1 = _mm_srli_si128(x1, 8);
    x1 = _mm_xor_si128(x1, x2);
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, x3);
    x1 = _mm_clmulepi64_si128(x1, k5k0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    x2 = _mm_and_si128(x1, x3);
    x2 = _mm_clmulepi64_si128(x2, poly, 0x10);
    x2 = _mm_and_si128(x2, x3);
    x2 = _mm_clmulepi64_si128(x2, poly, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

/* start the cursor at stripe s: stripes checked directly until one for the loops (or none is left, or one
 * differs) */
static void crc_begin(lz_crc *c, int64_t s) {
    const lz_job *j = c->j;
    c->p = c->e = 0;
    for (; s < c->hi; s++) {
        const uint8_t *p = (const uint8_t *)(j->words + j->starts[s]);
        size_t n = 4 * (size_t)j->nw[s];
#ifdef LZ_HAVE_CLMUL
        if (use_clmul && n >= 32) {
            c->s = s;
            c->x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128(-1));
            c->p = (uintptr_t)p + 16;
            c->e = (uintptr_t)p + (n & ~(size_t)15);
            return;
        }
#endif
        if (crc32_update(0, p, n) != j->crcs[s]) {
            c->bad = s;
            return;
        }
    }
}

/* the cursor is at the end of its stripe's 16-byte blocks: check the stripe, start the next one */
static __attribute__((noinline)) void crc_next(lz_crc *c) {
#ifdef LZ_HAVE_CLMUL
    const lz_job *j = c->j;
    int64_t s = c->s;
    uint32_t v = ~crc_sw((const uint8_t *)c->e, (4 * (size_t)j->nw[s]) & 15, crc_reduce(c->x));
    if (v != j->crcs[s]) {
        c->bad = s;
        c->p = c->e = 0;
        return;
    }
    crc_begin(c, s + 1);
#else
    c->p = c->e = 0;
#endif
}

static void crc_init_range(lz_crc *c, const lz_job *j, int64_t lo, int64_t hi) {
    c->j = j;
    c->hi = hi;
    c->bad = -1;
    c->p = c->e = 0;
    if (j->crcs) crc_begin(c, lo);
}

/* the cursor's stripes left to the end of the range */
static void crc_finish(lz_crc *c) {
#ifdef LZ_HAVE_CLMUL
    while (c->e) {
        __m128i x = c->x;
        uintptr_t p = c->p;
        for (; p < c->e; p += 16) x = crc_fold16(x, p);
        c->x = x;
        c->p = p;
        crc_next(c);
    }
#endif
}

/* A lane loop's n steps (i counts them) with the cursor's folds: while the cursor's stripe has 16-byte blocks
 * left, a copy of the steps with one fold each (no test of the cursor in the loop: its blocks bound the run),
 * between stripes crc_next, and with no CRC left a copy of the steps alone.  Locals cp, ce, cx (CRC_LOAD /
 * CRC_SAVE around the loop). */
#ifdef LZ_HAVE_CLMUL
#define CRC_LOAD uintptr_t cp = cc->p, ce = cc->e; __m128i cx = cc->x;
#define CRC_SAVE cc->p = cp; cc->e = ce; cc->x = cx;
#define CRC_LOOP(STEPS)                                                                                      \
    i = 0;                                                                                                   \
    while (i < n) {                                                                                          \
        int64_t m_ = (int64_t)((ce - cp) >> 4);                                                              \
        if (m_ > 0) {                                                                                        \
            int64_t lim_ = m_ < n - i ? i + m_ : n;                                                          \
            for (; i < lim_; i++) {                                                                          \
                STEPS                                                                                        \
                cx = crc_fold16(cx, cp);                                                                     \
                cp += 16;                                                                                    \
            }                                                                                                \
        } else if (ce) {                                                                                     \
            CRC_SAVE                                                                                         \
            crc_next(cc);                                                                                    \
            cp = cc->p; ce = cc->e; cx = cc->x;                                                              \
        } else {                                                                                             \
            for (; i < n; i++) {                                                                             \
                STEPS                                                                                        \
            }                                                                                                \
        }                                                                                                    \
    }
#else
#define CRC_LOAD
#define CRC_SAVE
#define CRC_LOOP(STEPS) for (i = 0; i < n; i++) { STEPS }
#endif

typedef struct {
    int64_t lo, hi;           /* stripes [lo, hi) */
    int rc;                   /* first error of the range: decode error code, or ERR_CRC */
    int64_t stripe, word;
    const lz_job *job;
} lz_range;

static int64_t n_exact = 0;   /* stripes the exact decoder decoded (statistics) */
EXPORT int64_t lz_exact_count(int reset) {
    return reset ? __atomic_exchange_n(&n_exact, 0, __ATOMIC_RELAXED) : __atomic_load_n(&n_exact, __ATOMIC_RELAXED);
}

/* The reference decoder of one stripe (lutzip.codec.bitstream._decode_kernel, line by line): decodes the
 * stripe into out[lo .. lo + n_exp) and returns its error code; *word is the decoded word within the
 * stripe where the error was found. */
#define EXACT_BODY(OUT_T)                                                                                    \
    const uint32_t *words = j->words;                                                                        \
    int64_t base = j->starts[s], end = base + j->nw[s];                                                      \
    int64_t lo = s * j->S;                                                                                   \
    int64_t n_exp = j->S < j->numel - lo ? j->S : j->numel - lo;                                             \
    OUT_T *out = (OUT_T *)j->out + lo;                                                                       \
    uint32_t hdr = words[base];                                                                              \
    __atomic_fetch_add(&n_exact, 1, __ATOMIC_RELAXED);                                                      \
    *word = 0;                                                                                               \
    if ((hdr >> 16) != 0x4C5A) return ERR_BAD_HEADER;                                                        \
    if ((int64_t)(hdr & 0xFFFF) + 1 != n_exp) return ERR_COUNT;                                              \
    int64_t pos = base + 1, o = 0;                                                                           \
    uint64_t acc = 0, st = 0;                                                                                \
    int have = 0;                                                                                            \
    while (o < n_exp) {                                                                                      \
        while (have <= 32 && pos < end) {                                                                    \
            acc |= (uint64_t)words[pos] << (32 - have);                                                      \
            have += 32;                                                                                      \
            pos++;                                                                                           \
        }                                                                                                    \
        *word = o;                                                                                           \
        const lz_entry *e = &j->T[(acc >> (64 - j->L)) + st];                                                \
        if (e->flags & F_INVALID) return ERR_INVALID_PREFIX;                                                 \
        int tot = e->tot;                                                                                    \
        if (tot > have) return ERR_OVERRUN;                                                                  \
        int cl = CLASS(e), kind = j->cls[cl], k = j->cls[16 + cl];                                           \
        int64_t param = j->cls[32 + cl];                                                                     \
        uint64_t idx = k ? (acc << (tot - k)) >> (64 - k) : 0;                                               \
        acc <<= tot;                                                                                         \
        have -= tot;                                                                                         \
        st = NEXT_ST(e);                                                                                     \
        if (kind == K_LUT) {                                                                                 \
            int64_t a = param + (int64_t)idx;                                                                \
            if (a >= j->n_lut3) return ERR_LUT3_RANGE;                                                       \
            out[o++] = (OUT_T)j->lut3[a];                                                                    \
        } else if (kind == K_RANGE) {                                                                        \
            out[o++] = (OUT_T)(param + (int64_t)idx);                                                        \
        } else {                                                                                             \
            int64_t m = (int64_t)idx + 1;                                                                    \
            if (o + m > n_exp) return ERR_ZRUN_OVERFLOW;                                                     \
            memset(out + o, 0, (size_t)m * sizeof(OUT_T));                                                   \
            o += m;                                                                                          \
        }                                                                                                    \
    }                                                                                                        \
    *word = n_exp;                                                                                           \
    if (pos < end || have >= 32) return ERR_LEFTOVER;                                                        \
    if (have > 0 && acc != 0) return ERR_PADDING;                                                            \
    return ERR_OK;

static int exact16(const lz_job *j, int64_t s, int64_t *word) { EXACT_BODY(uint16_t) }
static int exact8(const lz_job *j, int64_t s, int64_t *word) { EXACT_BODY(uint8_t) }

static int exact_stripe(const lz_job *j, int64_t s, int64_t *word) {
    return j->out8 ? exact8(j, s, word) : exact16(j, s, word);
}

/* the next 64 bits from bit position bp of the payload (MSB first within each 32-bit word) */
static inline uint64_t peek(const uint32_t *w, uint64_t bp) {
    uint64_t x;
    memcpy(&x, w + (bp >> 5), 8);
    x = (x >> 32) | (x << 32);
    return x << (bp & 31);
}

#define PEEK(w, bp) peek(w, bp)

/* the same, with zero words beyond the end of the payload */
static inline uint64_t peek_safe(const uint32_t *w, int64_t total, uint64_t bp) {
    int64_t i = (int64_t)(bp >> 5);
    uint64_t hi = i < total ? w[i] : 0, lo = i + 1 < total ? w[i + 1] : 0;
    return ((hi << 32) | lo) << (bp & 31);
}

typedef struct {
    int64_t s;        /* stripe */
    uint64_t bp;      /* absolute bit position in the payload */
    int64_t o, hi;    /* next output word, end of the stripe's words (absolute word indices of out) */
    int bad;          /* an error was seen: decode the stripe again with exact_stripe */
    uint64_t st;      /* two code tables: the entry offset of the lane's state (0: A, B_OFF: B) */
} lz_lane;

/* The kernel's LUT3 follows the combined table, which always has room for 4096 entries (only the first 2^L
 * are used): lut3k[a] is T-relative, one base register for both. */
#define T_ENTRIES 4096
#define LUT3K(a) (((const uint16_t *)(T + T_ENTRIES))[a])

/* The value of a fast symbol in each mode (a = param + index). */
#define VALUE_0(e, a) LUT3K(a)
#define VALUE_1(e, a) (a)
#define VALUE_2(e, a) (((e)->flags & F_LUT) ? LUT3K((a) & MIX_MASK) : (a))

/* One symbol of lane ln the slow way: an invalid prefix, a zero run of k > 0, a symbol of the mode's
 * minority kind (or any symbol near the end of the payload: reads are bounds-checked).  Sets ln->bad on an
 * error. */
#define SLOW_BODY(OUT_T)                                                                                     \
    uint64_t x = peek_safe(j->words, j->total, ln->bp);                                                      \
    const lz_entry *e = &j->T[(x >> (64 - j->L)) + ln->st];                                                  \
    OUT_T *p = (OUT_T *)j->out + ln->o;                                                                      \
    if (e->flags & F_INVALID) {                                                                              \
        ln->bad = 1;                                                                                         \
        return;                                                                                              \
    }                                                                                                        \
    int cl = CLASS(e), kind = j->cls[cl], k = j->cls[16 + cl];                                               \
    uint32_t idx = k ? (uint32_t)((x << (e->tot - k)) >> (64 - k)) : 0;                                      \
    uint32_t pa = (uint32_t)j->cls[32 + cl];                                                                 \
    ln->bp += e->tot;                                                                                        \
    ln->st = NEXT_ST(e);                                                                                     \
    if (kind == K_ZRUN) {                                                                                    \
        int64_t m = (int64_t)idx + 1;                                                                        \
        if (m > ln->hi - ln->o) {                                                                            \
            ln->bad = 1;                                                                                     \
            return;                                                                                          \
        }                                                                                                    \
        memset(p, 0, (size_t)m * sizeof(OUT_T));                                                             \
        ln->o += m;                                                                                          \
    } else {                                                                                                 \
        *p = (OUT_T)(kind == K_LUT ? j->lut3[pa + idx] : pa + idx);                                          \
        ln->o++;                                                                                             \
    }

static __attribute__((noinline)) void slow16(const lz_job *j, lz_lane *ln) { SLOW_BODY(uint16_t) }
static __attribute__((noinline)) void slow8(const lz_job *j, lz_lane *ln) { SLOW_BODY(uint8_t) }

/* One fast symbol of lane q; a slow one leaves the batch (goto slow_exit) before it changes the lane. */
#define LANE_DECL(q) uint64_t bp##q = ln[q].bp; OUT_T *op##q = OUT + ln[q].o;
#define LANE_N(q)                                                                                            \
    {                                                                                                        \
        int64_t r_ = ln[q].hi - ln[q].o, sf_ = (LIM - (int64_t)ln[q].bp) / 32;                               \
        if (r_ < n) n = r_;                                                                                  \
        if (sf_ < n) n = sf_;                                                                                \
    }
#define LANE_STEP(MODE, q)                                                                                   \
    {                                                                                                        \
        uint64_t x_ = PEEK(W, bp##q);                                                                        \
        const lz_entry *e_ = &T[x_ >> Lsh];                                                                  \
        uint32_t a_ = (uint32_t)(x_ >> e_->sh) + e_->param;                                                  \
        op##q[i] = VALUE_##MODE(e_, a_);                                                                     \
        bp##q += e_->adv;                                                                                    \
        if (UNLIKELY(e_->flags & F_SLOW)) {                                                                  \
            sq = q;                                                                                          \
            goto slow_exit;                                                                                  \
        }                                                                                                    \
    }
#define LANE_STORE(q) ln[q].bp = bp##q - (q == sq ? ADV_SLOW : 0); ln[q].o = op##q + i + (q < sq) - OUT;

#if LZ_LANES < 2 || LZ_LANES > 6
#error "LZ_LANES must be 2..6"
#endif
#define FOR_L1(X, ...) X(__VA_ARGS__ 0)
#define FOR_L2(X, ...) X(__VA_ARGS__ 0) X(__VA_ARGS__ 1)
#define FOR_L3(X, ...) X(__VA_ARGS__ 0) X(__VA_ARGS__ 1) X(__VA_ARGS__ 2)
#define FOR_L4(X, ...) X(__VA_ARGS__ 0) X(__VA_ARGS__ 1) X(__VA_ARGS__ 2) X(__VA_ARGS__ 3)
#define FOR_L5(X, ...) X(__VA_ARGS__ 0) X(__VA_ARGS__ 1) X(__VA_ARGS__ 2) X(__VA_ARGS__ 3) X(__VA_ARGS__ 4)
#define FOR_L6(X, ...) X(__VA_ARGS__ 0) X(__VA_ARGS__ 1) X(__VA_ARGS__ 2) X(__VA_ARGS__ 3) X(__VA_ARGS__ 4) \
                       X(__VA_ARGS__ 5)

/* Batched loop of several lanes: n symbols per lane with no bounds check, n = the fewest words left in any
 * lane and no more than the 64-bit reads of every lane allow (<= 32 bits a symbol).  A slow symbol ends the
 * batch; it is decoded by slow16/slow8.  Returns 0 when a lane is too near the end of the payload for
 * unchecked reads (nothing done), else 1. */
/* One batched loop of NL lanes, its per-lane steps the P##_N / P##_DECL / P##_STEP / P##_STORE macros (P = LANE:
 * one symbol a step, DEFINE_BATCH; P = PLANE: two symbols from one 64-bit read, DEFINE_PAIR) */
#define DEFINE_LOOP(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH, P)                                                \
    static int NAME(const lz_job *j, lz_lane *ln, lz_crc *cc) {                                              \
        typedef OUT_TYPE OUT_T;                                                                              \
        OUT_T *OUT = (OUT_T *)j->out;                                                                        \
        const lz_entry *T = j->T;                                                                            \
        const uint32_t *W = j->words;                                                                        \
        const int Lsh = LSH;                                                                                 \
        const int64_t LIM = (j->total - 1) * 32;                                                             \
        int64_t n = INT64_MAX, i;                                                                            \
        int sq = NL;                                                                                         \
        FOR_L##NL(P##_N)                                                                                    \
        if (n <= 0) return 0;                                                                                \
        FOR_L##NL(P##_DECL)                                                                                 \
        CRC_LOAD                                                                                             \
        CRC_LOOP(FOR_L##NL(P##_STEP, MODE,))                                                                \
        i = n - 1;                      /* every lane did i + 1 = n symbols */                               \
    slow_exit:                                                                                               \
        CRC_SAVE                                                                                             \
        FOR_L##NL(P##_STORE)                                                                                \
        if (sq < NL) SLOWF(j, &ln[sq]);                                                                      \
        return 1;                                                                                            \
    }
#define DEFINE_BATCH(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH) DEFINE_LOOP(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH, LANE)

/* one batch function per lane count 1..6, output width and mode: when fewer than LZ_LANES stripes are left,
 * the remaining lanes still run together */
#define DEFINE_NL(NL, MODE)                                                                                  \
    DEFINE_BATCH(batch16_##NL##_##MODE, uint16_t, MODE, NL, slow16, 64 - j->L)                               \
    DEFINE_BATCH(batch8_##NL##_##MODE, uint8_t, MODE, NL, slow8, 64 - j->L)
#define DEFINE_MODE(MODE) DEFINE_NL(1, MODE) DEFINE_NL(2, MODE) DEFINE_NL(3, MODE) DEFINE_NL(4, MODE)          \
                          DEFINE_NL(5, MODE) DEFINE_NL(6, MODE)
DEFINE_MODE(0)
DEFINE_MODE(1)
DEFINE_MODE(2)

typedef int (*batch_fn)(const lz_job *, lz_lane *, lz_crc *);
#define BATCH_ROW(NL) {{batch16_##NL##_0, batch16_##NL##_1, batch16_##NL##_2}, {batch8_##NL##_0, batch8_##NL##_1, batch8_##NL##_2}}
static const batch_fn BATCH[7][2][3] = {{{0}}, BATCH_ROW(1), BATCH_ROW(2), BATCH_ROW(3), BATCH_ROW(4), BATCH_ROW(5),
                                        BATCH_ROW(6)};


/* The LZ_LANES-lane loop once more for the table index width L = 8 as a constant (fastdec.py builds the table
 * of a shorter code over 8 bits; every MiniLM table set has L = 8): the shift of the table index is then an
 * immediate, which frees a register for the loop (the 16-bit loop of 6 lanes had spilled bit positions and
 * output pointers into vector registers; 1.19x on bf16 when it ran this loop).  Any other L runs the generic
 * loop (the copies for L = 9..12 were dropped on 2026-12-07 with the pair and zero-first loops: build time). */
#define DEFINE_BATCH_X(...) DEFINE_BATCH(__VA_ARGS__)
#define DEFINE_LK(L_, MODE)                                                                                  \
    DEFINE_BATCH_X(batch16_L##L_##_##MODE, uint16_t, MODE, LZ_LANES, slow16, 64 - L_)                        \
    DEFINE_BATCH_X(batch8_L##L_##_##MODE, uint8_t, MODE, LZ_LANES, slow8, 64 - L_)
#define DEFINE_LL(L_) DEFINE_LK(L_, 0) DEFINE_LK(L_, 1) DEFINE_LK(L_, 2)
DEFINE_LL(8)
#define BATCH_LROW(L_) {{batch16_L##L_##_0, batch16_L##L_##_1, batch16_L##L_##_2}, \
                        {batch8_L##L_##_0, batch8_L##L_##_1, batch8_L##L_##_2}}
static const batch_fn BATCH_L8[2][3] = BATCH_LROW(8);

/* ------------------------------------------------------------------------------------ zero-first loop
 * A second lane loop (LOOP_ZERO; fastdec.py chooses it per table set) for table sets whose code 0 (one bit) is
 * the zero run of one word (pruned weights: 70 % of the symbols).  Each step first counts the window's leading
 * zero bits (at most ZMAX): that many zero words (ZMAX zeros are stored whatever the count, so the lane needs
 * ZMAX + 1 words of room), then decodes one symbol from the shifted window, which still holds at least
 * 33 - ZMAX valid bits (longer entries carry F_LONG and leave the batch).  A zero run of k > 0 (a slow entry
 * with F_LUT besides F_SLOW) is written in the loop when it fits the stripe; any other slow symbol leaves the
 * batch.  A lane with fewer than ZMAX + 1 words left leaves it too (run_range finishes it symbol by symbol).
 * Four lanes: 1.07-1.13x faster than five or six here (MiniLM int16 75 %, Zen 1), reading the entry's fields from
 * memory 1.04-1.08x faster than one 8-byte read taken apart in registers. */
#define F_LONG 2
#ifndef ZMAX
#define ZMAX 8
#endif
#define LOOP_SINGLE 0
#define LOOP_PAIR 1
#define LOOP_ZERO 2

/* ZK 0: zero words of code 0 counted by leading zero bits (up to ZMAX); ZK K: code 0 + k0 index bits is a run of
 * 1..2^k0 <= 16 zero words (k0 = j->zk), at most one run a step, taken branch-free */
#define ZWORDS_0 ZMAX
#define ZWORDS_K 16
#define ZSKIPBITS_0 ZMAX
#define ZSKIPBITS_K 5
#define ZSKIP_0(q)                                                                                           \
    unsigned zw_ = (unsigned)__builtin_clzll(x_ | (1ull << (63 - ZMAX)));                                    \
    unsigned zb_ = zw_;
#define ZSKIP_K(q)                                                                                           \
    uint64_t zm_ = (uint64_t)0 - (~x_ >> 63);                                                                \
    unsigned zw_ = (unsigned)((((x_ << 1) >> Zsh) + 1) & zm_);                                               \
    unsigned zb_ = (unsigned)(Zbits & zm_);
#define ZLANE_DECL(q) uint64_t bp##q = ln[q].bp; OUT_T *op##q = OUT + ln[q].o; lim[q] = OUT + ln[q].hi - (ZW + 1);
#define ZLANE_N(q)                                                                                           \
    {                                                                                                        \
        int64_t sf_ = (LIM - (int64_t)ln[q].bp) / (ZB + 28);                                                 \
        if (ln[q].hi - ln[q].o < ZW + 1) n = 0;                                                              \
        if (sf_ < n) n = sf_;                                                                                \
    }
/* the entry's fields read from memory (loads folded into the instructions that use them) */
#define ZLANE_STEP(MODE, ZK, q)                                                                              \
    {                                                                                                        \
        uint64_t x_ = PEEK(W, bp##q);                                                                        \
        ZSKIP_##ZK(q)                                                                                        \
        memset(op##q, 0, ZW * sizeof(OUT_T));                                                                \
        op##q += zw_;                                                                                        \
        x_ <<= zb_;                                                                                          \
        const lz_entry *e_ = &T[x_ >> Lsh];                                                                  \
        uint32_t a_ = (uint32_t)(x_ >> e_->sh) + e_->param;                                                  \
        *op##q = VALUE_##MODE(e_, a_);                                                                       \
        bp##q += zb_ + e_->adv;                                                                              \
        if (UNLIKELY(e_->flags & (F_SLOW | F_LONG))) {                                                       \
            /* a zero run of k > 0 that fits the stripe: here; anything else: the slow branch */             \
            int64_t m_ = zrun_len(j, x_, e_);                                                                \
            bp##q -= e_->adv;                                                                                \
            if (m_ <= 0 || m_ > ln[q].hi - (op##q - OUT)) {                                                  \
                sq = q;                                                                                      \
                goto slow_exit;                                                                              \
            }                                                                                                \
            memset(op##q, 0, (size_t)m_ * sizeof(OUT_T));                                                    \
            op##q += m_;                                                                                     \
            bp##q += e_->tot;                                                                                \
        } else {                                                                                             \
            op##q++;                                                                                         \
        }                                                                                                    \
        if (UNLIKELY(op##q > lim[q])) goto slow_exit;                                                        \
    }
#define ZLANE_STORE(q) ln[q].bp = bp##q; ln[q].o = op##q - OUT;


/* the words of a zero run of k > 0 whose entry e starts window x (entries F_SLOW | F_LUT), else 0 */
static inline int64_t zrun_len(const lz_job *j, uint64_t x, const lz_entry *e) {
    if ((e->flags & (F_SLOW | F_LUT | F_INVALID | F_LONG)) != (F_SLOW | F_LUT)) return 0;
    int cl = CLASS(e), c = j->cls[48 + cl], k = j->cls[16 + cl];
    return (int64_t)((x << c) >> (64 - k)) + 1;
}

/* returns 0 when a lane has fewer than ZMAX + 1 words left or is too near the end of the payload */
#define DEFINE_ZERO(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH, ZK)                                                \
    static int NAME(const lz_job *j, lz_lane *ln, lz_crc *cc) {                                                     \
        typedef OUT_TYPE OUT_T;                                                                              \
        OUT_T *OUT = (OUT_T *)j->out;                                                                        \
        const lz_entry *T = j->T;                                                                            \
        const uint32_t *W = j->words;                                                                        \
        const int Lsh = LSH;                                                                                 \
        const int ZW = ZWORDS_##ZK, ZB = ZSKIPBITS_##ZK;                                                     \
        const int Zsh = 64 - j->zk, Zbits = 1 + j->zk;                                                       \
        (void)Zsh;                                                                                           \
        (void)Zbits;                                                                                         \
        const int64_t LIM = (j->total - 1) * 32;                                                             \
        OUT_T *lim[NL];                                                                                      \
        int64_t n = INT64_MAX, i;                                                                            \
        int sq = NL;                                                                                         \
        FOR_L##NL(ZLANE_N)                                                                                   \
        if (n <= 0) return 0;                                                                                \
        FOR_L##NL(ZLANE_DECL)                                                                                \
        CRC_LOAD                                                                                             \
        CRC_LOOP(FOR_L##NL(ZLANE_STEP, MODE, ZK,))                                                           \
    slow_exit:                                                                                               \
        CRC_SAVE                                                                                             \
        FOR_L##NL(ZLANE_STORE)                                                                               \
        if (sq < NL) SLOWF(j, &ln[sq]);                                                                      \
        return 1;                                                                                            \
    }

#ifndef LZ_ZLANES
#define LZ_ZLANES 4
#endif
#define DEFINE_ZERO_X(...) DEFINE_ZERO(__VA_ARGS__)
#define DEFINE_PZ(MODE)                                                                                      \
    DEFINE_ZERO_X(zero16_##MODE, uint16_t, MODE, LZ_ZLANES, slow16, 64 - j->L, 0)                            \
    DEFINE_ZERO_X(zero8_##MODE, uint8_t, MODE, LZ_ZLANES, slow8, 64 - j->L, 0)                               \
    DEFINE_ZERO_X(zero16_L8_##MODE, uint16_t, MODE, LZ_ZLANES, slow16, 56, 0)                                \
    DEFINE_ZERO_X(zero8_L8_##MODE, uint8_t, MODE, LZ_ZLANES, slow8, 56, 0)                                   \
    DEFINE_ZERO_X(zerok16_##MODE, uint16_t, MODE, LZ_ZLANES, slow16, 64 - j->L, K)                           \
    DEFINE_ZERO_X(zerok8_##MODE, uint8_t, MODE, LZ_ZLANES, slow8, 64 - j->L, K)
DEFINE_PZ(0)
DEFINE_PZ(1)
DEFINE_PZ(2)
static const batch_fn BATCH_ZK[2][3] = {{zerok16_0, zerok16_1, zerok16_2}, {zerok8_0, zerok8_1, zerok8_2}};
/* [L == 8][out8][mode] */
static const batch_fn BATCH_Z[2][2][3] = {
    {{zero16_0, zero16_1, zero16_2}, {zero8_0, zero8_1, zero8_2}},
    {{zero16_L8_0, zero16_L8_1, zero16_L8_2}, {zero8_L8_0, zero8_L8_1, zero8_L8_2}}};


/* ------------------------------------------------------------------------------------ two-state loop
 * The lane loop of two code tables (j->two): one symbol a step like LANE's, the lane's state st##q added to the
 * table index and replaced by the entry's next state after the symbol (a slow symbol leaves the batch with the
 * state it was read in: the slow branch decodes it again).  As in the zero-first loop each lane keeps its own
 * output pointer: a zero run of k > 0 (a slow entry with F_LUT, the common symbol of pruned tensors in state A) is
 * written in the loop when it fits the stripe; a lane whose stripe is full leaves the batch.  Zero runs of
 * k <= ZRUN2_MAX_K (F_LONG, unused otherwise in these tables: a fast entry whose value a is the run's index) are
 * taken branch-free as in the zero-first loop: ZRUN2 zero words (64 bytes) are stored at every step, the symbol's
 * value over the first of them unless it is a run, and the output pointer moves on by 1 or a + 1 (a 16-bit run of
 * more than 32 words: a branch stores the rest); a lane with fewer than ZRUN2 + 1 words left leaves the batch
 * (run_range finishes it symbol by symbol).  Four lanes. */
#define ZRUN2_BYTES 64
#define ZRUN2_MAX_K 6
#define ZRUN2 ((int64_t)(ZRUN2_BYTES / sizeof(OUT_T)))
#define F_RUN F_LONG
#ifndef LZ_SLANES
#define LZ_SLANES 4
#endif
#if LZ_SLANES < 2 || LZ_SLANES > LZ_LANES
#error "LZ_SLANES must be 2..LZ_LANES"
#endif
/* the words of a zero run of k > 0 whose entry e starts window x (entries F_SLOW | F_LUT; the entry's code length
 * is its tot minus k: it differs per state), else 0 */
static inline int64_t zrun_len2(const lz_job *j, uint64_t x, const lz_entry *e) {
    if ((e->flags & (F_SLOW | F_LUT | F_INVALID)) != (F_SLOW | F_LUT)) return 0;
    int k = j->cls[16 + CLASS(e)];
    return (int64_t)((x << (e->tot - k)) >> (64 - k)) + 1;
}
#define SLANE_DECL(q) uint64_t bp##q = ln[q].bp, st##q = ln[q].st; OUT_T *op##q = OUT + ln[q].o; \
                      lim[q] = OUT + ln[q].hi - (ZRUN2 + 1);
#define SLANE_N(q)                                                                                           \
    {                                                                                                        \
        int64_t sf_ = (LIM - (int64_t)ln[q].bp) / 32;                                                        \
        if (ln[q].hi - ln[q].o < ZRUN2 + 1) n = 0;                                                           \
        if (sf_ < n) n = sf_;                                                                                \
    }
#define SLANE_STEP(MODE, q)                                                                                  \
    {                                                                                                        \
        uint64_t x_ = PEEK(W, bp##q);                                                                        \
        const lz_entry *e_ = &T[(x_ >> Lsh) + st##q];                                                        \
        uint32_t a_ = (uint32_t)(x_ >> (e_->sh & 63)) + e_->param;                                           \
        OUT_T v_ = VALUE_##MODE(e_, a_);                                                                     \
        uint32_t rm_ = (uint32_t)0 - ((e_->flags >> 1) & 1);      /* all ones: a short zero run */          \
        memset(op##q, 0, ZRUN2 * sizeof(OUT_T));                                                             \
        *op##q = (OUT_T)(v_ & ~rm_);                                                                         \
        bp##q += e_->adv;                                                                                    \
        if (UNLIKELY(e_->flags & F_SLOW)) {                                                                  \
            int64_t m_ = zrun_len2(j, x_, e_);                                                               \
            bp##q -= e_->adv;                                                                                \
            if (m_ <= 0 || m_ > ln[q].hi - (op##q - OUT)) {                                                  \
                sq = q;                                                                                      \
                goto slow_exit;                                                                              \
            }                                                                                                \
            memset(op##q, 0, (size_t)m_ * sizeof(OUT_T));                                                    \
            op##q += m_;                                                                                     \
            bp##q += e_->tot;                                                                                \
        } else {                                                                                             \
            uint32_t ra_ = a_ & rm_;                                                                         \
            if (sizeof(OUT_T) > 1 && UNLIKELY(ra_ >= ZRUN2)) {                                               \
                if ((int64_t)ra_ + 1 > ln[q].hi - (op##q - OUT)) {                                           \
                    bp##q -= e_->adv;                                                                        \
                    sq = q;                                                                                  \
                    goto slow_exit;                                                                          \
                }                                                                                            \
                memset(op##q + ZRUN2, 0, (size_t)(ra_ + 1 - ZRUN2) * sizeof(OUT_T));                         \
            }                                                                                                \
            op##q += 1 + ra_;                                                                                \
        }                                                                                                    \
        st##q = NEXT_ST(e_);                                                                                 \
        if (UNLIKELY(op##q > lim[q])) goto slow_exit;                                                        \
    }
#define SLANE_STORE(q) ln[q].bp = bp##q; ln[q].o = op##q - OUT; ln[q].st = st##q;

/* returns 0 when a lane is too near the end of the payload for unchecked reads (nothing done), else 1 */
/* the two-state loops of lane macros P##_N, _DECL, _STEP, _STORE, with P##_PRE declared before them */
#define DEFINE_STATE_P(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH, P)                                                 \
    static int NAME(const lz_job *j, lz_lane *ln, lz_crc *cc) {                                              \
        typedef OUT_TYPE OUT_T;                                                                              \
        OUT_T *OUT = (OUT_T *)j->out;                                                                        \
        const lz_entry *T = j->T;                                                                            \
        const uint32_t *W = j->words;                                                                        \
        const int Lsh = LSH;                                                                                 \
        P##_PRE                                                                                          \
        const int64_t LIM = (j->total - 1) * 32;                                                             \
        OUT_T *lim[NL];                                                                                      \
        int64_t n = INT64_MAX, i;                                                                            \
        int sq = NL;                                                                                         \
        FOR_L##NL(P##_N)                                                                                     \
        if (n <= 0) return 0;                                                                                \
        FOR_L##NL(P##_DECL)                                                                                  \
        CRC_LOAD                                                                                             \
        CRC_LOOP(FOR_L##NL(P##_STEP, MODE,))                                                                 \
    slow_exit:                                                                                               \
        CRC_SAVE                                                                                             \
        FOR_L##NL(P##_STORE)                                                                                 \
        if (sq < NL) SLOWF(j, &ln[sq]);                                                                      \
        return 1;                                                                                            \
    }
#define SLANE_PRE
#define DEFINE_STATE(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH) DEFINE_STATE_P(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH, SLANE)
#define DEFINE_NL2(NL, MODE)                                                                                 \
    DEFINE_STATE(bstate16_##NL##_##MODE, uint16_t, MODE, NL, slow16, 64 - j->L)                              \
    DEFINE_STATE(bstate8_##NL##_##MODE, uint8_t, MODE, NL, slow8, 64 - j->L)
#define DEFINE_MODE2(MODE) DEFINE_NL2(1, MODE) DEFINE_NL2(2, MODE) DEFINE_NL2(3, MODE) DEFINE_NL2(4, MODE)     \
                           DEFINE_NL2(5, MODE) DEFINE_NL2(6, MODE)
DEFINE_MODE2(0)
DEFINE_MODE2(1)
DEFINE_MODE2(2)
#define BATCH2_ROW(NL) {{bstate16_##NL##_0, bstate16_##NL##_1, bstate16_##NL##_2}, \
                        {bstate8_##NL##_0, bstate8_##NL##_1, bstate8_##NL##_2}}
static const batch_fn BATCH2[7][2][3] = {{{0}}, BATCH2_ROW(1), BATCH2_ROW(2), BATCH2_ROW(3), BATCH2_ROW(4),
                                         BATCH2_ROW(5), BATCH2_ROW(6)};
/* the LZ_SLANES-lane loop once more for L = 8 (the shift of the table index an immediate, as BATCH_L8) */
#define DEFINE_STATE_X(...) DEFINE_STATE(__VA_ARGS__)
#define DEFINE_SL8(MODE)                                                                                     \
    DEFINE_STATE_X(bstate16_L8_##MODE, uint16_t, MODE, LZ_SLANES, slow16, 56)                                \
    DEFINE_STATE_X(bstate8_L8_##MODE, uint8_t, MODE, LZ_SLANES, slow8, 56)
DEFINE_SL8(0)
DEFINE_SL8(1)
DEFINE_SL8(2)
static const batch_fn BATCH2_L8[2][3] = {{bstate16_L8_0, bstate16_L8_1, bstate16_L8_2},
                                         {bstate8_L8_0, bstate8_L8_1, bstate8_L8_2}};

/* The two-state zero-first loop (j->two with LOOP_ZERO: table sets whose one-word zero run is the one-bit code 0
 * in both states, as pruned int16 / int8 sets with two code tables: lz_build_tables2 chooses it).  As the one-table
 * zero-first loop (ZLANE_STEP, ZK 0): each step counts the window's leading zero bits (at most ZMAX, ZMAX zero
 * words stored whatever the count), which are that many zero words in either state; after at least one the lane's
 * state is the zero's next state (stZ, branch-free), then one symbol from the shifted window in its state (entries
 * of more than 33 - ZMAX bits are slow in these tables: they leave the batch).  Zero runs (F_RUN: k <= ZRUN2_MAX_K,
 * or slow entries with F_LUT) are written in the loop by a branch when they fit the stripe, not by the two-state
 * loop's 64-byte stores every step (rare after the one-bit zeros; the stores cost more).  Four lanes. */
#define ZSLANE_DECL(q) uint64_t bp##q = ln[q].bp, st##q = ln[q].st; OUT_T *op##q = OUT + ln[q].o; \
                       lim[q] = OUT + ln[q].hi - (ZMAX + 1);
#define ZSLANE_N(q)                                                                                          \
    {                                                                                                        \
        int64_t sf_ = (LIM - (int64_t)ln[q].bp) / (ZMAX + 28);                                               \
        if (ln[q].hi - ln[q].o < ZMAX + 1) n = 0;                                                            \
        if (sf_ < n) n = sf_;                                                                                \
    }
#define ZSLANE_STEP(MODE, q)                                                                                 \
    {                                                                                                        \
        uint64_t x_ = PEEK(W, bp##q);                                                                        \
        unsigned zw_ = (unsigned)__builtin_clzll(x_ | (1ull << (63 - ZMAX)));                                \
        memset(op##q, 0, ZMAX * sizeof(OUT_T));                                                              \
        op##q += zw_;                                                                                        \
        x_ <<= zw_;                                                                                          \
        bp##q += zw_;                                                                                        \
        st##q = zw_ ? stZ : st##q;                                                                           \
        const lz_entry *e_ = &T[(x_ >> Lsh) + st##q];                                                        \
        uint32_t a_ = (uint32_t)(x_ >> (e_->sh & 63)) + e_->param;                                           \
        *op##q = VALUE_##MODE(e_, a_);                                                                       \
        bp##q += e_->adv;                                                                                    \
        if (UNLIKELY(e_->flags & (F_SLOW | F_RUN))) {                                                        \
            /* a zero run that fits the stripe: here; anything else: the slow branch */                      \
            int64_t m_ = (e_->flags & F_RUN) ? (int64_t)a_ + 1 : zrun_len2(j, x_, e_);                       \
            bp##q -= e_->adv;                                                                                \
            if (m_ <= 0 || m_ > ln[q].hi - (op##q - OUT)) {                                                  \
                sq = q;                                                                                      \
                goto slow_exit;                                                                              \
            }                                                                                                \
            memset(op##q, 0, (size_t)m_ * sizeof(OUT_T));                                                    \
            op##q += m_;                                                                                     \
            bp##q += e_->tot;                                                                                \
        } else {                                                                                             \
            op##q++;                                                                                         \
        }                                                                                                    \
        st##q = NEXT_ST(e_);                                                                                 \
        if (UNLIKELY(op##q > lim[q])) goto slow_exit;                                                        \
    }
#define ZSLANE_STORE(q) ln[q].bp = bp##q; ln[q].o = op##q - OUT; ln[q].st = st##q;
/* returns 0 when a lane has fewer than ZMAX + 1 words left or is too near the end of the payload */
/* the state after a one-bit zero (code 0 of state A) */
#define ZSLANE_PRE const uint64_t stZ = NEXT_ST(&T[0]);
#define DEFINE_ZSTATE(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH) DEFINE_STATE_P(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH, ZSLANE)
#ifndef LZ_ZSLANES
#define LZ_ZSLANES 4
#endif
#if LZ_ZSLANES < 2 || LZ_ZSLANES > LZ_LANES
#error "LZ_ZSLANES must be 2..LZ_LANES"
#endif
#define DEFINE_ZSTATE_X(...) DEFINE_ZSTATE(__VA_ARGS__)
#define DEFINE_ZS(MODE)                                                                                      \
    DEFINE_ZSTATE_X(zstate16_##MODE, uint16_t, MODE, LZ_ZSLANES, slow16, 64 - j->L)                          \
    DEFINE_ZSTATE_X(zstate8_##MODE, uint8_t, MODE, LZ_ZSLANES, slow8, 64 - j->L)                             \
    DEFINE_ZSTATE_X(zstate16_L8_##MODE, uint16_t, MODE, LZ_ZSLANES, slow16, 56)                              \
    DEFINE_ZSTATE_X(zstate8_L8_##MODE, uint8_t, MODE, LZ_ZSLANES, slow8, 56)
DEFINE_ZS(0)
DEFINE_ZS(1)
DEFINE_ZS(2)
/* [L == 8][out8][mode] */
static const batch_fn BATCH2_Z[2][2][3] = {
    {{zstate16_0, zstate16_1, zstate16_2}, {zstate8_0, zstate8_1, zstate8_2}},
    {{zstate16_L8_0, zstate16_L8_1, zstate16_L8_2}, {zstate8_L8_0, zstate8_L8_1, zstate8_L8_2}}};


/* ------------------------------------------------------------------------------------------- pair loop
 * The lane loop (LOOP_PAIR) of table sets whose symbols are short (fastdec.py: at most 14 bits on average,
 * bf16): two symbols from one 64-bit window.  The window holds 64 - s valid bits (s = bit position mod 32);
 * the second symbol is looked up in the window shifted by the first one's adv, and one test s + adv1 + adv2
 * > 64 finds both a pair longer than the window and a slow symbol (adv ADV_SLOW); the lane then leaves the
 * batch where the pair starts and the slow branch decodes its first symbol.  Four lanes (MiniLM bf16, Zen 1:
 * 1.09-1.12x over the 6-lane loop of one symbol a step; 5 lanes 1.09x, 6 lanes 0.97x). */
#ifndef LZ_PLANES
#define LZ_PLANES 4
#endif
#define PLANE_DECL(q) uint64_t bp##q = ln[q].bp; OUT_T *op##q = OUT + ln[q].o;
#define PLANE_N(q)                                                                                           \
    {                                                                                                        \
        int64_t r_ = (ln[q].hi - ln[q].o) / 2, sf_ = (LIM - (int64_t)ln[q].bp) / 64;                         \
        if (r_ < n) n = r_;                                                                                  \
        if (sf_ < n) n = sf_;                                                                                \
    }
#define PLANE_STEP(MODE, q)                                                                                  \
    {                                                                                                        \
        unsigned s_ = (unsigned)(bp##q & 31);                                                                \
        uint64_t x_ = PEEK(W, bp##q);                                                                        \
        const lz_entry *e1_ = &T[x_ >> Lsh];                                                                 \
        uint32_t a1_ = (uint32_t)(x_ >> e1_->sh) + e1_->param;                                               \
        unsigned t1_ = e1_->adv;                                                                             \
        uint64_t y_ = x_ << (t1_ & 63);                                                                      \
        const lz_entry *e2_ = &T[y_ >> Lsh];                                                                 \
        uint32_t a2_ = (uint32_t)(y_ >> e2_->sh) + e2_->param;                                               \
        unsigned t_ = t1_ + e2_->adv;                                                                        \
        op##q[2 * i] = VALUE_##MODE(e1_, a1_);                                                               \
        op##q[2 * i + 1] = VALUE_##MODE(e2_, a2_);                                                           \
        if (UNLIKELY(s_ + t_ > 64)) {                                                                        \
            sq = q;                                                                                          \
            goto slow_exit;                                                                                  \
        }                                                                                                    \
        bp##q += t_;                                                                                         \
    }
#define PLANE_STORE(q) ln[q].bp = bp##q; ln[q].o = op##q + 2 * i + 2 * (q < sq) - OUT;
#define DEFINE_PAIR(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH) DEFINE_LOOP(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH, PLANE)
#define DEFINE_PAIR_X(...) DEFINE_PAIR(__VA_ARGS__)
/* The pair loop of the bf16 table sets (L = 8, 16-bit words, LUT or RANGE mode, four lanes) in assembly (x86-64
 * with BMI2 and GCC-style inline assembly): the same steps as PLANE_STEP, bit for bit, with fewer instructions than
 * the compilers make of them (gcc 12: 31 a lane-step, clang 14: 33; here 28): the word index and bit offset of the
 * bit position by shrx / bzhi from one register holding 5, the window read and rotated by one rorx from memory,
 * s + adv1 + adv2 accumulated in one register that is both the window test and, added to the bit position with
 * its low 5 bits cleared, the lane's next bit position.  One asm statement takes a step of each of the four lanes;
 * a lane whose pair is slow or longer than its window ends it (lanes before it have taken their step, it has
 * written its two words but not moved), and the C around it leaves the batch as PLANE_STEP does. */
#if defined(__x86_64__) && defined(__BMI2__) && defined(__GNUC__) && !defined(LZ_NO_ASM)
#define LZ_PAIR_ASM 1
#define LZ_ALANES LZ_PLANES           /* 4; 5 and 6 lanes measured 0.99x and 0.98x of 4 (MiniLM bf16) */
#if LZ_ALANES < 4 || LZ_ALANES > 6
#error "the pair loop in assembly takes 4..6 lanes"
#endif
#ifndef PASM_C5
#define PASM_C5 (LZ_ALANES < 6)
#endif
/* one lane-step: %[bpQ] the lane's bit position, %[opQ] its output pointer (memory), %[i] the step; PASM_C5: the
 * word index and bit offset by shrx / bzhi with a register holding 5, else (six lanes: no register left for it)
 * by shr / and of copies */
#define PASM_LANE(Q, LUTLOAD1, LUTLOAD2)                                                                     \
    PASM_WORD(Q)                                                                                             \
    "rorx $32, (%[w],%%rax,4), %%rax\n\t"                                                                    \
    "shlx %%rcx, %%rax, %%rax\n\t"                                                                           \
    "mov %%rax, %%rdx\n\t"                                                                                   \
    "shr $56, %%rdx\n\t"                                                                                     \
    "movzbl 3(%[t],%%rdx,8), %%esi\n\t"                                                                      \
    "add %%esi, %%ecx\n\t"                                                                                   \
    "shlx %%rsi, %%rax, %%rsi\n\t"                                                                           \
    "movzbl 2(%[t],%%rdx,8), %%edi\n\t"                                                                      \
    "shrx %%rdi, %%rax, %%rax\n\t"                                                                           \
    "add 4(%[t],%%rdx,8), %%eax\n\t"                                                                         \
    "mov %%rsi, %%rdx\n\t"                                                                                   \
    "shr $56, %%rdx\n\t"                                                                                     \
    "movzbl 3(%[t],%%rdx,8), %%edi\n\t"                                                                      \
    "add %%edi, %%ecx\n\t"                                                                                   \
    "movzbl 2(%[t],%%rdx,8), %%edi\n\t"                                                                      \
    "shrx %%rdi, %%rsi, %%rsi\n\t"                                                                           \
    "add 4(%[t],%%rdx,8), %%esi\n\t"                                                                         \
    LUTLOAD1                                                                                                 \
    LUTLOAD2                                                                                                 \
    "mov %[op" #Q "], %%rdi\n\t"                                                                             \
    "mov %%ax, (%%rdi,%[i],4)\n\t"                                                                           \
    "mov %%si, 2(%%rdi,%[i],4)\n\t"                                                                          \
    "cmp $64, %%ecx\n\t"                                                                                     \
    "ja 9" #Q "f\n\t"                                                                                        \
    "and $-32, %[bp" #Q "]\n\t"                                                                              \
    "add %%rcx, %[bp" #Q "]\n\t"
#if PASM_C5
#define PASM_WORD(Q) "shrx %[c5], %[bp" #Q "], %%rax\n\tbzhi %[c5], %[bp" #Q "], %%rcx\n\t"
#define PASM_C5IN , [c5] "r"(c5)
#else
#define PASM_WORD(Q) "mov %[bp" #Q "], %%rax\n\tmov %k[bp" #Q "], %%ecx\n\tshr $5, %%rax\n\tand $31, %%ecx\n\t"
#define PASM_C5IN
#endif
#define PASM_LUT1 "movzwl 0x8000(%[t],%%rax,2), %%eax\n\t"
#define PASM_LUT2 "movzwl 0x8000(%[t],%%rsi,2), %%esi\n\t"
#define PASM_X(Q, L1, L2) PASM_LANE(Q, L1, L2)
#define PASM_EXIT(Q) "9" #Q ": movl $" #Q ", %[sq]\n\tjmp 99f\n\t"
#define PASM_OUT(Q) , [bp##Q] "+r"(bp##Q)
#define PASM_OP(Q) , [op##Q] "m"(op##Q)
#define PASM_BODY4(L1, L2) PASM_X(0, L1, L2) PASM_X(1, L1, L2) PASM_X(2, L1, L2) PASM_X(3, L1, L2)
#define PASM_BODY5(L1, L2) PASM_BODY4(L1, L2) PASM_X(4, L1, L2)
#define PASM_BODY6(L1, L2) PASM_BODY5(L1, L2) PASM_X(5, L1, L2)
#define PASM_EXITS4 PASM_EXIT(0) PASM_EXIT(1) PASM_EXIT(2) PASM_EXIT(3)
#define PASM_EXITS5 PASM_EXITS4 PASM_EXIT(4)
#define PASM_EXITS6 PASM_EXITS5 PASM_EXIT(5)
#define PASM_STEPS_NL(NL, L1, L2)                                                                            \
    {                                                                                                        \
        __asm__ volatile(PASM_BODY##NL(L1, L2) "jmp 99f\n\t" PASM_EXITS##NL "99:\n\t"                        \
                         : [sq] "+m"(sq) FOR_L##NL(PASM_OUT)                                                 \
                         : [w] "r"(W), [t] "r"(T), [i] "r"(i) PASM_C5IN FOR_L##NL(PASM_OP)                          \
                         : "rax", "rcx", "rdx", "rsi", "rdi", "cc", "memory");                               \
        if (UNLIKELY(sq < NL)) goto slow_exit;                                                               \
    }
#define PASM_STEPS_NLX(...) PASM_STEPS_NL(__VA_ARGS__)
#define PASM_STEPS_0 PASM_STEPS_NLX(LZ_ALANES, PASM_LUT1, PASM_LUT2)
#define PASM_STEPS_1 PASM_STEPS_NLX(LZ_ALANES, "", "")
#define PASM_DECL(q) uint64_t bp##q = ln[q].bp; OUT_T *op##q = OUT + ln[q].o;
#define PASM_STORE(q) ln[q].bp = bp##q; ln[q].o = op##q + 2 * i + 2 * (q < sq) - OUT;
/* DEFINE_LOOP with the lane-steps of PASM_STEPS_##MODE */
#define DEFINE_PAIR_ASM(NAME, MODE, NL)                                                                      \
    static int NAME(const lz_job *j, lz_lane *ln, lz_crc *cc) {                                              \
        typedef uint16_t OUT_T;                                                                              \
        OUT_T *OUT = (OUT_T *)j->out;                                                                        \
        const lz_entry *T = j->T;                                                                            \
        const uint32_t *W = j->words;                                                                        \
        const int64_t LIM = (j->total - 1) * 32;                                                             \
        int64_t n = INT64_MAX, i;                                                                            \
        int sq = NL;                                                                                         \
        uint64_t c5 = 5;                                                                                     \
        (void)c5;                                                                                            \
        FOR_L##NL(PLANE_N)                                                                                   \
        if (n <= 0) return 0;                                                                                \
        FOR_L##NL(PASM_DECL)                                                                                 \
        CRC_LOAD                                                                                             \
        CRC_LOOP(PASM_STEPS_##MODE)                                                                          \
        i = n - 1;                      /* every lane did i + 1 = n steps */                                 \
    slow_exit:                                                                                               \
        CRC_SAVE                                                                                             \
        FOR_L##NL(PASM_STORE)                                                                                \
        if (sq < NL) slow16(j, &ln[sq]);                                                                     \
        return 1;                                                                                            \
    }
#define DEFINE_PAIR_ASM_X(...) DEFINE_PAIR_ASM(__VA_ARGS__)
DEFINE_PAIR_ASM_X(pair16_L8a_0, 0, LZ_ALANES)
DEFINE_PAIR_ASM_X(pair16_L8a_1, 1, LZ_ALANES)
#endif
#define DEFINE_PAIRS(MODE)                                                                                   \
    DEFINE_PAIR_X(pair16_##MODE, uint16_t, MODE, LZ_PLANES, slow16, 64 - j->L)                               \
    DEFINE_PAIR_X(pair8_##MODE, uint8_t, MODE, LZ_PLANES, slow8, 64 - j->L)                                  \
    DEFINE_PAIR_X(pair8_L8_##MODE, uint8_t, MODE, LZ_PLANES, slow8, 56)
DEFINE_PAIRS(0)
DEFINE_PAIRS(1)
DEFINE_PAIRS(2)
DEFINE_PAIR_X(pair16_L8_2, uint16_t, 2, LZ_PLANES, slow16, 56)
#ifdef LZ_PAIR_ASM
#define PAIR16_L8_0 pair16_L8a_0
#define PAIR16_L8_1 pair16_L8a_1
#else
DEFINE_PAIR_X(pair16_L8_0, uint16_t, 0, LZ_PLANES, slow16, 56)
DEFINE_PAIR_X(pair16_L8_1, uint16_t, 1, LZ_PLANES, slow16, 56)
#define PAIR16_L8_0 pair16_L8_0
#define PAIR16_L8_1 pair16_L8_1
#endif
/* The pair loop of two code tables (j->two with LOOP_PAIR: lz_build_tables2 takes it where the one-table pair loop
 * would be taken, by the state-A codes; bf16 sets): PLANE_STEP with the lane's state added to the first symbol's
 * table index, the first symbol's next state to the second's, and the second's kept.  A lane leaving the batch keeps
 * the state its pair starts in.  Zero runs are slow entries here (no F_RUN). */
#define PLANE2_DECL(q) uint64_t bp##q = ln[q].bp, st##q = ln[q].st; OUT_T *op##q = OUT + ln[q].o;
#define PLANE2_N(q) PLANE_N(q)
#define PLANE2_STEP(MODE, q)                                                                                 \
    {                                                                                                        \
        unsigned s_ = (unsigned)(bp##q & 31);                                                                \
        uint64_t x_ = PEEK(W, bp##q);                                                                        \
        const lz_entry *e1_ = &T[(x_ >> Lsh) + st##q];                                                       \
        uint32_t a1_ = (uint32_t)(x_ >> (e1_->sh & 63)) + e1_->param;                                        \
        unsigned t1_ = e1_->adv;                                                                             \
        uint64_t y_ = x_ << (t1_ & 63);                                                                      \
        const lz_entry *e2_ = &T[(y_ >> Lsh) + NEXT_ST(e1_)];                                                \
        uint32_t a2_ = (uint32_t)(y_ >> (e2_->sh & 63)) + e2_->param;                                        \
        unsigned t_ = t1_ + e2_->adv;                                                                        \
        op##q[2 * i] = VALUE_##MODE(e1_, a1_);                                                               \
        op##q[2 * i + 1] = VALUE_##MODE(e2_, a2_);                                                           \
        if (UNLIKELY(s_ + t_ > 64)) {                                                                        \
            sq = q;                                                                                          \
            goto slow_exit;                                                                                  \
        }                                                                                                    \
        bp##q += t_;                                                                                         \
        st##q = NEXT_ST(e2_);                                                                                \
    }
#define PLANE2_STORE(q) PLANE_STORE(q) ln[q].st = st##q;
#define DEFINE_PAIR2(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH) DEFINE_LOOP(NAME, OUT_TYPE, MODE, NL, SLOWF, LSH, PLANE2)
#define DEFINE_PAIR2_X(...) DEFINE_PAIR2(__VA_ARGS__)
#define DEFINE_PAIRS2(MODE)                                                                                  \
    DEFINE_PAIR2_X(pstate16_##MODE, uint16_t, MODE, LZ_PLANES, slow16, 64 - j->L)                            \
    DEFINE_PAIR2_X(pstate8_##MODE, uint8_t, MODE, LZ_PLANES, slow8, 64 - j->L)                               \
    DEFINE_PAIR2_X(pstate16_L8_##MODE, uint16_t, MODE, LZ_PLANES, slow16, 56)                                \
    DEFINE_PAIR2_X(pstate8_L8_##MODE, uint8_t, MODE, LZ_PLANES, slow8, 56)
DEFINE_PAIRS2(0)
DEFINE_PAIRS2(1)
DEFINE_PAIRS2(2)
/* [L == 8][out8][mode] */
static const batch_fn BATCH2_P[2][2][3] = {
    {{pstate16_0, pstate16_1, pstate16_2}, {pstate8_0, pstate8_1, pstate8_2}},
    {{pstate16_L8_0, pstate16_L8_1, pstate16_L8_2}, {pstate8_L8_0, pstate8_L8_1, pstate8_L8_2}}};

/* [L == 8][out8][mode] */
static const batch_fn BATCH_P[2][2][3] = {
    {{pair16_0, pair16_1, pair16_2}, {pair8_0, pair8_1, pair8_2}},
    {{PAIR16_L8_0, PAIR16_L8_1, pair16_L8_2}, {pair8_L8_0, pair8_L8_1, pair8_L8_2}}};

/* Finish lane ln one symbol at a time with bounds-checked reads (near the end of the payload). */
static void finish(const lz_job *j, lz_lane *ln) {
    while (ln->o < ln->hi && !ln->bad) {
        if (j->out8) slow8(j, ln);
        else slow16(j, ln);
    }
}

/* After a lane's words are all written: do its bits end where its symbols end (no overrun, no leftover
 * word, zero padding)? */
static inline int lane_tail_ok(const lz_job *j, const lz_lane *ln) {
    int64_t s = ln->s;
    uint64_t E = (uint64_t)(j->starts[s] + j->nw[s]) * 32;
    if (ln->bad || ln->o != ln->hi || ln->bp > E || E - ln->bp >= 32) return 0;
    unsigned r = (unsigned)(E - ln->bp);
    return r == 0 || (j->words[(E >> 5) - 1] & ((1u << r) - 1)) == 0;
}

/* start stripe s in lane ln: 0 if its header is wrong (then the exact decoder reports it) */
static int lane_start(const lz_job *j, lz_lane *ln, int64_t s) {
    int64_t lo = s * j->S, n_exp = j->S < j->numel - lo ? j->S : j->numel - lo;
    uint32_t hdr = j->words[j->starts[s]];
    ln->s = s;
    ln->bp = (uint64_t)(j->starts[s] + 1) * 32;
    ln->o = lo;
    ln->hi = lo + n_exp;
    ln->bad = 0;
    ln->st = 0;
    return (hdr >> 16) == 0x4C5A && (int64_t)(hdr & 0xFFFF) + 1 == n_exp;
}

static void record(lz_range *r, int rc, int64_t s, int64_t word) {
    if (rc != ERR_OK && (r->rc == ERR_OK || s < r->stripe)) {
        r->rc = rc;
        r->stripe = s;
        r->word = word;
    }
}

/* a lane has written all its words (or is bad): check it, decode it again exactly if needed */
static void lane_done(const lz_job *j, lz_range *r, lz_lane *ln) {
    if (lane_tail_ok(j, ln)) return;
    int64_t word;
    int rc = exact_stripe(j, ln->s, &word);
    record(r, rc, ln->s, word);
}

/* Decode stripes [r->lo, r->hi).  With CRCs (checked by the CRC cursor, mostly inside the lane loops), the first
 * CRC mismatch wins over any decode error, as when all CRCs are checked before decoding. */
/* the lane cannot take another step of the batched loop: fewer than need words left, or its 64-bit reads
 * would pass the end of the payload within one step of at most bits bits */
static int lane_blocked(const lz_job *j, const lz_lane *ln, int64_t need, int64_t bits) {
    return ln->hi - ln->o < need || ((int64_t)(j->total - 1) * 32 - (int64_t)ln->bp) / bits <= 0;
}

static void run_range(lz_range *r) {
    const lz_job *j = r->job;
    batch_fn batchN;
    int NLN;
    int64_t need, bits;
    /* the tail loops of two-state sets (BATCH2 of fewer lanes) need this many words of room */
    int64_t need2 = ZRUN2_BYTES / (j->out8 ? 1 : 2) + 1;
    if (j->two && j->loop == LOOP_ZERO) {
        batchN = BATCH2_Z[j->L == 8][j->out8][j->mode];
        NLN = LZ_ZSLANES;
        need = ZMAX + 1;
        bits = ZMAX + 28;
    } else if (j->two && j->loop == LOOP_PAIR) {
        batchN = BATCH2_P[j->L == 8][j->out8][j->mode];
        NLN = LZ_PLANES;
        need = 2;
        bits = 64;
    } else if (j->two) {
        batchN = j->L == 8 ? BATCH2_L8[j->out8][j->mode] : BATCH2[LZ_SLANES][j->out8][j->mode];
        NLN = LZ_SLANES;
        need = need2;
        bits = 32;
    } else if (j->loop == LOOP_ZERO) {
        batchN = j->zk ? BATCH_ZK[j->out8][j->mode] : BATCH_Z[j->L == 8][j->out8][j->mode];
        NLN = LZ_ZLANES;
        need = (j->zk ? ZWORDS_K : ZWORDS_0) + 1;
        bits = (j->zk ? ZSKIPBITS_K : ZSKIPBITS_0) + 28;
    } else {
        batchN = j->L == 8 ? BATCH_L8[j->out8][j->mode] : BATCH[LZ_LANES][j->out8][j->mode];
        NLN = LZ_LANES;
        need = 1;
        bits = 32;
        if (j->loop == LOOP_PAIR) {
            batchN = BATCH_P[j->L == 8][j->out8][j->mode];
            NLN = LZ_PLANES;
            need = 2;
            bits = 64;
        }
    }
    lz_lane ln[LZ_LANES];
    int active[LZ_LANES];
    int64_t next = r->lo;
    int n_active = 0;
    r->rc = ERR_OK;
    lz_crc cc;
    crc_init_range(&cc, j, r->lo, r->hi);
#define CRC_BAD_RETURN                                                                                       \
    if (UNLIKELY(cc.bad >= 0)) {                                                                             \
        r->rc = ERR_CRC;                                                                                     \
        r->stripe = cc.bad;                                                                                  \
        r->word = 0;                                                                                         \
        return;                                                                                              \
    }
    CRC_BAD_RETURN
    /* take the next stripe into lane q; 0 when there is none left (or an error stops the range) */
#define TAKE(q)                                                                                              \
    ({                                                                                                       \
        int got_ = 0;                                                                                        \
        while (next < r->hi && r->rc == ERR_OK) {                                                            \
            int64_t s_ = next++;                                                                             \
            if (lane_start(j, &ln[q], s_)) { got_ = 1; break; }                                              \
            int64_t w_;                                                                                      \
            int rc_ = exact_stripe(j, s_, &w_);                                                              \
            record(r, rc_, s_, w_);                                                                          \
        }                                                                                                    \
        got_;                                                                                                \
    })
    for (int q = 0; q < NLN; q++) {
        active[q] = TAKE(q);
        n_active += active[q];
    }
    while (n_active == NLN) {
        int ok_ = batchN(j, ln, &cc);
        CRC_BAD_RETURN
        if (!ok_) {
            /* a lane is too near the end of its stripe or of the payload for the loop: finish it safely */
            for (int q = 0; q < NLN; q++)
                if (ln[q].o < ln[q].hi && lane_blocked(j, &ln[q], need, bits)) finish(j, &ln[q]);
        }
        for (int q = 0; q < NLN; q++) {
            if (ln[q].o >= ln[q].hi || ln[q].bad) {
                lane_done(j, r, &ln[q]);
                active[q] = TAKE(q);
                if (!active[q]) n_active--;
            }
        }
    }
    /* no stripe left to take: the lanes still busy run on together (a batch function of that many lanes),
     * each leaving when its stripe is done */
    lz_lane tl[LZ_LANES];
    int nt = 0;
    for (int q = 0; q < NLN; q++)
        if (active[q]) tl[nt++] = ln[q];
    while (nt > 0) {
        int ok_ = (j->two ? BATCH2 : BATCH)[nt][j->out8][j->mode](j, tl, &cc);
        CRC_BAD_RETURN
        if (!ok_) {
            for (int q = 0; q < nt; q++) {
                int64_t sf = ((int64_t)(j->total - 1) * 32 - (int64_t)tl[q].bp) / 32;
                if ((sf <= 0 || (j->two && tl[q].hi - tl[q].o < need2)) && tl[q].o < tl[q].hi) finish(j, &tl[q]);
            }
        }
        for (int q = 0; q < nt;) {
            if (tl[q].o >= tl[q].hi || tl[q].bad) {
                lane_done(j, r, &tl[q]);
                tl[q] = tl[--nt];
            } else {
                q++;
            }
        }
    }
    /* the CRCs the loops did not check (after a decode error: of the stripes not taken too) */
    crc_finish(&cc);
    CRC_BAD_RETURN
#undef TAKE
#undef CRC_BAD_RETURN
}

static void *run_thread(void *arg) {
    run_range((lz_range *)arg);
    return NULL;
}

#define MAX_THREADS 64

/* Decode a tensor's (or stream's) stripes.  Returns 0, a decode error code (ERR_*, err[0] = stripe,
 * err[1] = decoded word of the stripe), ERR_CRC (err[0] = the first stripe whose CRC does not match),
 * ERR_INDEX (a stripe of fewer than 2 words, or the word counts nw do not add up to total) or ERR_NOMEM.
 * T: the combined table (4096 entries, 2^L used) followed by the kernel's LUT3 (8192 entries); lut3 the
 * table set's LUT3; cls: kind, k, param and c of the 16 classes (4 x 16 int32). */
EXPORT int lz_decode(const uint32_t *words, int64_t total, const uint32_t *nw, int64_t n_stripes, int64_t S, int64_t numel, const lz_entry *T, int L, int mode,
                     const uint16_t *lut3, int64_t n_lut3, const int32_t *cls, void *out,
                     int out8, const uint32_t *crcs, int threads, int64_t *err) {
    pthread_once(&crc_once, crc_init);
    if (n_stripes <= 0) return total == 0 ? ERR_OK : ERR_INDEX;
    int64_t *starts = malloc((size_t)n_stripes * sizeof(int64_t));
    if (!starts) return ERR_NOMEM;
    int64_t sum = 0;
    for (int64_t s = 0; s < n_stripes; s++) {
        starts[s] = sum;
        if (nw[s] < 2) sum = total + 1;
        sum += nw[s];
        if (sum > total) break;
    }
    if (sum != total) {
        free(starts);
        return ERR_INDEX;
    }
    /* mode: the fast-path mode, plus the lane loop << 2 (fastdec.py) */
    int loop = mode >= 0 ? (mode >> 2) & 3 : LOOP_SINGLE, zk = mode >= 0 ? (mode >> 4) & 7 : 0;
    int two = mode >= 0 ? (mode >> 7) & 1 : 0;
    if (two && loop > LOOP_ZERO) loop = LOOP_SINGLE;
    mode = mode >= 0 ? mode & 3 : MODE_MIX;
    if (mode > 2) mode = MODE_MIX;
    if (loop > LOOP_ZERO) loop = LOOP_SINGLE;
    if (loop != LOOP_ZERO || zk > 4 || two) zk = 0;
    lz_job job = {words, total, starts, nw, S, numel, T, L, mode, lut3, n_lut3, cls, out, out8, crcs, loop, zk, two};
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (threads > n_stripes / 2) threads = n_stripes / 2 > 0 ? (int)(n_stripes / 2) : 1;
    lz_range rs[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        rs[t].lo = n_stripes * t / threads;
        rs[t].hi = n_stripes * (t + 1) / threads;
        rs[t].job = &job;
        rs[t].rc = ERR_OK;
        started[t] = 0;
    }
    for (int t = 1; t < threads; t++)
        started[t] = pthread_create(&tid[t], NULL, run_thread, &rs[t]) == 0;
    run_range(&rs[0]);
    for (int t = 1; t < threads; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else run_range(&rs[t]);
    }
    free(starts);
    /* the first CRC mismatch of all, else the first decode error */
    for (int t = 0; t < threads; t++)
        if (rs[t].rc == ERR_CRC) { err[0] = rs[t].stripe; err[1] = 0; return ERR_CRC; }
    for (int t = 0; t < threads; t++)
        if (rs[t].rc != ERR_OK) { err[0] = rs[t].stripe; err[1] = rs[t].word; return rs[t].rc; }
    return ERR_OK;
}

/* ------------------------------------------------------------------------------------ container index */
/* a varint of 1..3 bytes (no overlong form) at b[*p] (len bytes in all); 0 for anything else */
static int var3(const uint8_t *b, int64_t len, int64_t *p, uint32_t *v) {
    int64_t q = *p;
    if (q >= len) return 0;
    uint32_t b0 = b[q];
    if (b0 < 0x80) { *v = b0; *p = q + 1; return 1; }
    if (q + 1 >= len) return 0;
    uint32_t b1 = b[q + 1];
    if (b1 < 0x80) {
        if (!b1) return 0;
        *v = (b0 & 0x7F) | b1 << 7; *p = q + 2; return 1;
    }
    if (q + 2 >= len) return 0;
    uint32_t b2 = b[q + 2];
    if (b2 >= 0x80 || !b2) return 0;
    *v = (b0 & 0x7F) | (b1 & 0x7F) << 7 | b2 << 14; *p = q + 3;
    return 1;
}

/* The stream records of a version-3 metadata block b[pos..len) (docs/FORMAT.md section 4), every check of
 * container._read_streams made: flags, table index < n_tables, stripe length 1..65536, ceil(numel / S) stripe
 * sizes 2..S+1, their CRCs, the stripes inside the payload, the records ending the block and the stripes the
 * payload.  rec gets table, S, byte offset and first stripe of each stream (4 int64 each), words / crcs the
 * stripe sizes and CRCs of all streams (room for cap).  Returns the number of stripes, or -1 when anything is
 * wrong or merely unusual (a varint of 4 or more bytes): the Python reader then reads the records again and
 * names the problem. */
EXPORT int64_t lz_parse_streams(const uint8_t *b, int64_t len, int64_t pos, int64_t n_streams, const int64_t *numel,
                                int64_t n_tables, int64_t default_s, int64_t payload_len, int64_t *rec,
                                uint32_t *words, uint32_t *crcs, int64_t cap) {
    if (pos < 0 || pos > len || n_streams < 0 || n_streams > len - pos) return -1;
    int64_t offset = 0, table = 0, n_all = 0;
    for (int64_t k = 0; k < n_streams; k++) {
        uint32_t v;
        if (pos >= len) return -1;
        uint32_t fl = b[pos++];
        if (fl & ~3u) return -1;
        if (fl & 2) {
            if (!var3(b, len, &pos, &v)) return -1;
            table = v;
        }
        if (table >= n_tables) return -1;
        int64_t S = default_s;
        if (fl & 1) {
            if (!var3(b, len, &pos, &v)) return -1;
            S = v;
        }
        if (S < 1 || S > 65536 || numel[k] < 1) return -1;
        int64_t n = (numel[k] - 1) / S + 1;
        if (n > (len - pos) / 5 || n > cap - n_all) return -1;
        int64_t sum = 0;
        for (int64_t i = 0; i < n; i++) {
            if (!var3(b, len, &pos, &v) || v < 2 || v > (uint32_t)S + 1) return -1;
            words[n_all + i] = v;
            sum += v;
        }
        if (4 * n > len - pos) return -1;
        memcpy(crcs + n_all, b + pos, 4 * (size_t)n);      /* little-endian host (fastdec.py checks) */
        pos += 4 * n;
        if (offset + 4 * sum > payload_len) return -1;
        rec[4 * k] = table;
        rec[4 * k + 1] = S;
        rec[4 * k + 2] = offset;
        rec[4 * k + 3] = n_all;
        offset += 4 * sum;
        n_all += n;
    }
    if (pos != len || offset != payload_len) return -1;
    return n_all;
}

/* one run of stripes of lz_decode_many: the arguments of lz_decode, every field 8 bytes (fastdec.STREAM_DTYPE) */
typedef struct {
    const uint32_t *words;
    int64_t total;
    const uint32_t *nw;
    int64_t n_stripes, S, numel;
    const lz_entry *T;
    int64_t L, mode;
    const uint16_t *lut3;
    int64_t n_lut3;
    const int32_t *cls;
    void *out;
    int64_t out8;
    const uint32_t *crcs;
} lz_stream;

/* lz_decode for each of n streams in turn (one call for a whole container); stops at the first that fails:
 * its return code, err[0] / err[1] as lz_decode's and err[2] the stream's index. */
EXPORT int lz_decode_many(const lz_stream *st, int64_t n, int threads, int64_t *err) {
    for (int64_t i = 0; i < n; i++) {
        const lz_stream *j = &st[i];
        int rc = lz_decode(j->words, j->total, j->nw, j->n_stripes, j->S, j->numel, j->T, (int)j->L, (int)j->mode,
                           j->lut3, j->n_lut3, j->cls, j->out, (int)j->out8, j->crcs, threads, err);
        if (rc != ERR_OK) {
            err[2] = i;
            return rc;
        }
    }
    return ERR_OK;
}

/* ------------------------------------------------------------------------------------------ kernel tables
 * fastdec._build_combined in C (the Python stays the reference of the tests): the combined table T (2^L entries
 * of 8 bytes) and the kernel's LUT3 behind it (buf: T_ENTRIES entries, then 8192 uint16; zeroed by the caller)
 * of a validated table set of n classes (cls: kind, k, param, c of each, 4 x 16 int32).  info gets L, the
 * fast-path mode and the kernel mode (mode | loop << 2 | zk << 4).  Weights are counted in units of 2^-12 (exact,
 * as the Python's float sums of powers of two are). */
#define KERNEL_LUT3 8192
#define MIN_L 8
#define PAIR_MEAN_BITS 14
#define ZERO_MAX_K 4
/* lz_build_tables of a table set with two code tables (lens_b: the state-B code length of each class, 0: no code;
 * follow: the classes after which state B holds; lens_b NULL: one code table).  The state-B table is written at
 * entry B_OFF of buf (buf then has room for B_OFF + T_ENTRIES entries), the lane loop is the one-symbol loop and
 * the kernel mode gets the flag 128 (two tables).  The fast-path mode is chosen by the state-A codes. */
EXPORT void lz_build_tables2(const int32_t *cls, int n, const uint16_t *lut3, int64_t n3, uint8_t *buf,
                             int64_t *info, const int32_t *lens_b, int follow) {
    const int32_t *kind = cls, *kk = cls + 16, *param = cls + 32, *cc = cls + 48;
    int order[16], L = MIN_L, has_lut = 0, two = lens_b != NULL;
    if (!two) follow = 0;
    for (int j = 0; j < n; j++)
        if (two && lens_b[j] > L) L = lens_b[j];
    for (int j = 0; j < n; j++) {
        int q = j;                                   /* insertion by (c, j) */
        while (q > 0 && cc[order[q - 1]] > cc[j]) { order[q] = order[q - 1]; q--; }
        order[q] = j;
        if (cc[j] > L) L = cc[j];
        has_lut |= kind[j] == K_LUT;
    }
    uint16_t *lut3k = (uint16_t *)(buf + T_ENTRIES * sizeof(lz_entry));
    if (n3 > 0) memcpy(lut3k, lut3, (size_t)n3 * 2);
    int as_lut[16], fast_range[16];
    uint32_t base_lut[16];
    for (int j = 0; j < n; j++) { as_lut[j] = kind[j] == K_LUT; base_lut[j] = (uint32_t)param[j]; }
    int64_t fr = n3;
    if (has_lut)
        for (int q = 0; q < n; q++) {
            int j = order[q];
            if (kind[j] == K_RANGE || (kind[j] == K_ZRUN && kk[j] == 0)) {
                int64_t size = kind[j] == K_RANGE ? (int64_t)1 << kk[j] : 1;
                if (fr + size <= KERNEL_LUT3) {
                    for (int64_t i = 0; i < size; i++) lut3k[fr + i] = kind[j] == K_RANGE ? (uint16_t)(param[j] + i) : 0;
                    as_lut[j] = 1;
                    base_lut[j] = (uint32_t)fr;
                    fr += size;
                }
            }
        }
    int64_t w_lut = 0, w_range = 0;
    for (int j = 0; j < n; j++) {
        fast_range[j] = !as_lut[j] && (kind[j] == K_RANGE || (kind[j] == K_ZRUN && kk[j] == 0));
        if (as_lut[j]) w_lut += 1 << (12 - cc[j]);
        if (fast_range[j]) w_range += 1 << (12 - cc[j]);
    }
    int mode;
    if (w_lut == 0) mode = MODE_RANGE;
    else if (w_range == 0) mode = MODE_LUT;
    else if ((w_lut < w_range ? w_lut : w_range) <= 4096 / 64) mode = w_lut > w_range ? MODE_LUT : MODE_RANGE;
    else mode = MODE_MIX;
    int j0 = order[0], zk = 0, loop, long_bits;
    int64_t w_fast = 0, w_bits = 0;
    for (int j = 0; j < n; j++) {
        int f = mode == MODE_LUT ? as_lut[j] : mode == MODE_RANGE ? fast_range[j] : as_lut[j] || fast_range[j];
        if (f) {
            w_fast += 1 << (12 - cc[j]);
            w_bits += (int64_t)(1 << (12 - cc[j])) * (cc[j] + kk[j]);
        }
    }
    if (two) {
        /* the two-state zero-first loop: the zero run of one word is code 0 of one bit in both states (no class
         * before it of length 1 in either); its entries of more than 33 - ZMAX bits are slow */
        int zs = kind[j0] == K_ZRUN && kk[j0] == 0 && cc[j0] == 1 && lens_b[j0] == 1;
        for (int j = 0; j < j0; j++)
            if (lens_b[j] == 1) zs = 0;
        /* else the two-state pair loop where the one-table pair loop would be taken (by the state-A codes) */
        loop = zs ? LOOP_ZERO : 8 * w_fast >= 7 * 4096 && w_bits <= PAIR_MEAN_BITS * w_fast ? LOOP_PAIR : LOOP_SINGLE;
        long_bits = zs ? 33 - ZMAX : 64;
    } else if (cc[j0] == 1 && kind[j0] == K_ZRUN && kk[j0] <= ZERO_MAX_K) {
        zk = kk[j0];
        loop = LOOP_ZERO;
        long_bits = zk == 0 ? 33 - ZMAX : 32 - zk;
    } else if (8 * w_fast >= 7 * 4096 && w_bits <= PAIR_MEAN_BITS * w_fast) {
        loop = LOOP_PAIR;
        long_bits = 64;
    } else {
        loop = LOOP_SINGLE;
        long_bits = 64;
    }
    for (int stt = 0; stt <= two; stt++) {
        uint64_t *T = (uint64_t *)buf + (stt ? B_OFF : 0);
        const int32_t *len = stt ? lens_b : cc;
        int ord[16], m = 0;
        for (int j = 0; j < n; j++) {         /* insertion by (length, j); classes without a code left out */
            if (len[j] <= 0) continue;
            int q = m++;
            while (q > 0 && len[ord[q - 1]] > len[j]) { ord[q] = ord[q - 1]; q--; }
            ord[q] = j;
        }
        int64_t at = 0, code = -1, prev = 0;
        for (int q = 0; q < m; q++) {
            int j = ord[q], c = len[j], k = kk[j], tot = c + k;
            uint64_t nb = (uint64_t)((follow >> j) & 1) * SH_NEXT_B << 16;    /* the next state: bit 7 of sh */
            code = code < 0 ? 0 : (code + 1) << (c - prev);
            prev = c;
            int lut_fast = as_lut[j] && mode != MODE_RANGE, range_fast = fast_range[j] && mode != MODE_LUT;
            uint64_t e;
            if (two && tot > long_bits) {
                /* the two-state zero-first loop's window after ZMAX zeros is too short for it: slow */
                e = (uint64_t)tot | (uint64_t)((j << 4) | F_SLOW) << 8 | (uint64_t)63 << 16 | (uint64_t)ADV_SLOW << 24;
            } else if (two && kind[j] == K_ZRUN && k <= ZRUN2_MAX_K && loop != LOOP_PAIR &&
                       !(loop == LOOP_ZERO && k == 0 && (lut_fast || range_fast))) {
                /* a short zero run: value a = its index (param -(code << k)), F_RUN (the two-state zero-first loop
                 * takes a zero word as a fast value 0 where it can: no branch after ZMAX zeros) */
                e = (uint64_t)tot | (uint64_t)((j << 4) | F_RUN) << 8 | (uint64_t)(64 - tot) << 16 |
                    (uint64_t)tot << 24 | (uint64_t)(uint32_t)(0u - ((uint32_t)code << k)) << 32;
            } else if (lut_fast || range_fast) {
                uint32_t base = lut_fast ? base_lut[j] : kind[j] == K_RANGE ? (uint32_t)param[j] : 0;
                uint64_t flags = (uint64_t)(j << 4) | (lut_fast && mode == MODE_MIX ? F_LUT : 0) |
                                 (tot > long_bits ? F_LONG : 0);
                e = (uint64_t)tot | flags << 8 | (uint64_t)(64 - tot) << 16 | (uint64_t)tot << 24 |
                    (uint64_t)(uint32_t)(base - ((uint32_t)code << k)) << 32;
            } else {
                int run = (loop == LOOP_ZERO || two) && kind[j] == K_ZRUN && k > 0;
                e = (uint64_t)tot | (uint64_t)((j << 4) | F_SLOW | (run ? F_LUT : 0)) << 8 | (uint64_t)63 << 16 |
                    (uint64_t)ADV_SLOW << 24;
            }
            e |= nb;
            for (int64_t i = 0, r = (int64_t)1 << (L - c); i < r && at < ((int64_t)1 << L); i++) T[at++] = e;
        }
        uint64_t inv = 1 | (uint64_t)(F_INVALID | F_SLOW) << 8 | (uint64_t)63 << 16 | (uint64_t)ADV_SLOW << 24;
        while (at < ((int64_t)1 << L)) T[at++] = inv;
    }
    info[0] = L;
    info[1] = mode;
    info[2] = mode | loop << 2 | zk << 4 | two << 7;
}

EXPORT void lz_build_tables(const int32_t *cls, int n, const uint16_t *lut3, int64_t n3, uint8_t *buf,
                            int64_t *info) {
    lz_build_tables2(cls, n, lut3, n3, buf, info, NULL, 0);
}

EXPORT int lz_lanes(void) { return LZ_LANES; }

/* the lanes of a lane loop (LOOP_SINGLE, LOOP_PAIR, LOOP_ZERO; | 4: of two code tables) */
EXPORT int lz_loop_lanes(int loop) {
    if (loop & 4) return loop == (LOOP_ZERO | 4) ? LZ_ZSLANES : loop == (LOOP_PAIR | 4) ? LZ_PLANES : LZ_SLANES;
    return loop == LOOP_PAIR ? LZ_PLANES : loop == LOOP_ZERO ? LZ_ZLANES : LZ_LANES;
}

/* n dependent additions (one cycle each): timed by the benchmark to turn seconds into core cycles on a
 * machine without hardware counters */
EXPORT uint64_t lz_spin(int64_t n) {
    uint64_t x = 0;
    for (int64_t i = 0; i < n; i++) {
#if defined(__x86_64__) || defined(__i386__)
        __asm__ volatile("add $1, %0" : "+r"(x));
#else
        __asm__ volatile("" : "+r"(x));
        x++;
#endif
    }
    return x;
}

/* ------------------------------------------------------------------------------------------ row streams
 * The output of n_rows rows of N words from their coded words (docs/FORMAT.md section 3.1, version 6): a PLAIN row
 * (mode 0) is its N coded words, a MIRROR / NEG_MIRROR row (1 / 2) its h = N/2 + 1 coded words and then
 * f(x[N - m]) for m = h .. N-1, f = neg for NEG_MIRROR: two's complement (wrapping) for negf = 0, the sign bit
 * flipped unless bits 14..0 are 0 for negf = 1.  w8: 8-bit words.  lutzip.codec.rows.expand is the same in numpy
 * (and lutzip.codec.symmetry.expand_stripe the word-at-a-time reference).  Modes were checked by the caller. */
#define EXPAND_ROWS(T, MASK)                                                                                      \
    {                                                                                                             \
        const T *x = (const T *)coded;                                                                            \
        T *y = (T *)out;                                                                                          \
        for (int64_t r = 0; r < n_rows; r++) {                                                                    \
            int m = modes[r];                                                                                     \
            if (m == 0) {                                                                                         \
                memcpy(y, x, (size_t)N * sizeof(T));                                                              \
                x += N;                                                                                           \
                y += N;                                                                                           \
                continue;                                                                                         \
            }                                                                                                     \
            memcpy(y, x, (size_t)h * sizeof(T));                                                                  \
            if (m == 1) {                                                                                         \
                for (int64_t k = h; k < N; k++) y[k] = x[N - k];                                                  \
            } else if (negf) {                                                                                    \
                for (int64_t k = h; k < N; k++) {                                                                 \
                    T v = x[N - k];                                                                               \
                    y[k] = (T)((v & 0x7FFF) ? v ^ 0x8000 : v);                                                    \
                }                                                                                                 \
            } else {                                                                                              \
                for (int64_t k = h; k < N; k++) y[k] = (T)((0u - (uint32_t)x[N - k]) & MASK);                     \
            }                                                                                                     \
            x += h;                                                                                               \
            y += N;                                                                                               \
        }                                                                                                         \
    }

EXPORT void lz_expand_rows(const void *coded, void *out, int64_t n_rows, int64_t N, const uint8_t *modes, int w8,
                           int negf) {
    int64_t h = N / 2 + 1;
    if (w8) EXPAND_ROWS(uint8_t, 0xFFu) else EXPAND_ROWS(uint16_t, 0xFFFFu)
}
