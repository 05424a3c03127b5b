/* lt_ring: creation, validation and mirrored mapping of the shm ring. */
#include "lt_ring.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* lua.c's script argument: the first after its options (-e STAT and -l
 * NAME take a value, joined or not; -i, -v take none; "--" ends them), or
 * NULL (none, or "-": stdin). */
static const char *lua_script(int argc, char *const *argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-')
            return a;
        if (!strcmp(a, "--"))
            return i + 1 < argc && strcmp(argv[i + 1], "-") ? argv[i + 1] : NULL;
        if (!strcmp(a, "-"))
            return NULL;
        if ((a[1] == 'e' || a[1] == 'l') && !a[2])
            i++;
    }
    return NULL;
}

static int is_lua(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return path && !strncmp(b ? b + 1 : path, "lua", 3);
}

int lt_args_loads(int argc, char *const *argv, const char *lib)
{
    if (argc < 1 || !is_lua(argv[0]))
        return 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || !strcmp(a, "--") || !strcmp(a, "-"))
            return 0; /* the script, or the end of the options */
        if (a[1] == 'l' && !strcmp(a[2] ? a + 2 : i + 1 < argc ? argv[i + 1] : "", lib))
            return 1;
        if ((a[1] == 'e' || a[1] == 'l') && !a[2])
            i++;
    }
    return 0;
}

void lt_ring_name_of_args(int argc, char *const *argv, char *buf, size_t cap)
{
    const char *path = argc > 0 ? argv[0] : NULL, *b;
    if (is_lua(path))
        path = lua_script(argc, argv);
    b = path ? strrchr(path, '/') : NULL;
    b = b ? b + 1 : path ? path : "";
    size_t n = strlen(b);
    if (n > 4 && !strcmp(b + n - 4, ".lua"))
        n -= 4;
    n = n > 40 ? 40 : n;
    n = n < cap ? n : cap - 1;
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-';
        buf[i] = ok ? c : '_';
    }
    buf[n] = 0;
    if (!n)
        snprintf(buf, cap, "lua");
}

int lt_ring_name_check(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > LT_RING_NAME_MAX || name[0] == '.')
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        if (!ok)
            return -EINVAL;
    }
    return 0;
}

int lt_ring_parse_size(const char *s, uint64_t *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -EINVAL; /* strtoull would accept spaces, '+' and '-' */
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -EINVAL;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || v == 0 || v > (LT_RING_MAX_SIZE >> shift))
        return -EINVAL;
    v <<= shift;
    if (v < LT_RING_MIN_SIZE || (v & (v - 1)))
        return -EINVAL;
    *out = v;
    return 0;
}

static int full_name(char *dst, size_t cap, const char *name)
{
    if (lt_ring_name_check(name))
        return -EINVAL;
    snprintf(dst, cap, "%s%s", LT_RING_PREFIX, name);
    return 0;
}

/* Maps header + data, then the data a second time right after it. */
static int map_mirrored(lt_ring *r, int fd, uint64_t size)
{
    size_t len = LT_RING_HDR_SIZE + 2 * size;
    uint8_t *base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return -errno;
    void *a = mmap(base, LT_RING_HDR_SIZE + size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                   fd, 0);
    void *b = a == MAP_FAILED ? MAP_FAILED
                              : mmap(base + LT_RING_HDR_SIZE + size, size, PROT_READ | PROT_WRITE,
                                     MAP_SHARED | MAP_FIXED, fd, LT_RING_HDR_SIZE);
    if (b == MAP_FAILED) {
        int err = -errno;
        munmap(base, len);
        return err;
    }
    r->map = base;
    r->map_len = len;
    r->hdr = (struct lt_ring_hdr *)base;
    r->data = base + LT_RING_HDR_SIZE;
    r->size = size;
    r->mask = size - 1;
    return 0;
}

/* A file-size limit (ulimit -f) below the segment: growing it would raise
 * SIGXFSZ, which kills the producer, a traced program, by default. */
