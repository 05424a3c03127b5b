/* lt_ring: the single-producer single-consumer byte ring in POSIX shared
 * memory that carries events from a traced process to recorderd.
 *
 * Segment layout (shm object "/luatrace-<name>"):
 *
 *   0        64       128      192      256            4096          4096+size
 *   +--------+--------+--------+--------+---- ... -----+--------------+
 *   | const  | prod.  | cons.  | control| (reserved)   | data[size]   |
 *   +--------+--------+--------+--------+---- ... -----+--------------+
 *
 * Each side maps the data twice back to back, so a record that crosses the
 * end of the ring is contiguous in memory: the producer never splits a
 * record and the consumer never copies one. head and tail are free-running
 * 64-bit byte counters (position = counter & (size-1)); they live on their
 * own cache lines so the two sides never share a line they both write.
 * The producer publishes head in batches (LT_RING_BATCH bytes) to keep the
 * line holding it from bouncing on every event.
 */
#ifndef LT_RING_H
#define LT_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LT_RING_MAGIC 0x31474e4952544cULL /* "LTRING1\0" little endian */
#define LT_RING_VERSION 1u
#define LT_RING_HDR_SIZE 4096u
#define LT_RING_MIN_SIZE (64u * 1024u)
#define LT_RING_MAX_SIZE (1024ull * 1024u * 1024u)
#define LT_RING_DEFAULT_SIZE (8u * 1024u * 1024u)
#define LT_RING_BATCH 4096u
#define LT_RING_FILL (LT_RING_BATCH + 512u) /* bytes filled ahead at a publish */
#define LT_RING_FILL_BYTE 0xc1 /* msgpack's one unused byte: no record starts so */
#define LT_RING_NAME_MAX 64 /* user part of the name, without prefix */
#define LT_RING_PREFIX "/luatrace-"

enum lt_prod_state {
    LT_PROD_RUNNING = 0,
    LT_PROD_DONE = 1, /* the producer wrote its last record */
};

enum lt_cons_state {
    LT_CONS_NONE = 0,
    LT_CONS_ATTACHED = 1,
    LT_CONS_GONE = 2, /* consumer closed: producer must stop waiting */
};

struct lt_ring_hdr {
    /* line 0: written once by the producer before anyone else maps it */
    uint64_t magic;
    uint32_t version;
    uint32_t hdr_size;
    uint64_t size; /* data bytes, power of two */
    uint32_t producer_pid;
    uint32_t flags;
    uint8_t pad0[64 - 32];
    /* line 1: producer */
    _Atomic uint64_t head;
    _Atomic uint64_t drops;     /* events dropped (drop mode) */
    _Atomic uint64_t heartbeat; /* bumped on every publish */
    _Atomic uint32_t prod_state;
    uint32_t pad_w;
    /* ns the producer waited for room, in waits long enough to read the
     * clock (64 rounds): the program's time lost to a recorder that could
     * not keep up (0 from a collector that did not count it) */
    _Atomic uint64_t waited_ns;
    /* at each publish, the bytes from head up to filled are set to
     * LT_RING_FILL_BYTE, a byte no record begins with: after a producer
     * that died unannounced (a signal), the consumer reads its records
     * there, written but never published, up to the first such byte
     * (lt_ring_fill_ahead). 0 from a collector that does not fill */
    _Atomic uint64_t filled;
    uint8_t pad1[64 - 48];
    /* line 2: consumer */
    _Atomic uint64_t tail;
    _Atomic uint32_t cons_state;
    uint8_t pad2[64 - 12];
    /* line 3: control word for attach/detach, written by the consumer */
    _Atomic uint32_t control;
    uint8_t pad3[64 - 4];
};

_Static_assert(sizeof(struct lt_ring_hdr) == 256, "ring header layout");
_Static_assert(offsetof(struct lt_ring_hdr, head) == 64, "head on its own line");
_Static_assert(offsetof(struct lt_ring_hdr, waited_ns) == 96, "waited_ns in the producer's line");
_Static_assert(offsetof(struct lt_ring_hdr, filled) == 104, "filled in the producer's line");
_Static_assert(offsetof(struct lt_ring_hdr, tail) == 128, "tail on its own line");
_Static_assert(offsetof(struct lt_ring_hdr, control) == 192, "control on its own line");

typedef struct lt_ring {
    struct lt_ring_hdr *hdr;
    uint8_t *data; /* 2*size bytes mapped: the second half mirrors the first */
    uint64_t size;
    uint64_t mask;
    uint64_t pos;       /* producer: local head; consumer: local tail */
    uint64_t peer_seen; /* producer: last tail read; consumer: last head read */
    uint64_t published; /* producer: last head stored in hdr */
    void *map;
    size_t map_len;
    char name[LT_RING_NAME_MAX + sizeof(LT_RING_PREFIX)];
} lt_ring;

/* Checks a user ring name: 1..LT_RING_NAME_MAX bytes of [A-Za-z0-9._-], not
 * starting with '.'. Returns 0 or -EINVAL. Any thread. */
int lt_ring_name_check(const char *name);

/* LUATRACE_SHM's value (no ring name: '%' is not allowed in one) that has
 * the collector name its ring after its process's script
 * (lt_ring_name_of_args): recorderd run sets it, so that every Lua process
 * of a command gets a session named after its own script. */
