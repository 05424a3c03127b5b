/* check_ctl: control messages of proto/lt_ctl: pack/parse round trips and
 * the parser's refusals (the peer is untrusted).
 *
 * Malformed messages are written with a tiny builder: a list of key/value
 * specs packed with msgpack-c, so each case changes one thing of a valid
 * message.
 */
#include <check.h>
#include <errno.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_attach.h"
#include "lt_ctl.h"
#include "ut_main.h"

enum vtype { V_END = 0, V_STR, V_UINT, V_NEG, V_BOOL, V_FLOAT, V_NIL, V_ARRAY, V_BIN, V_SKIP };

typedef struct kv {
    const char *key;
    enum vtype t;
    const char *s; /* V_STR/V_BIN: bytes; slen 0 means strlen */
    uint64_t u;
    size_t slen;
} kv;

static void pack_value(msgpack_packer *pk, const kv *e)
{
    size_t n = e->slen ? e->slen : e->s ? strlen(e->s) : 0;
    switch (e->t) {
    case V_STR: msgpack_pack_str_with_body(pk, e->s, n); break;
    case V_BIN: msgpack_pack_bin_with_body(pk, e->s, n); break;
    case V_UINT: msgpack_pack_uint64(pk, e->u); break;
    case V_NEG: msgpack_pack_int64(pk, -(int64_t)e->u); break;
    case V_BOOL: e->u ? msgpack_pack_true(pk) : msgpack_pack_false(pk); break;
    case V_FLOAT: msgpack_pack_double(pk, (double)e->u); break;
    case V_NIL: msgpack_pack_nil(pk); break;
    default: msgpack_pack_array(pk, 1), msgpack_pack_uint8(pk, 1); break;
    }
}

/* Packs the map of the specs (V_SKIP entries left out) and parses it. */
static int parse_specs(const kv *specs, lt_ctl_msg *m)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    uint32_t n = 0;
    for (const kv *e = specs; e->t != V_END; e++)
        n += e->t != V_SKIP;
    msgpack_pack_map(&pk, n);
    for (const kv *e = specs; e->t != V_END; e++) {
        if (e->t == V_SKIP)
            continue;
        msgpack_pack_str_with_body(&pk, e->key, strlen(e->key));
        pack_value(&pk, e);
    }
    msgpack_unpacked res;
    msgpack_unpacked_init(&res);
    size_t off = 0;
    ck_assert_int_eq(msgpack_unpack_next(&res, sb.data, sb.size, &off), MSGPACK_UNPACK_SUCCESS);
    int rc = lt_ctl_parse(&res.data, m);
    msgpack_unpacked_destroy(&res);
    msgpack_sbuffer_destroy(&sb);
    return rc;
}

static int pack_parse(const lt_ctl_msg *in, lt_ctl_msg *out)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    ck_assert_int_eq(lt_ctl_pack(in, &sb), 0);
    msgpack_unpacked res;
    msgpack_unpacked_init(&res);
    size_t off = 0;
    ck_assert_int_eq(msgpack_unpack_next(&res, sb.data, sb.size, &off), MSGPACK_UNPACK_SUCCESS);
    ck_assert_uint_eq(off, sb.size); /* one message, nothing after it */
    ck_assert_int_eq(res.data.type, MSGPACK_OBJECT_MAP);
    int rc = lt_ctl_parse(&res.data, out);
    msgpack_unpacked_destroy(&res);
    msgpack_sbuffer_destroy(&sb);
    return rc;
}

#define HELLO_KEYS 6
static void hello_specs(kv *h)
{
    kv base[HELLO_KEYS + 1] = {
        {"type", V_STR, "hello", 0, 0}, {"v", V_UINT, NULL, LT_CTL_VERSION, 0},
        {"pid", V_UINT, NULL, 4242, 0}, {"shm", V_STR, "ck-ring", 0, 0},
        {"ring", V_UINT, NULL, 1u << 20, 0}, {"cmd", V_STR, "lua5.1 app.lua", 0, 0},
        {NULL, V_END, NULL, 0, 0}};
    memcpy(h, base, sizeof base);
}

