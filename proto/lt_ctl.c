/* lt_ctl: packing and validating control messages. */
#include "lt_ctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lt_event.h"

static int key_is(const msgpack_object_kv *kv, const char *k);

void lt_ctl_default_path(char *buf, size_t cap)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (xdg && *xdg)
        snprintf(buf, cap, "%s/luatrace/recorderd.sock", xdg);
    else
        snprintf(buf, cap, "/tmp/luatrace-%u/recorderd.sock", (unsigned)getuid());
}

int lt_ctl_connect(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path)
        return -ENAMETOOLONG; /* never silently truncated */
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    return fd;
}

static uint64_t be_len(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* Header of the object starting with b: its size (hl) and, for strings and
 * containers, kind 1 (bytes), 2 (array) or 3 (map). Returns the length of a
 * scalar, 0 for a string or container, -1 for a type we never use. */
static int head_of(uint8_t b, size_t *hl, int *kind, uint64_t *len)
{
    static const struct { uint8_t b, hl, kind, scalar; } t[] = {
        {0xc0, 1, 0, 1}, {0xc2, 1, 0, 1}, {0xc3, 1, 0, 1}, {0xcc, 1, 0, 2}, {0xd0, 1, 0, 2},
        {0xcd, 1, 0, 3}, {0xd1, 1, 0, 3}, {0xce, 1, 0, 5}, {0xd2, 1, 0, 5}, {0xca, 1, 0, 5},
        {0xcf, 1, 0, 9}, {0xd3, 1, 0, 9}, {0xcb, 1, 0, 9}, {0xd9, 2, 1, 0}, {0xc4, 2, 1, 0},
        {0xda, 3, 1, 0}, {0xc5, 3, 1, 0}, {0xdb, 5, 1, 0}, {0xc6, 5, 1, 0}, {0xdc, 3, 2, 0},
        {0xdd, 5, 2, 0}, {0xde, 3, 3, 0}, {0xdf, 5, 3, 0}};
    *hl = 1;
    *len = 0;
    if (b <= 0x7f || b >= 0xe0)
        return 1;
    if ((b & 0xe0) == 0xa0 || (b & 0xf0) == 0x90 || (b & 0xf0) == 0x80) {
        *kind = (b & 0xe0) == 0xa0 ? 1 : (b & 0xf0) == 0x90 ? 2 : 3;
        *len = (b & 0xe0) == 0xa0 ? (b & 0x1fu) : (b & 0x0fu);
        return 0;
    }
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].b == b) {
            *hl = t[i].hl;
            *kind = t[i].kind;
            return t[i].scalar;
        }
    return -1;
}

static long scan_obj(const uint8_t *p, size_t n, size_t max, unsigned depth)
{
    size_t hl;
    int kind = 0;
    uint64_t len;
    if (n == 0)
        return 0;
    int scalar = head_of(p[0], &hl, &kind, &len);
    if (scalar < 0)
        return -EPROTO;
    if (scalar > 0)
        return n >= (size_t)scalar ? scalar : 0;
    if (hl > 1) {
        if (n < hl)
            return 0;
        len = be_len(p + 1, hl - 1);
    }
    if (len > max)
        return -EPROTO;
    if (kind == 1)
        return n >= hl + len ? (long)(hl + len) : 0;
    if (depth >= 4)
        return -EPROTO;
    size_t off = hl;
    for (uint64_t i = 0; i < (kind == 3 ? 2 * len : len); i++) {
        long k = scan_obj(p + off, n - off, max, depth + 1);
        if (k <= 0)
            return k;
        off += (size_t)k;
    }
    return (long)off;
}

long lt_ctl_scan(const uint8_t *p, size_t n, size_t max)
{
    long k = scan_obj(p, n < max ? n : max, max, 0);
    return k == 0 && n >= max ? -EPROTO : k;
}

static void pack_key(msgpack_packer *pk, const char *k)
{
    msgpack_pack_str_with_body(pk, k, strlen(k));
}

static void pack_kv_str(msgpack_packer *pk, const char *k, const char *v)
{
    pack_key(pk, k);
    msgpack_pack_str_with_body(pk, v, strlen(v));
}

static void pack_kv_uint(msgpack_packer *pk, const char *k, uint64_t v)
{
    pack_key(pk, k);
    msgpack_pack_uint64(pk, v);
}

