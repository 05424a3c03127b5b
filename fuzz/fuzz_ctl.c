/* fuzz_ctl: libFuzzer target for the control protocol: the bytes a peer
 * writes on the socket. Two readers see each input:
 * - the collector's: lt_ctl_scan over the whole buffer, then msgpack-c on
 *   the object it found;
 * - the daemon's (rd_server.c feed_hello): odd-sized reads into a 4 KiB
 *   buffer, lt_ctl_scan after each, msgpack-c on the first whole message.
 * Every message lt_ctl_parse accepts must survive lt_ctl_pack and parse
 * back unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_ctl.h"

static void fail(const char *what, const lt_ctl_msg *m)
{
    fprintf(stderr, "fuzz_ctl: %s (type %d v %u pid %u ring %llu ok %d shm \"%s\" text \"%s\")\n",
            what, (int)m->type, m->version, m->pid, (unsigned long long)m->ring, m->ok, m->shm,
            m->text);
    abort();
}

static int same(const lt_ctl_msg *a, const lt_ctl_msg *b)
{
    if (a->type != b->type || a->version != b->version)
        return 0;
    if (a->type == LT_CTL_HELLO)
        return a->pid == b->pid && a->ring == b->ring && !strcmp(a->shm, b->shm) &&
               !strcmp(a->cmd, b->cmd) && !strcmp(a->cwd, b->cwd);
    if (a->type == LT_CTL_ACK)
        return a->ok == b->ok && !strcmp(a->text, b->text);
    if (a->type == LT_CTL_DUMP)
        return a->pid == b->pid && a->len == b->len && a->flags == b->flags;
    return 1;
}

static void round_trip(const lt_ctl_msg *m)
{
    msgpack_sbuffer sb;
    msgpack_unpacked u;
    lt_ctl_msg back;
    size_t off = 0;
    msgpack_sbuffer_init(&sb);
    msgpack_unpacked_init(&u);
    if (lt_ctl_pack(m, &sb))
        fail("lt_ctl_pack refused a message lt_ctl_parse accepted", m);
    if (msgpack_unpack_next(&u, sb.data, sb.size, &off) != MSGPACK_UNPACK_SUCCESS ||
        off != sb.size)
        fail("lt_ctl_pack wrote something msgpack cannot read back", m);
    if (lt_ctl_parse(&u.data, &back) || !same(m, &back))
        fail("message changed through pack and parse", m);
    msgpack_unpacked_destroy(&u);
    msgpack_sbuffer_destroy(&sb);
}

static void on_object(const msgpack_object *o)
{
    lt_ctl_msg m;
    if (lt_ctl_parse(o, &m))
        return;
    if (memchr(m.shm, 0, sizeof m.shm) == NULL || memchr(m.cmd, 0, sizeof m.cmd) == NULL ||
        memchr(m.text, 0, sizeof m.text) == NULL)
        fail("unterminated string in a parsed message", &m);
    round_trip(&m);
}

/* Unpacks the object lt_ctl_scan found complete in p[0..len). */
static void take(const uint8_t *p, long len)
{
    msgpack_unpacked u;
    size_t off = 0;
    msgpack_unpacked_init(&u);
    if (msgpack_unpack_next(&u, (const char *)p, (size_t)len, &off) == MSGPACK_UNPACK_SUCCESS)
        on_object(&u.data);
    msgpack_unpacked_destroy(&u);
}

/* The collector reading its ack (co_conn.c read_ack). */
static void read_whole(const uint8_t *p, size_t n)
{
    long len = lt_ctl_scan(p, n, LT_CTL_MSG_MAX);
    if (len > 0)
        take(p, len);
}

/* The daemon reading a peer's first message (rd_server.c feed_hello): reads
 * of odd sizes into its 4 KiB buffer, scanned after each. */
static void read_chunks(const uint8_t *p, size_t n)
{
    static const size_t sizes[] = {1, 7, 3, 64, 13, LT_CTL_MSG_MAX, 2, 251};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    uint8_t msg[LT_CTL_MSG_MAX];
    size_t have = 0;
    for (size_t off = 0, i = n % nsizes; off < n; i++) {
        size_t k = sizes[i % nsizes] < n - off ? sizes[i % nsizes] : n - off;
        if (k > sizeof msg - have)
            return; /* the daemon closes the connection */
        memcpy(msg + have, p + off, k);
        have += k;
        off += k;
        long len = lt_ctl_scan(msg, have, sizeof msg);
        if (len < 0)
            return;
        if (len > 0) {
            take(msg, len);
            return;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_whole(data, size);
    read_chunks(data, size);
    return 0;
}
