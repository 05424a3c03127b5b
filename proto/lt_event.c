/* lt_event: tables generated from LT_EVENT_LIST and the record decoder. */
#include "lt_event.h"

#include <errno.h>
#include <stdio.h>

#define LT_X_LETTER(name, letter, nargs, doc) letter,
#define LT_X_NAME(name, letter, nargs, doc) #name,
#define LT_X_NARGS(name, letter, nargs, doc) nargs,
const char lt_event_letter[LT_EV_COUNT] = {LT_EVENT_LIST(LT_X_LETTER)};
const char *const lt_event_name[LT_EV_COUNT] = {LT_EVENT_LIST(LT_X_NAME)};
const uint8_t lt_event_nargs[LT_EV_COUNT] = {LT_EVENT_LIST(LT_X_NARGS)};

/* A big-endian uint of n bytes: the msgpack widths by a load and a byte
 * swap each (a RESUME's 8-byte thread id went byte by byte), others (the
 * string lengths' 1 and 2) too. */
static inline uint64_t be_read(const uint8_t *p, unsigned n)
{
    uint16_t v2;
    uint32_t v4;
    uint64_t v8;
    switch (n) {
    case 1: return p[0];
    case 2: memcpy(&v2, p, 2); return __builtin_bswap16(v2);
    case 4: memcpy(&v4, p, 4); return __builtin_bswap32(v4);
    case 8: memcpy(&v8, p, 8); return __builtin_bswap64(v8);
    default: return 0; /* never asked */
    }
}

/* Reads one uint or string at p. Returns bytes used, 0 if incomplete,
 * -EPROTO for any other msgpack type. */
static inline __attribute__((always_inline)) int get_item(const uint8_t *p, size_t n, uint64_t *v, const char **s, uint32_t *slen)
{
    if (n < 1)
        return 0;
    uint8_t b = p[0];
    unsigned w;
    if (b < 0x80) {
        *v = b;
        return 1;
    }
    if ((b & 0xe0) == 0xa0 || b == 0xd9 || b == 0xda) {
        unsigned hl = (b & 0xe0) == 0xa0 ? 1 : b == 0xd9 ? 2 : 3;
        if (n < hl)
            return 0;
        uint32_t len = hl == 1 ? (b & 0x1fu) : (uint32_t)be_read(p + 1, hl - 1);
        if (len > LT_STR_MAX)
            return -EPROTO;
        if (n < hl + len)
            return 0;
        *s = (const char *)p + hl;
        *slen = len;
        *v = 0;
        return (int)(hl + len);
    }
    switch (b) {
    case 0xcc: w = 1; break;
    case 0xcd: w = 2; break;
    case 0xce: w = 4; break;
    case 0xcf: w = 8; break;
    default: return -EPROTO;
    }
    if (n < 1 + w)
        return 0;
    *v = be_read(p + 1, w);
    return (int)(1 + w);
}

/* Records without a string (all but STR): unsigned integers only. */
static int decode_uints(const uint8_t *p, size_t n, lt_event *ev)
{
    size_t off = 2;
    for (unsigned i = 0; i < ev->nargs; i++) {
        if (off >= n)
            return 0;
        uint8_t b = p[off];
        if (b < 0x80) {
            ev->a[i] = b;
            off++;
            continue;
        }
        unsigned w = b == 0xcc ? 1 : b == 0xcd ? 2 : b == 0xce ? 4 : b == 0xcf ? 8 : 0;
        if (!w)
            return -EPROTO;
        if (off + 1 + w > n)
            return 0;
        ev->a[i] = be_read(p + off + 1, w);
        off += 1 + w;
    }
    return (int)off;
}