#define ACK_KEYS 4
static void ack_specs(kv *a)
{
    kv base[ACK_KEYS + 1] = {{"type", V_STR, "ack", 0, 0},
                             {"v", V_UINT, NULL, LT_CTL_VERSION, 0},
                             {"ok", V_BOOL, NULL, 1, 0},
                             {"session", V_STR, "s-1", 0, 0},
                             {NULL, V_END, NULL, 0, 0}};
    memcpy(a, base, sizeof base);
}

START_TEST(test_ctl_hello_round_trip)
{
    lt_ctl_msg in = {.type = LT_CTL_HELLO, .pid = 4242, .ring = 1u << 24}, out;
    snprintf(in.shm, sizeof in.shm, "ck-ring.1_x");
    snprintf(in.cmd, sizeof in.cmd, "lua5.1 -lluatrace app.lua --flag \"quoted\"");
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_int_eq(out.type, LT_CTL_HELLO);
    ck_assert_uint_eq(out.version, LT_CTL_VERSION);
    ck_assert_uint_eq(out.pid, 4242);
    ck_assert_uint_eq(out.ring, 1u << 24);
    ck_assert_str_eq(out.shm, in.shm);
    ck_assert_str_eq(out.cmd, in.cmd);

    /* longest strings that fit, and an empty command */
    memset(in.shm, 's', sizeof in.shm - 1);
    in.shm[sizeof in.shm - 1] = 0;
    memset(in.cmd, 'c', sizeof in.cmd - 1);
    in.cmd[sizeof in.cmd - 1] = 0;
    in.ring = UINT64_MAX;
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_str_eq(out.shm, in.shm);
    ck_assert_str_eq(out.cmd, in.cmd);
    ck_assert_uint_eq(out.ring, UINT64_MAX);
    in.cmd[0] = 0;
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_str_eq(out.cmd, "");
}
END_TEST

START_TEST(test_ctl_ack_round_trip)
{
    lt_ctl_msg in = {.type = LT_CTL_ACK, .ok = 1}, out;
    snprintf(in.text, sizeof in.text, "20240101-120000-4242");
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_int_eq(out.type, LT_CTL_ACK);
    ck_assert_int_eq(out.ok, 1);
    ck_assert_str_eq(out.text, in.text);

    in.ok = 0;
    snprintf(in.text, sizeof in.text, "ring ck-ring: not owned by uid 1000");
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_int_eq(out.ok, 0);
    ck_assert_str_eq(out.text, in.text);

    memset(in.text, 't', sizeof in.text - 1);
    in.text[sizeof in.text - 1] = 0;
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_str_eq(out.text, in.text);
    ck_assert_str_eq(out.timing, "");

    /* listen/attach --coverage: the collector is asked for no clock */
    in.ok = 1;
    snprintf(in.timing, sizeof in.timing, "none");
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_str_eq(out.timing, "none");
    ck_assert_str_eq(out.text, in.text);
    ck_assert_int_eq(out.lines_sampled, 0);

    /* listen/attach --time sample: lines by sample, only with sampled time */
    in.lines_sampled = 1;
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_int_eq(out.lines_sampled, 0); /* timing "none": not sent */
    snprintf(in.timing, sizeof in.timing, "cpu");
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_str_eq(out.timing, "cpu");
    ck_assert_int_eq(out.lines_sampled, 1);
}
END_TEST

