/* lt_ctl: control messages on the unix socket between a traced process and
 * recorderd. Each message is one msgpack map with string keys; "type" says
 * which message it is and "v" the protocol version.
 *
 *   collector -> recorderd  {type:"hello", v, pid, shm, ring, cmd, cwd[, sample[, outside, state[, tid]]]}
 *                           sample: a sampled trace (LuaJIT's profiler) and
 *                           its samples per second; left out of an exact one.
 *                           outside (true, with sample): no ring and no hook
 *                           (Lua 5.1's run --sample); recorderd samples the
 *                           process from outside (state: its lua_State's
 *                           address, which the hello's wait keeps still:
 *                           no stop to find it; tid, the thread running it,
 *                           whose CPU time the samples weigh) and acks once
 *                           it does. An
 *                           older recorderd ignores the key and opens the ring,
 *                           which does not exist: it refuses, the program runs
 *   recorderd -> collector  {type:"ack", v, ok, session | err [, timing] [, memory]
 *                            [, lines_sampled]}
 *                           timing "none": trace with no clock (a coverage
 *                           run, listen/attach --coverage); a collector
 *                           that does not know the key times as usual;
 *                           memory true: trace the allocator too (listen
 *                           --memory, MEM records), ignored by one that
 *                           does not know it; lines_sampled true (with
 *                           timing "cpu" or "wall"): no line hook, a tick
 *                           finds its line by a probe (listen and attach
 *                           as run's default), ignored by one that does
 *                           not know it (it counts every line)
 *   client    -> recorderd  {type:"status", v}  reply {type:"status", v, text, json}
 *   client    -> recorderd  {type:"stop", v}    reply {type:"ack", v, ok, session:""}
 *   collector -> recorderd  {type:"dump", v, pid, len, flags} then len bytes
 *                           of event records (lt_attach.h: DUMP_NOW); no reply.
 *                           The records name threads by ids of the message's
 *                           own (1, 2, ... in the handler's reading order),
 *                           each introduced by a THREAD record with its
 *                           address, as a trace does
 *
 * The connection then stays open with nothing on it: its closing tells each
 * side that the other is gone.
 */
#ifndef LT_CTL_H
#define LT_CTL_H

#include <msgpack.h>
#include <stdint.h>

#define LT_CTL_VERSION 1u
#define LT_CTL_CMD_MAX 512
#define LT_CTL_TEXT_MAX 256
#define LT_CTL_CWD_MAX 1024 /* a longer cwd is sent empty: reports then use /proc */
#define LT_CTL_SAMPLE_MAX 1000 /* a hello's sample rate, at most */
#define LT_CTL_MSG_MAX 4096 /* a peer sending more without a message is dropped */

enum lt_ctl_type { LT_CTL_BAD = 0, LT_CTL_HELLO, LT_CTL_ACK, LT_CTL_STATUS, LT_CTL_STOP, LT_CTL_DUMP };

#define LT_CTL_DUMP_MAX (1u << 20) /* longest record payload of a dump */
#define LT_CTL_DUMP_HEAD_MAX 64    /* bytes lt_ctl_dump_head writes at most */

typedef struct lt_ctl_msg {
    enum lt_ctl_type type;
    uint32_t version;
    uint32_t pid;
    uint64_t ring;
    uint64_t len;   /* dump: bytes of records that follow */
    uint32_t flags; /* dump: LT_DUMP_* */
    uint32_t sample; /* hello: samples per second of a sampled trace (1..LT_CTL_SAMPLE_MAX), 0: exact */
    int outside;     /* hello, with sample: no ring, no hook; sample this process from
                        outside (run --sample of Lua 5.1), the ack once sampling has begun */
    uint64_t state;  /* hello, with outside: the address of its lua_State */
    uint32_t tid;    /* hello, with outside: the thread that runs it (its CPU time), or 0 */
    int ok;
    char shm[72];
    char cmd[LT_CTL_CMD_MAX];
    char cwd[LT_CTL_CWD_MAX]; /* hello: the program's working directory, or "" */
    char text[LT_CTL_TEXT_MAX]; /* ack: session name, or the error */
    char timing[8];             /* ack: "none" asks for no clock, "cpu" or "wall" for sampled
                                   time of that clock; "" as the collector likes */
    int memory;                 /* ack: trace the allocator's calls (MEM records) */
    int lines_sampled;          /* ack, with timing "cpu" or "wall": no line hook, lines by
                                   sample (run's default) */
} lt_ctl_msg;

/* The daemon's socket when none is given (doc/commands.md):
 * $XDG_RUNTIME_DIR/luatrace/recorderd.sock, else
 * /tmp/luatrace-$UID/recorderd.sock. */
void lt_ctl_default_path(char *buf, size_t cap);

/* Connects a stream socket to the unix socket at path (blocking, CLOEXEC).
 * Returns the fd, or -ENAMETOOLONG or another negative errno. */
int lt_ctl_connect(const char *path);

/* Appends the msgpack encoding of m to sb (hello, ack, dump head, or a bare
 * status or stop request). Returns 0, -EINVAL or -ENOMEM. */
int lt_ctl_pack(const lt_ctl_msg *m, msgpack_sbuffer *sb);

/* Writes the head of a dump message into buf (LT_CTL_DUMP_HEAD_MAX bytes)
 * and returns its length. Allocates nothing, calls nothing: safe in a
 * signal handler. */
size_t lt_ctl_dump_head(uint8_t *buf, uint32_t pid, uint32_t len, uint32_t flags);

/* Fills m from an unpacked object. Unknown keys are ignored; missing or
 * mistyped ones and over-long strings give -EPROTO. Any thread. */
int lt_ctl_parse(const msgpack_object *o, lt_ctl_msg *m);

/* Checks the msgpack object at p[0..n) before msgpack-c sees it: msgpack-c
 * allocates what a container header declares, so a 5-byte header could make
 * it reserve gigabytes. Returns the object's length when complete, 0 if
 * more bytes are needed, or -EPROTO when a string or container declares more
 * than max, nesting is deeper than 4, a type we never send appears, or max
 * bytes hold no complete object. Allocates nothing; any thread. */
long lt_ctl_scan(const uint8_t *p, size_t n, size_t max);

/* Appends a status reply: text for people, json for programs. */
int lt_ctl_pack_status(const char *text, const char *json, msgpack_sbuffer *sb);

/* Finds string field key of a reply map. Returns a pointer into o (not
 * terminated) and its length in *len, or NULL. */
const char *lt_ctl_field(const msgpack_object *o, const char *key, uint32_t *len);

#endif