int lt_event_decode(const uint8_t *p, size_t n, lt_event *ev)
{
    if (n < 2)
        return 0;
    if ((p[0] & 0xf0) != 0x90)
        return -EPROTO;
    unsigned count = p[0] & 0x0fu;
    if (count < 1 || p[1] >= LT_EV_COUNT || count - 1 != lt_event_nargs[p[1]])
        return -EPROTO;
    ev->kind = p[1];
    ev->nargs = (uint8_t)(count - 1);
    ev->str = NULL;
    ev->slen = 0;
    if (ev->kind != LT_EV_STR)
        return decode_uints(p, n, ev);
    size_t off = 2;
    for (unsigned i = 0; i < ev->nargs; i++) {
        const char *s = NULL;
        uint32_t slen = 0;
        int k = get_item(p + off, n - off, &ev->a[i], &s, &slen);
        if (k <= 0)
            return k;
        if (s) {
            if (ev->kind != LT_EV_STR || i != 1)
                return -EPROTO; /* strings only where the format has one */
            ev->str = s;
            ev->slen = slen;
        } else if (ev->kind == LT_EV_STR && i == 1) {
            return -EPROTO;
        }
        off += (size_t)k;
    }
    return (int)off;
}

/* One msgpack uint at p: bytes used, 0 if incomplete, -EPROTO if it is
 * something else. The short forms' fields, on the replay's hot path. */
static inline __attribute__((always_inline)) int get_uint(const uint8_t *p, size_t n,
                                                          uint64_t *v)
{
    if (n < 1)
        return 0;
    uint8_t b = p[0];
    if (b < 0x80) {
        *v = b;
        return 1;
    }
    unsigned w = b == 0xcc ? 1 : b == 0xcd ? 2 : b == 0xce ? 4 : b == 0xcf ? 8 : 0;
    if (!w)
        return -EPROTO;
    if (n < 1 + w)
        return 0;
    *v = be_read(p + 1, w);
    return (int)(1 + w);
}

static inline __attribute__((always_inline)) void set_event(lt_event *ev, enum lt_kind kind,
                                                            uint64_t a0, uint64_t a1, uint64_t a2)
{
    ev->kind = (uint8_t)kind;
    ev->nargs = kind == LT_EV_RET ? 2 : 3;
    ev->a[0] = a0;
    ev->a[1] = a1;
    ev->a[2] = a2;
    ev->str = NULL;
    ev->slen = 0;
}

/* A step: [fixint change + bias][dt]; right after a LINE only. */
static inline __attribute__((always_inline)) int decode_step(lt_dec *d, const uint8_t *p,
                                                             size_t n, lt_event *ev)
{
    if (!d->line_ok)
        return -EPROTO;
    int64_t line = (int64_t)d->line + (int64_t)p[0] - LT_STEP_BIAS;
    uint64_t dt;
    int k = get_uint(p + 1, n - 1, &dt);
    if (k <= 0)
        return k;
    if (line < 0)
        return -EPROTO;
    set_event(ev, LT_EV_LINE, d->depth, dt, (uint64_t)line);
    d->line = (uint64_t)line;
    return 1 + k;
}

/* LT_SHORT_*: [byte][dt] and, for a LINE or CALL, [line or fid]. */
static int decode_short(lt_dec *d, const uint8_t *p, size_t n, lt_event *ev)
{
    uint8_t b = p[0];
    if (!d->depth_ok || b > LT_SHORT_RET)
        return -EPROTO;
    uint64_t dt, v = 0;
    int k = get_uint(p + 1, n - 1, &dt), k2 = 0;
    if (k <= 0)
        return k;
    if (b != LT_SHORT_RET && (k2 = get_uint(p + 1 + k, n - 1 - (size_t)k, &v)) <= 0)
        return k2;
    if (b == LT_SHORT_LINE) {
        set_event(ev, LT_EV_LINE, d->depth, dt, v);
        d->line_ok = 1;
        d->line = v;
    } else if (b == LT_SHORT_CALL) {
        set_event(ev, LT_EV_CALL, ++d->depth, dt, v);
        d->line_ok = 0;
    } else {
        set_event(ev, LT_EV_RET, d->depth, dt, 0);
        d->line_ok = 0;
        d->depth_ok = d->depth > 0;
        d->depth--;
    }
    return 1 + k + k2;
}