int lt_ctl_pack(const lt_ctl_msg *m, msgpack_sbuffer *sb)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    size_t before = sb->size;
    if (m->type == LT_CTL_HELLO) {
        int out = m->sample && m->outside;
        msgpack_pack_map(&pk, 7 + !!m->sample + 2 * out + (out && m->tid));
        pack_kv_str(&pk, "type", "hello");
        pack_kv_uint(&pk, "v", LT_CTL_VERSION);
        pack_kv_uint(&pk, "pid", m->pid);
        pack_kv_str(&pk, "shm", m->shm);
        pack_kv_uint(&pk, "ring", m->ring);
        pack_kv_str(&pk, "cmd", m->cmd);
        pack_kv_str(&pk, "cwd", m->cwd);
        if (m->sample)
            pack_kv_uint(&pk, "sample", m->sample);
        if (m->sample && m->outside) {
            pack_key(&pk, "outside");
            msgpack_pack_true(&pk);
            pack_kv_uint(&pk, "state", m->state);
            if (m->tid)
                pack_kv_uint(&pk, "tid", m->tid);
        }
    } else if (m->type == LT_CTL_ACK) {
        int timing = m->ok && m->timing[0], memory = m->ok && m->memory;
        int lines = timing && m->lines_sampled && strcmp(m->timing, "none");
        msgpack_pack_map(&pk, 4 + timing + memory + lines);
        pack_kv_str(&pk, "type", "ack");
        pack_kv_uint(&pk, "v", LT_CTL_VERSION);
        pack_key(&pk, "ok");
        m->ok ? msgpack_pack_true(&pk) : msgpack_pack_false(&pk);
        pack_kv_str(&pk, m->ok ? "session" : "err", m->text);
        if (timing)
            pack_kv_str(&pk, "timing", m->timing);
        if (memory) {
            pack_key(&pk, "memory");
            msgpack_pack_true(&pk);
        }
        if (lines) {
            pack_key(&pk, "lines_sampled");
            msgpack_pack_true(&pk);
        }
    } else if (m->type == LT_CTL_DUMP) {
        uint8_t head[LT_CTL_DUMP_HEAD_MAX];
        if (m->len > LT_CTL_DUMP_MAX)
            return -EINVAL;
        size_t n = lt_ctl_dump_head(head, m->pid, (uint32_t)m->len, m->flags);
        msgpack_sbuffer_write(sb, (const char *)head, n);
    } else if (m->type == LT_CTL_STATUS || m->type == LT_CTL_STOP) {
        msgpack_pack_map(&pk, 2);
        pack_kv_str(&pk, "type", m->type == LT_CTL_STATUS ? "status" : "stop");
        pack_kv_uint(&pk, "v", LT_CTL_VERSION);
    } else {
        return -EINVAL;
    }
    return sb->size > before ? 0 : -ENOMEM;
}

size_t lt_ctl_dump_head(uint8_t *buf, uint32_t pid, uint32_t len, uint32_t flags)
{
    uint8_t *q = buf;
    *q++ = 0x85; /* fixmap of 5; lt_put_* write msgpack strings and uints */
    q = lt_put_str(q, "type", 4);
    q = lt_put_str(q, "dump", 4);
    q = lt_put_str(q, "v", 1);
    q = lt_put_uint(q, LT_CTL_VERSION);
    q = lt_put_str(q, "pid", 3);
    q = lt_put_uint(q, pid);
    q = lt_put_str(q, "len", 3);
    q = lt_put_uint(q, len);
    q = lt_put_str(q, "flags", 5);
    q = lt_put_uint(q, flags);
    return (size_t)(q - buf);
}

int lt_ctl_pack_status(const char *text, const char *json, msgpack_sbuffer *sb)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    size_t before = sb->size;
    msgpack_pack_map(&pk, 4);
    pack_kv_str(&pk, "type", "status");
    pack_kv_uint(&pk, "v", LT_CTL_VERSION);
    pack_kv_str(&pk, "text", text);
    pack_kv_str(&pk, "json", json);
    return sb->size > before ? 0 : -ENOMEM;
}

const char *lt_ctl_field(const msgpack_object *o, const char *key, uint32_t *len)
{
    if (o->type != MSGPACK_OBJECT_MAP)
        return NULL;
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object_kv *kv = &o->via.map.ptr[i];
        if (key_is(kv, key) && kv->val.type == MSGPACK_OBJECT_STR) {
            *len = kv->val.via.str.size;
            return kv->val.via.str.ptr;
        }
    }
    return NULL;
}

static int key_is(const msgpack_object_kv *kv, const char *k)
{
    size_t n = strlen(k);
    return kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == n &&
           memcmp(kv->key.via.str.ptr, k, n) == 0;
}

static int get_str(const msgpack_object *v, char *dst, size_t cap)
{
    if (v->type != MSGPACK_OBJECT_STR || v->via.str.size >= cap)
        return -EPROTO;
    dst[0] = 0;
    if (v->via.str.size == 0)
        return 0; /* msgpack-c may give a NULL body: no memchr/memcpy on it */
    if (memchr(v->via.str.ptr, 0, v->via.str.size))
        return -EPROTO;
    memcpy(dst, v->via.str.ptr, v->via.str.size);
    dst[v->via.str.size] = 0;
    return 0;
}

static int get_uint(const msgpack_object *v, uint64_t *dst)
{
    if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return -EPROTO;
    *dst = v->via.u64;
    return 0;
}