#define LT_RING_NAME_SCRIPT "%script"

/* The ring name for a process run as argv[0..argc): the base name, without
 * ".lua", of its script where argv[0] is a Lua interpreter (lua*: the first
 * argument after lua.c's options; none for "-" or a bare interpreter),
 * else of argv[0] (a host); bytes other than [A-Za-z0-9_-] as '_', at most
 * 40 of them; "lua" if none is left. Any thread. */
void lt_ring_name_of_args(int argc, char *const *argv, char *buf, size_t cap);

/* 1 if argv[0..argc) runs a Lua interpreter (lua*) told to load library
 * lib by an option before its script (-l lib or -llib, lua.c's way), else
 * 0: `lua5.1 -lluatrace app.lua`, not app.lua's own require. Any thread. */
int lt_args_loads(int argc, char *const *argv, const char *lib);

/* Parses a size such as "65536", "512K", "16M", "1G". Returns 0 and sets
 * *out to a power of two within [MIN, MAX], or -EINVAL. */
int lt_ring_parse_size(const char *s, uint64_t *out);

/* Producer: creates shm object for `name` (exclusive, mode 0600), sizes and
 * maps it. Returns 0 or a negative errno (-EEXIST if the name is taken). */
int lt_ring_create(lt_ring *r, const char *name, uint64_t size);

/* Consumer: opens an existing ring, checks its header and that it is owned
 * by `uid` (unless uid is (uid_t)-1) with no group/other access. Returns 0,
 * -EPROTO for a bad header, -EPERM for a wrong owner, or a negative errno. */
int lt_ring_open(lt_ring *r, const char *name, long uid);

/* Unmaps. Does not unlink. Safe on a zeroed or closed ring. */
void lt_ring_close(lt_ring *r);

/* Removes the shm name; mappings stay valid. Returns 0 or -errno. */
int lt_ring_unlink(const char *name);

/* Removes the segment under name when it is a leftover: ours, a ring
 * (header checked), its producer dead, so that no consumer took it (one
 * unlinks what it maps): a traced process killed between making its ring
 * and recorderd's taking it, whose name would otherwise be taken for ever
 * (every later program of that name a NAME.PID session, 8 MB of /dev/shm
 * each). Returns 0 once removed, else -EEXIST (alive, another user's, not
 * a ring, or replaced meanwhile). */
int lt_ring_reclaim(const char *name);

/* lt_ring_reclaim of every ring name in /dev/shm: leftovers whose name is
 * never used again (a killed program's, named by its pid) go too. Returns
 * how many were removed. */
int lt_ring_sweep(void);

/* ---- producer side (the traced thread only) ---- */

/* The free bytes after the producer's position, up to LT_RING_FILL of
 * them, set to LT_RING_FILL_BYTE, and hdr->filled to their end: what the
 * next batch writes over. Only free bytes: the consumer has read them. */
static inline void lt_ring_fill_ahead(lt_ring *r)
{
    uint64_t n = LT_RING_FILL;
    if (r->pos + n - r->peer_seen > r->size)
        /* acquire: the consumer finished reading bytes before it moved tail */
        r->peer_seen = atomic_load_explicit(&r->hdr->tail, memory_order_acquire);
    if (r->pos + n - r->peer_seen > r->size)
        n = r->peer_seen + r->size - r->pos;
    memset(r->data + (r->pos & r->mask), LT_RING_FILL_BYTE, (size_t)n); /* mirrored */
    /* relaxed: read only once the producer is gone */
    atomic_store_explicit(&r->hdr->filled, r->pos + n, memory_order_relaxed);
}

/* Makes everything committed visible to the consumer. */
static inline void lt_ring_publish(lt_ring *r)
{
    /* release: the record bytes must be visible before the new head */
    atomic_store_explicit(&r->hdr->head, r->pos, memory_order_release);
    r->published = r->pos;
    lt_ring_fill_ahead(r);
}

/* Returns where to write n (<= size) contiguous bytes, or NULL if the ring
 * has less free space. Reads the consumer's tail only when the cached value
 * says the ring is full. */
static inline uint8_t *lt_ring_reserve(lt_ring *r, uint64_t n)
{
    if (r->pos + n - r->peer_seen > r->size) {
        /* acquire: the consumer finished reading bytes before it moved tail */
        r->peer_seen = atomic_load_explicit(&r->hdr->tail, memory_order_acquire);
        if (r->pos + n - r->peer_seen > r->size)
            return NULL;
    }
    return r->data + (r->pos & r->mask);
}

static inline void lt_ring_commit(lt_ring *r, uint64_t n)
{
    r->pos += n;
    if (r->pos - r->published >= LT_RING_BATCH)
        lt_ring_publish(r);
}

/* ---- consumer side (one thread) ---- */

/* Sets *p to the unread bytes and returns how many there are (contiguous,
 * at most size), or -EPROTO if the producer's head is impossible. */
int64_t lt_ring_peek(lt_ring *r, const uint8_t **p);

/* Releases n bytes (n <= the last peek) back to the producer. */
void lt_ring_consume(lt_ring *r, uint64_t n);

#endif
