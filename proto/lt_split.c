/* lt_split: a trace body's blocks, the deltas apart (lt_split.h). */
#include "lt_split.h"

#include <string.h>

#include "lt_event.h"

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The bytes of a msgpack uint by its first byte; 0: not a uint. */
static const uint8_t ULEN[256] = {[0 ... 0x7f] = 1, [0xcc] = 2, [0xcd] = 3, [0xce] = 5,
                                  [0xcf] = 9};

static inline size_t ulen(uint8_t b)
{
    return ULEN[b];
}

/* The bytes of the msgpack uint at p[0..n); 0 if it is cut or not one. */
static size_t uint_len(const uint8_t *p, size_t n)
{
    size_t k = n ? ulen(p[0]) : 0;
    return k <= n ? k : 0;
}

/* Records this far from the ends of their buffers are moved 16 bytes at a
 * time (a hot record is 2 to 19 bytes; the output never outruns the
 * input): a call of memcpy per field cost more than the rest. */
#define FAST 40

/* A record's head byte: 0 not hot; 1 a step or short RET (the head, its
 * delta); 2 a short LINE or CALL (then a field: the line, the fid). */
static const uint8_t HOT[256] = {[0 ... 0x7f] = 1, [LT_SHORT_LINE] = 2, [LT_SHORT_CALL] = 2,
                                 [LT_SHORT_RET] = 1};

static inline int is_hot(uint8_t b)
{
    return HOT[b] != 0;
}

static inline int has_x(uint8_t b)
{
    return HOT[b] == 2;
}

/* The bytes of the short MEM at p[0..n) (no tick delta: kept whole in A),
 * field by field as hot_len: it is as common as a hook record in an
 * allocation-heavy program, and lt_dec_next would decode it twice over. */
static size_t mem_len(const uint8_t *p, size_t n)
{
    size_t k = 1, f;
    for (unsigned i = 0; i < (p[0] == LT_SHORT_MRE ? 4u : 2u); i++, k += f)
        if (!(f = uint_len(p + k, n - k)))
            return 0;
    return k;
}

/* The bytes of the record at p[0..n) that is not hot; 0 if none is. */
static size_t other_len(const uint8_t *p, size_t n)
{
    lt_event ev;
    if (p[0] >= LT_SHORT_MNEW && p[0] <= LT_SHORT_MRE)
        return mem_len(p, n);
    int k = lt_event_decode(p, n, &ev);
    return k > 0 ? (size_t)k : 0;
}

/* The hot record at p[0..n): its bytes, and its delta's in *d; 0 if cut. */
static size_t hot_len(const uint8_t *p, size_t n, size_t *d)
{
    size_t x = 0;
    *d = uint_len(p + 1, n - 1);
    if (*d && has_x(p[0]) && !(x = uint_len(p + 1 + *d, n - 1 - *d)))
        return 0;
    return *d ? 1 + *d + x : 0;
}

/* n (at most 9: a msgpack uint) bytes: a loop, not a call, for the few. */
static inline void copy_small(uint8_t *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i];
}

size_t lt_split(const uint8_t *p, size_t n, uint8_t *out, size_t *outlen, uint8_t *scratch)
{
    uint8_t *a = out + LT_SPLIT_HDR;
    size_t i = 0, na = 0, nb = 0, k = 0, d = 0, end = n < LT_SPLIT_MAX ? n : LT_SPLIT_MAX;
    while (i < n) {
        uint8_t h = p[i];
        if (is_hot(h) && i + FAST < end) { /* far from the ends: 16-byte moves */
            d = ulen(p[i + 1]);
            size_t x = has_x(h) ? ulen(p[i + 1 + d]) : 0;
            if (d && (x || !has_x(h))) {
                a[na] = h;
                memcpy(a + na + 1, p + i + 1 + d, 16); /* x, and bytes to be overwritten */
                memcpy(scratch + nb, p + i + 1, 16);
                na += 1 + x;
                nb += d;
                i += k = 1 + d + x;
                continue;
            }
        }
        k = is_hot(h) ? hot_len(p + i, n - i, &d) : (d = 0, other_len(p + i, n - i));
        if (!k || i + k > LT_SPLIT_MAX)
            break;
        a[na++] = h; /* a hot record's head, or a whole other one */
        copy_small(scratch + nb, p + i + 1, d);
        nb += d;
        if (d)
            copy_small(a + na, p + i + 1 + d, k - 1 - d);
        else
            memcpy(a + na, p + i + 1, k - 1);
        na += k - 1 - d;
        i += k;
    }
    size_t split = na;
    if (i < n && !k) { /* not records: the rest as it is, to the block's end */
        size_t m = n - i < LT_SPLIT_MAX - i ? n - i : LT_SPLIT_MAX - i;
        memcpy(a + na, p + i, m);
        na += m;
        i += m;
    }
    memcpy(a + na, scratch, nb);
    put_le32(out, (uint32_t)na);
    put_le32(out + 4, (uint32_t)nb);
    put_le32(out + 8, (uint32_t)split);
    *outlen = LT_SPLIT_HDR + na + nb;
    return i;
}

int64_t lt_split_len(const uint8_t *p, size_t n)
{
    if (n < LT_SPLIT_HDR)
        return 0;
    uint64_t la = get_le32(p), lb = get_le32(p + 4), sa = get_le32(p + 8);
    return !(la + lb) || la + lb > LT_SPLIT_MAX || sa > la ? -1 : (int64_t)(LT_SPLIT_HDR + la + lb);
}

int64_t lt_merge(const uint8_t *p, size_t n, uint8_t *out)
{
    if (lt_split_len(p, n) != (int64_t)n)
        return -1;
    size_t la = get_le32(p), lb = get_le32(p + 4), sa = get_le32(p + 8);
    const uint8_t *a = p + LT_SPLIT_HDR, *b = a + la;
    size_t i = 0, j = 0, o = 0;
    while (i < sa) {
        uint8_t h = a[i];
        size_t d = 0, x = 0, k = 0;
        if (is_hot(h) && i + FAST < sa && j + FAST < lb) { /* 16-byte moves, as lt_split */
            d = ulen(b[j]);
            x = has_x(h) ? ulen(a[i + 1]) : 0;
            if (d && (x || !has_x(h))) {
                out[o] = h;
                memcpy(out + o + 1, b + j, 16);
                memcpy(out + o + 1 + d, a + i + 1, 16);
                o += 1 + d + x;
                j += d;
                i += 1 + x;
                continue;
            }
            d = x = 0;
        }
        if (is_hot(h) && !(d = uint_len(b + j, lb - j)))
            return -1;
        if (!d && !(k = other_len(a + i, sa - i)))
            return -1;
        if (d && has_x(h) && !(x = uint_len(a + i + 1, sa - i - 1)))
            return -1;
        out[o++] = h; /* as lt_split took them apart */
        if (d) {
            copy_small(out + o, b + j, d);
            copy_small(out + o + d, a + i + 1, x);
            o += d + x;
            j += d;
            i += 1 + x;
        } else {
            memcpy(out + o, a + i + 1, k - 1);
            o += k - 1;
            i += k;
        }
    }
    if (j != lb)
        return -1;
    memcpy(out + o, a + sa, la - sa);
    return (int64_t)(o + la - sa);
}