static int parse_kv(const msgpack_object_kv *kv, lt_ctl_msg *m, unsigned *seen)
{
    char type[16];
    uint64_t u = 0;
    if (key_is(kv, "type")) {
        if (get_str(&kv->val, type, sizeof type))
            return -EPROTO;
        m->type = !strcmp(type, "hello")    ? LT_CTL_HELLO
                  : !strcmp(type, "ack")    ? LT_CTL_ACK
                  : !strcmp(type, "status") ? LT_CTL_STATUS
                  : !strcmp(type, "stop")   ? LT_CTL_STOP
                  : !strcmp(type, "dump")   ? LT_CTL_DUMP
                                            : LT_CTL_BAD;
        *seen |= 1;
        return 0;
    }
    if (key_is(kv, "v")) {
        *seen |= 2;
        int e = get_uint(&kv->val, &u);
        m->version = (uint32_t)u;
        return e || u > UINT32_MAX ? -EPROTO : 0;
    }
    if (key_is(kv, "pid")) {
        *seen |= 4;
        int e = get_uint(&kv->val, &u);
        m->pid = (uint32_t)u;
        return e || u == 0 || u > INT32_MAX ? -EPROTO : 0;
    }
    if (key_is(kv, "ring")) {
        *seen |= 8;
        return get_uint(&kv->val, &m->ring);
    }
    if (key_is(kv, "len")) {
        *seen |= 64;
        int e = get_uint(&kv->val, &m->len);
        return e || m->len > LT_CTL_DUMP_MAX ? -EPROTO : 0;
    }
    if (key_is(kv, "flags")) {
        int e = get_uint(&kv->val, &u);
        m->flags = (uint32_t)u;
        return e || u > UINT32_MAX ? -EPROTO : 0;
    }
    if (key_is(kv, "sample")) {
        int e = get_uint(&kv->val, &u);
        m->sample = (uint32_t)u;
        return e || u == 0 || u > LT_CTL_SAMPLE_MAX ? -EPROTO : 0;
    }
    if (key_is(kv, "shm"))
        return (*seen |= 16), get_str(&kv->val, m->shm, sizeof m->shm);
    if (key_is(kv, "cmd"))
        return get_str(&kv->val, m->cmd, sizeof m->cmd);
    if (key_is(kv, "cwd"))
        return get_str(&kv->val, m->cwd, sizeof m->cwd);
    if (key_is(kv, "ok")) {
        *seen |= 32;
        if (kv->val.type != MSGPACK_OBJECT_BOOLEAN)
            return -EPROTO;
        m->ok = kv->val.via.boolean;
        return 0;
    }
    if (key_is(kv, "state"))
        return get_uint(&kv->val, &m->state);
    if (key_is(kv, "tid")) {
        int e = get_uint(&kv->val, &u);
        m->tid = (uint32_t)u;
        return e || u > INT32_MAX ? -EPROTO : 0;
    }
    if (key_is(kv, "outside")) {
        if (kv->val.type != MSGPACK_OBJECT_BOOLEAN)
            return -EPROTO;
        m->outside = kv->val.via.boolean;
        return 0;
    }
    if (key_is(kv, "session") || key_is(kv, "err"))
        return get_str(&kv->val, m->text, sizeof m->text);
    if (key_is(kv, "timing"))
        return get_str(&kv->val, m->timing, sizeof m->timing);
    if (key_is(kv, "memory")) {
        if (kv->val.type != MSGPACK_OBJECT_BOOLEAN)
            return -EPROTO;
        m->memory = kv->val.via.boolean;
        return 0;
    }
    if (key_is(kv, "lines_sampled")) {
        if (kv->val.type != MSGPACK_OBJECT_BOOLEAN)
            return -EPROTO;
        m->lines_sampled = kv->val.via.boolean;
        return 0;
    }
    return 0;
}

int lt_ctl_parse(const msgpack_object *o, lt_ctl_msg *m)
{
    memset(m, 0, sizeof *m);
    if (o->type != MSGPACK_OBJECT_MAP || o->via.map.size > 32)
        return -EPROTO;
    unsigned seen = 0;
    for (uint32_t i = 0; i < o->via.map.size; i++)
        if (parse_kv(&o->via.map.ptr[i], m, &seen))
            return -EPROTO;
    if ((seen & 3) != 3 || m->version != LT_CTL_VERSION)
        return -EPROTO;
    if (m->type == LT_CTL_HELLO && (seen & (4 | 8 | 16)) == (4 | 8 | 16))
        return m->outside && (!m->sample || !m->state) ? -EPROTO : 0; /* at what rate, what state? */
    if (m->type == LT_CTL_ACK && (seen & 32))
        return 0;
    if (m->type == LT_CTL_STATUS || m->type == LT_CTL_STOP)
        return 0;
    if (m->type == LT_CTL_DUMP && (seen & (4 | 64)) == (4 | 64))
        return 0;
    m->type = LT_CTL_BAD;
    return -EPROTO;
}