/* LT_SHORT_M*: [byte][size or osize][delta] or, for a reallocation,
 * [byte][size][osize][delta][delta from oaddr]; expanded to the full MEM
 * (its addresses from d's base), what is implied left as it was. */
static int decode_short_mem(lt_dec *d, const uint8_t *p, size_t n, lt_event *ev)
{
    uint8_t b = p[0];
    unsigned nf = b == LT_SHORT_MRE ? 4 : 2;
    uint64_t f[4];
    size_t off = 1;
    if (b > LT_SHORT_MRE)
        return -EPROTO;
    for (unsigned i = 0; i < nf; i++) {
        int k = get_uint(p + off, n - off, &f[i]);
        if (k <= 0)
            return k;
        off += (size_t)k;
    }
    ev->kind = LT_EV_MEM;
    ev->nargs = 4;
    ev->str = NULL;
    ev->slen = 0;
    uint64_t a = lt_adelta_apply(d->mem_base, f[nf == 4 ? 2 : 1]);
    if (b == LT_SHORT_MNEW) {
        ev->a[0] = f[0], ev->a[1] = 0, ev->a[2] = a, ev->a[3] = 0;
    } else if (b == LT_SHORT_MFREE) {
        ev->a[0] = 0, ev->a[1] = f[0], ev->a[2] = 0, ev->a[3] = a;
    } else {
        ev->a[0] = f[0], ev->a[1] = f[1], ev->a[3] = a;
        a = ev->a[2] = lt_adelta_apply(a, f[3]);
    }
    d->mem_base = a;
    return (int)off;
}

/* What a full record implies for the next one. */
static void imply(lt_dec *d, const lt_event *ev)
{
    int sw = ev->kind == LT_EV_RESUME || ev->kind == LT_EV_YIELD;
    d->line_ok = ev->kind == LT_EV_LINE;
    d->depth_ok = ev->kind == LT_EV_LINE || ev->kind == LT_EV_CALL || sw ||
                  (ev->kind == LT_EV_RET && ev->a[0] > 0);
    if (sw)
        d->depth = ev->a[2];
    else if (d->depth_ok)
        d->depth = ev->kind == LT_EV_RET ? ev->a[0] - 1 : ev->a[0];
    if (d->line_ok)
        d->line = ev->a[2];
    if (ev->kind == LT_EV_MEM)
        d->mem_base = ev->a[2] ? ev->a[2] : ev->a[3];
}

int lt_dec_next(lt_dec *d, const uint8_t *p, size_t n, lt_event *ev)
{
    if (n == 0)
        return 0;
    if (p[0] < 0x80)
        return decode_step(d, p, n, ev);
    if (p[0] >= LT_SHORT_MNEW)
        return decode_short_mem(d, p, n, ev);
    if (p[0] >= 0xe0)
        return decode_short(d, p, n, ev);
    int k = lt_event_decode(p, n, ev);
    if (k > 0)
        imply(d, ev);
    return k;
}

int lt_event_format(const lt_event *ev, char *buf, size_t cap)
{
    size_t len = 0;
    int k = snprintf(buf, cap, "%c %s", lt_event_letter[ev->kind], lt_event_name[ev->kind]);
    len = k > 0 ? (size_t)k : 0;
    for (unsigned i = 0; i < ev->nargs && len < cap; i++) {
        if (ev->kind == LT_EV_STR && i == 1)
            k = snprintf(buf + len, cap - len, " \"%.*s\"", (int)ev->slen, ev->str);
        else
            k = snprintf(buf + len, cap - len, " %llu", (unsigned long long)ev->a[i]);
        len += k > 0 ? (size_t)k : 0;
    }
    return (int)(len < cap ? len : cap - 1);
}