START_TEST(test_ctl_pack_bad_type)
{
    lt_ctl_msg m = {.type = LT_CTL_BAD};
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    ck_assert_int_eq(lt_ctl_pack(&m, &sb), -EINVAL);
    ck_assert_uint_eq(sb.size, 0);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(test_ctl_builder_baseline)
{
    kv h[HELLO_KEYS + 1], a[ACK_KEYS + 1];
    lt_ctl_msg m;
    hello_specs(h);
    ck_assert_int_eq(parse_specs(h, &m), 0);
    ck_assert_int_eq(m.type, LT_CTL_HELLO);
    ack_specs(a);
    ck_assert_int_eq(parse_specs(a, &m), 0);
    ck_assert_int_eq(m.type, LT_CTL_ACK);
    /* unknown keys are ignored */
    kv extra[] = {{"type", V_STR, "ack", 0, 0}, {"future", V_ARRAY, NULL, 0, 0},
                  {"v", V_UINT, NULL, 1, 0},    {"ok", V_BOOL, NULL, 0, 0},
                  {"zz", V_FLOAT, NULL, 3, 0},  {NULL, V_END, NULL, 0, 0}};
    ck_assert_int_eq(parse_specs(extra, &m), 0);
    ck_assert_int_eq(m.ok, 0);
}
END_TEST

START_TEST(test_ctl_missing_keys)
{
    kv h[HELLO_KEYS + 1], a[ACK_KEYS + 1];
    lt_ctl_msg m;
    for (int i = 0; i < HELLO_KEYS; i++) {
        hello_specs(h);
        if (!strcmp(h[i].key, "cmd"))
            continue; /* optional: a host may not know its command line */
        h[i].t = V_SKIP;
        ck_assert_msg(parse_specs(h, &m) == -EPROTO, "hello without %s accepted", h[i].key);
    }
    for (int i = 0; i < ACK_KEYS; i++) {
        ack_specs(a);
        if (!strcmp(a[i].key, "session"))
            continue; /* the text is optional */
        a[i].t = V_SKIP;
        ck_assert_msg(parse_specs(a, &m) == -EPROTO, "ack without %s accepted", a[i].key);
    }
    kv empty[] = {{NULL, V_END, NULL, 0, 0}};
    ck_assert_int_eq(parse_specs(empty, &m), -EPROTO);
}
END_TEST

/* Each of the n keys of the message fill makes given a value of each wrong
 * type: refused. */
static void wrong_types(void (*fill)(kv *), kv *specs, int n, const char *what)
{
    static const enum vtype all[] = {V_STR, V_UINT, V_NEG, V_BOOL, V_FLOAT, V_NIL, V_ARRAY, V_BIN};
    lt_ctl_msg m;
    for (int i = 0; i < n; i++) {
        for (size_t j = 0; j < sizeof all / sizeof *all; j++) {
            fill(specs);
            if (all[j] == specs[i].t)
                continue;
            specs[i].t = all[j];
            specs[i].s = all[j] == V_STR || all[j] == V_BIN ? "x" : NULL;
            specs[i].u = 1;
            ck_assert_msg(parse_specs(specs, &m) == -EPROTO, "%s %s as type %d accepted", what,
                          specs[i].key, all[j]);
        }
    }
}

/* Every key given a value of each wrong type. */
START_TEST(test_ctl_wrong_types)
{
    kv h[HELLO_KEYS + 1], a[ACK_KEYS + 1];
    wrong_types(hello_specs, h, HELLO_KEYS, "hello");
    wrong_types(ack_specs, a, ACK_KEYS, "ack");
}
END_TEST

START_TEST(test_ctl_bad_values)
{
    kv h[HELLO_KEYS + 1];
    lt_ctl_msg m;
    const uint64_t bad_v[] = {0, LT_CTL_VERSION + 1, 1ull << 32 | LT_CTL_VERSION, UINT64_MAX};
    for (size_t i = 0; i < sizeof bad_v / sizeof *bad_v; i++) {
        hello_specs(h);
        h[1].u = bad_v[i];
        ck_assert_msg(parse_specs(h, &m) == -EPROTO, "version %llu accepted",
                      (unsigned long long)bad_v[i]);
    }
    const char *bad_type[] = {"", "HELLO", "hello ", "bye", "ack2"};
    for (size_t i = 0; i < sizeof bad_type / sizeof *bad_type; i++) {
        hello_specs(h);
        h[0].s = bad_type[i];
        ck_assert_msg(parse_specs(h, &m) == -EPROTO, "type \"%s\" accepted", bad_type[i]);
    }
    const uint64_t bad_pid[] = {0, (uint64_t)INT32_MAX + 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof bad_pid / sizeof *bad_pid; i++) {
        hello_specs(h);
        h[2].u = bad_pid[i];
        ck_assert_msg(parse_specs(h, &m) == -EPROTO, "pid %llu accepted",
                      (unsigned long long)bad_pid[i]);
    }
    /* the type says ack but the keys are a hello's */
    hello_specs(h);
    h[0].s = "ack";
    ck_assert_int_eq(parse_specs(h, &m), -EPROTO);
}
END_TEST

START_TEST(test_ctl_long_strings)
{
    static char big[LT_CTL_CMD_MAX + 2];
    kv h[HELLO_KEYS + 1], a[ACK_KEYS + 1];
    lt_ctl_msg m;
    memset(big, 'x', sizeof big - 1);
    struct {
        int hello, ix;
        size_t fits; /* longest accepted length */
    } c[] = {{1, 3, sizeof m.shm - 1}, {1, 5, LT_CTL_CMD_MAX - 1}, {0, 3, LT_CTL_TEXT_MAX - 1}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        kv *e = c[i].hello ? (hello_specs(h), &h[c[i].ix]) : (ack_specs(a), &a[c[i].ix]);
        kv *msg = c[i].hello ? h : a;
        e->s = big;
        e->slen = c[i].fits;
        ck_assert_msg(parse_specs(msg, &m) == 0, "%s of %zu rejected", e->key, e->slen);
        e->slen = c[i].fits + 1;
        ck_assert_msg(parse_specs(msg, &m) == -EPROTO, "%s of %zu accepted", e->key, e->slen);
    }
    /* the error text of a failed ack is bounded the same way */
    ack_specs(a);
    a[2].u = 0;
    a[3].key = "err";
    a[3].s = big;
    a[3].slen = LT_CTL_TEXT_MAX;
    ck_assert_int_eq(parse_specs(a, &m), -EPROTO);
}
END_TEST

START_TEST(test_ctl_nul_in_strings)
{
    kv h[HELLO_KEYS + 1], a[ACK_KEYS + 1];
    lt_ctl_msg m;
    static const char with_nul[] = "abc\0def";
    const int ix[] = {0, 3, 5};
    for (size_t i = 0; i < sizeof ix / sizeof *ix; i++) {
        hello_specs(h);
        h[ix[i]].s = with_nul;
        h[ix[i]].slen = sizeof with_nul - 1;
        ck_assert_msg(parse_specs(h, &m) == -EPROTO, "NUL in %s accepted", h[ix[i]].key);
    }
    ack_specs(a);
    a[3].s = with_nul;
    a[3].slen = sizeof with_nul - 1;
    ck_assert_int_eq(parse_specs(a, &m), -EPROTO);
    hello_specs(h);
    h[3].s = "ring\0";
    h[3].slen = 5;
    ck_assert_int_eq(parse_specs(h, &m), -EPROTO);
}
END_TEST

START_TEST(test_ctl_not_a_map)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    lt_ctl_msg m;
    for (int kind = 0; kind < 6; kind++) {
        msgpack_sbuffer_init(&sb);
        msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
        switch (kind) {
        case 0: msgpack_pack_array(&pk, 2), msgpack_pack_str_with_body(&pk, "type", 4),
                msgpack_pack_str_with_body(&pk, "hello", 5); break;
        case 1: msgpack_pack_uint8(&pk, 1); break;
        case 2: msgpack_pack_str_with_body(&pk, "hello", 5); break;
        case 3: msgpack_pack_nil(&pk); break;
        case 4: msgpack_pack_true(&pk); break;
        default: msgpack_pack_bin_with_body(&pk, "\x81", 1); break;
        }
        msgpack_unpacked res;
        msgpack_unpacked_init(&res);
        size_t off = 0;
        ck_assert_int_eq(msgpack_unpack_next(&res, sb.data, sb.size, &off),
                         MSGPACK_UNPACK_SUCCESS);
        ck_assert_msg(lt_ctl_parse(&res.data, &m) == -EPROTO, "object kind %d accepted", kind);
        msgpack_unpacked_destroy(&res);
        msgpack_sbuffer_destroy(&sb);
    }
    /* keys that are not strings do not count as the keys they spell */
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 3);
    msgpack_pack_bin_with_body(&pk, "type", 4), msgpack_pack_str_with_body(&pk, "ack", 3);
    msgpack_pack_str_with_body(&pk, "v", 1), msgpack_pack_uint8(&pk, LT_CTL_VERSION);
    msgpack_pack_str_with_body(&pk, "ok", 2), msgpack_pack_true(&pk);
    msgpack_unpacked res;
    msgpack_unpacked_init(&res);
    size_t off = 0;
    ck_assert_int_eq(msgpack_unpack_next(&res, sb.data, sb.size, &off), MSGPACK_UNPACK_SUCCESS);
    ck_assert_int_eq(lt_ctl_parse(&res.data, &m), -EPROTO);
    msgpack_unpacked_destroy(&res);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* The dump head (written from a signal handler, without msgpack-c) parses
 * as a dump; a missing len or one over LT_CTL_DUMP_MAX does not. */