static int over_fsize_limit(uint64_t bytes)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
           (uint64_t)rl.rlim_cur < bytes;
}

int lt_ring_create(lt_ring *r, const char *name, uint64_t size)
{
    memset(r, 0, sizeof *r);
    if (size < LT_RING_MIN_SIZE || size > LT_RING_MAX_SIZE || (size & (size - 1)) ||
        full_name(r->name, sizeof r->name, name))
        return -EINVAL;
    if (over_fsize_limit(LT_RING_HDR_SIZE + size))
        return -EFBIG;
    int fd = shm_open(r->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    /* the producer first, before the slow part (reserving the pages): a
     * program killed meanwhile leaves a segment lt_ring_reclaim can judge */
    uint32_t pid = (uint32_t)getpid();
    ssize_t w = pwrite(fd, &pid, sizeof pid, offsetof(struct lt_ring_hdr, producer_pid));
    (void)w; /* a failure: posix_fallocate below fails too, and says why */
    /* The pages are reserved now: a sized but sparse segment on a full
     * /dev/shm (a container's 64 MB) would kill the producer, a traced
     * program, with SIGBUS at its first write to a page tmpfs cannot give. */
    int err;
    while ((err = posix_fallocate(fd, 0, (off_t)(LT_RING_HDR_SIZE + size))) == EINTR)
        ;
    err = -err;
    if (!err)
        err = map_mirrored(r, fd, size);
    close(fd);
    if (err) {
        shm_unlink(r->name);
        return err;
    }
    struct lt_ring_hdr *h = r->hdr;
    h->version = LT_RING_VERSION;
    h->hdr_size = LT_RING_HDR_SIZE;
    h->size = size;
    h->producer_pid = (uint32_t)getpid();
    lt_ring_fill_ahead(r); /* the first batch, before its publish */
    /* release: a consumer that sees the magic sees the fields above */
    atomic_store_explicit((_Atomic uint64_t *)&h->magic, LT_RING_MAGIC, memory_order_release);
    return 0;
}

static int check_header(const struct lt_ring_hdr *h, uint64_t file_size)
{
    uint64_t magic = atomic_load_explicit((_Atomic uint64_t *)&h->magic, memory_order_acquire);
    if (magic != LT_RING_MAGIC || h->version != LT_RING_VERSION ||
        h->hdr_size != LT_RING_HDR_SIZE)
        return -EPROTO;
    uint64_t size = h->size;
    if (size < LT_RING_MIN_SIZE || size > LT_RING_MAX_SIZE || (size & (size - 1)) ||
        file_size != LT_RING_HDR_SIZE + size)
        return -EPROTO;
    return 0;
}

static int open_checked(const lt_ring *r, long uid, struct stat *st)
{
    int fd = shm_open(r->name, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd < 0)
        return -errno;
    int err = 0;
    if (fstat(fd, st) < 0)
        err = -errno;
    else if (!S_ISREG(st->st_mode))
        err = -EPROTO;
    else if (uid != -1 && (st->st_uid != (uid_t)uid || (st->st_mode & 077)))
        err = -EPERM;
    else if ((uint64_t)st->st_size < LT_RING_HDR_SIZE + LT_RING_MIN_SIZE ||
             (uint64_t)st->st_size > LT_RING_HDR_SIZE + LT_RING_MAX_SIZE)
        err = -EPROTO;
    if (err) {
        close(fd);
        return err;
    }
    return fd;
}

int lt_ring_open(lt_ring *r, const char *name, long uid)
{
    memset(r, 0, sizeof *r);
    if (full_name(r->name, sizeof r->name, name))
        return -EINVAL;
    struct stat st;
    int fd = open_checked(r, uid, &st);
    if (fd < 0)
        return fd;
    /* The header is read from a private one-page mapping first: the size
     * it claims is only trusted once it matches the object's real size. */
    struct lt_ring_hdr *h = mmap(NULL, LT_RING_HDR_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    int err = h == MAP_FAILED ? -errno : check_header(h, (uint64_t)st.st_size);
    uint64_t size = err ? 0 : h->size;
    if (h != MAP_FAILED)
        munmap(h, LT_RING_HDR_SIZE);
    if (!err)
        err = map_mirrored(r, fd, size);
    close(fd);
    if (err)
        return err;
    /* relaxed: only this consumer writes tail */
    r->pos = atomic_load_explicit(&r->hdr->tail, memory_order_relaxed);
    atomic_store_explicit(&r->hdr->cons_state, LT_CONS_ATTACHED, memory_order_release);
    return 0;
}

void lt_ring_close(lt_ring *r)
{
    if (r->map)
        munmap(r->map, r->map_len);
    r->map = NULL;
    r->hdr = NULL;
    r->data = NULL;
}

int lt_ring_unlink(const char *name)
{
    char full[LT_RING_NAME_MAX + sizeof(LT_RING_PREFIX)];
    if (full_name(full, sizeof full, name))
        return -EINVAL;
    return shm_unlink(full) < 0 ? -errno : 0;
}

/* 1 if fd (st) is a ring, whole or cut while it was made, whose producer
 * is gone. lt_ring_create writes the producer's pid first, so a segment
 * with none is one being made now (or by an older build): left alone. A
 * pid reused since is taken as alive: the name is left, as before. */
static int producer_dead(int fd, const struct stat *st)
{
    struct lt_ring_hdr h;
    memset(&h, 0, sizeof h);
    if (pread(fd, &h, sizeof h, 0) < (ssize_t)offsetof(struct lt_ring_hdr, flags))
        return 0;
    if (h.magic && check_header(&h, (uint64_t)st->st_size))
        return 0; /* a ring it claims to be, but not ours to judge */
    pid_t pid = (pid_t)h.producer_pid;
    return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

int lt_ring_reclaim(const char *name)
{
    char full[LT_RING_NAME_MAX + sizeof(LT_RING_PREFIX)], path[sizeof full + 16];
    struct stat st, now;
    if (full_name(full, sizeof full, name))
        return -EINVAL;
    int fd = shm_open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd < 0)
        return -EEXIST;
    int dead = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
               !(st.st_mode & 077) && producer_dead(fd, &st);
    close(fd);
    /* still the segment looked at (glibc's shm lives in /dev/shm): another
     * program reclaiming the same name may have replaced it with its own */
    snprintf(path, sizeof path, "/dev/shm%s", full);
    if (!dead || lstat(path, &now) < 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev)
        return -EEXIST;
    return shm_unlink(full) < 0 ? -EEXIST : 0;
}

int lt_ring_sweep(void)
{
    DIR *d = opendir("/dev/shm"); /* glibc's shm_open directory */
    int n = 0;
    if (!d)
        return 0;
    const struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, LT_RING_PREFIX + 1, sizeof LT_RING_PREFIX - 2) &&
            !lt_ring_reclaim(e->d_name + sizeof LT_RING_PREFIX - 2))
            n++;
    closedir(d);
    return n;
}

int64_t lt_ring_peek(lt_ring *r, const uint8_t **p)
{
    /* acquire: pairs with the producer's release in lt_ring_publish */
    uint64_t head = atomic_load_explicit(&r->hdr->head, memory_order_acquire);
    uint64_t avail = head - r->pos;
    if (avail > r->size)
        return -EPROTO; /* head behind tail or more than a ring ahead */
    r->peer_seen = head;
    *p = r->data + (r->pos & r->mask);
    return (int64_t)avail;
}

void lt_ring_consume(lt_ring *r, uint64_t n)
{
    r->pos += n;
    /* release: our reads of those bytes are done before the producer reuses them */
    atomic_store_explicit(&r->hdr->tail, r->pos, memory_order_release);
}