START_TEST(test_ctl_dump_head)
{
    uint8_t buf[LT_CTL_DUMP_HEAD_MAX];
    uint32_t lens[] = {0, 127, 65536, LT_CTL_DUMP_MAX, LT_CTL_DUMP_MAX + 1};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t n = lt_ctl_dump_head(buf, INT32_MAX, lens[i], 3);
        ck_assert_uint_le(n, sizeof buf);
        ck_assert_int_eq(lt_ctl_scan(buf, n, LT_CTL_MSG_MAX), (long)n);
        msgpack_unpacked res;
        msgpack_unpacked_init(&res);
        size_t off = 0;
        ck_assert_int_eq(msgpack_unpack_next(&res, (const char *)buf, n, &off),
                         MSGPACK_UNPACK_SUCCESS);
        lt_ctl_msg m;
        int rc = lt_ctl_parse(&res.data, &m);
        if (lens[i] > LT_CTL_DUMP_MAX) {
            ck_assert_int_eq(rc, -EPROTO);
        } else {
            ck_assert_int_eq(rc, 0);
            ck_assert_int_eq(m.type, LT_CTL_DUMP);
            ck_assert_uint_eq(m.pid, INT32_MAX);
            ck_assert_uint_eq(m.len, lens[i]);
            ck_assert_uint_eq(m.flags, 3);
        }
        msgpack_unpacked_destroy(&res);
    }
    lt_ctl_msg in = {.type = LT_CTL_DUMP, .pid = 4242, .len = 77, .flags = LT_DUMP_IN_C}, out;
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_int_eq(out.type, LT_CTL_DUMP);
    ck_assert_uint_eq(out.pid, 4242);
    ck_assert_uint_eq(out.len, 77);
    ck_assert_uint_eq(out.flags, LT_DUMP_IN_C);
    kv no_len[] = {{"type", V_STR, "dump", 0, 0}, {"v", V_UINT, NULL, LT_CTL_VERSION, 0},
                   {"pid", V_UINT, NULL, 7, 0}, {NULL, V_END, NULL, 0, 0}};
    lt_ctl_msg m;
    ck_assert_int_eq(parse_specs(no_len, &m), -EPROTO);
}
END_TEST

/* A sampled trace's hello carries its rate (LuaJIT's sampled mode); an
 * exact one leaves the key out, as hellos did before it; a rate of 0 or
 * over LT_CTL_SAMPLE_MAX is refused. */
START_TEST(test_ctl_hello_sample)
{
    lt_ctl_msg in = {.type = LT_CTL_HELLO, .pid = 4242, .ring = 1u << 18, .sample = 1000}, out;
    snprintf(in.shm, sizeof in.shm, "ck-ring");
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_uint_eq(out.sample, 1000);
    in.sample = 0;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    ck_assert_int_eq(lt_ctl_pack(&in, &sb), 0);
    ck_assert_ptr_null(memmem(sb.data, sb.size, "sample", 6));
    msgpack_sbuffer_destroy(&sb);
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_uint_eq(out.sample, 0);
    kv h[HELLO_KEYS + 2];
    lt_ctl_msg m;
    const uint64_t rates[] = {1, LT_CTL_SAMPLE_MAX, 0, LT_CTL_SAMPLE_MAX + 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof rates / sizeof *rates; i++) {
        hello_specs(h);
        h[HELLO_KEYS] = (kv){"sample", V_UINT, NULL, rates[i], 0};
        h[HELLO_KEYS + 1] = (kv){NULL, V_END, NULL, 0, 0};
        int rc = parse_specs(h, &m);
        ck_assert_msg(i < 2 ? rc == 0 && m.sample == rates[i] : rc == -EPROTO,
                      "sample %llu: %d", (unsigned long long)rates[i], rc);
    }
    hello_specs(h);
    h[HELLO_KEYS] = (kv){"sample", V_STR, "1000", 0, 0};
    h[HELLO_KEYS + 1] = (kv){NULL, V_END, NULL, 0, 0};
    ck_assert_int_eq(parse_specs(h, &m), -EPROTO);
}
END_TEST

/* A hello asking to be sampled from outside (Lua 5.1's run --sample)
 * carries outside and its state's address with its rate; outside without
 * a rate or a state, or not a boolean, is refused. */
START_TEST(test_ctl_hello_outside)
{
    lt_ctl_msg in = {.type = LT_CTL_HELLO, .pid = 4242, .sample = 500, .outside = 1,
                     .state = 0x7f00deadbeefull}, out;
    snprintf(in.shm, sizeof in.shm, "outside");
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_int_eq(out.outside, 1);
    ck_assert_uint_eq(out.sample, 500);
    ck_assert_uint_eq(out.state, 0x7f00deadbeefull);
    in.outside = 0; /* an exact or LuaJIT-sampled hello says neither */
    ck_assert_int_eq(pack_parse(&in, &out), 0);
    ck_assert_int_eq(out.outside, 0);
    ck_assert_uint_eq(out.state, 0);
    kv h[HELLO_KEYS + 4];
    lt_ctl_msg m;
    struct { uint64_t rate, state; enum vtype t; int ok; } cases[] = {
        {1000, 64, V_BOOL, 1}, {0, 64, V_BOOL, 0}, {1000, 0, V_BOOL, 0}, {1000, 64, V_UINT, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hello_specs(h);
        int k = HELLO_KEYS;
        if (cases[i].rate)
            h[k++] = (kv){"sample", V_UINT, NULL, cases[i].rate, 0};
        h[k++] = (kv){"outside", cases[i].t, NULL, 1, 0};
        if (cases[i].state)
            h[k++] = (kv){"state", V_UINT, NULL, cases[i].state, 0};
        h[k] = (kv){NULL, V_END, NULL, 0, 0};
        int rc = parse_specs(h, &m);
        ck_assert_msg(cases[i].ok ? rc == 0 && m.outside && m.state == cases[i].state
                                  : rc == -EPROTO, "case %zu: %d", i, rc);
    }
}
END_TEST

UT_MAIN("ctl", NULL, NULL, test_ctl_hello_round_trip, test_ctl_hello_sample, test_ctl_hello_outside,
        test_ctl_ack_round_trip, test_ctl_pack_bad_type, test_ctl_builder_baseline,
        test_ctl_missing_keys, test_ctl_wrong_types, test_ctl_bad_values, test_ctl_long_strings,
        test_ctl_nul_in_strings, test_ctl_not_a_map, test_ctl_dump_head)
