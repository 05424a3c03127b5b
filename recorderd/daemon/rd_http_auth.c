/* rd_http_auth: who is asking the pprof endpoint (rd_http_auth.h). */
#include "rd_http_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_sockdiag.h"

/* {====== the kernel's socket table */

/* An end of a TCP connection as /proc/net/tcp{,6} prints it: the address
 * as the raw 32-bit words of its network-order bytes, the port a number. */
typedef struct endpoint {
    int v6;
    uint32_t w[4];
    unsigned port;
} endpoint;

static int endpoint_of(const struct sockaddr *s, endpoint *e)
{
    memset(e, 0, sizeof *e);
    if (s->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)s;
        memcpy(e->w, &a->sin_addr, 4);
        e->port = ntohs(a->sin_port);
        return 0;
    }
    if (s->sa_family != AF_INET6)
        return -1;
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)s;
    e->v6 = 1;
    memcpy(e->w, &a->sin6_addr, 16);
    e->port = ntohs(a->sin6_port);
    return 0;
}

/* e as an IPv4 end, if it is one mapped into IPv6 (::ffff:a.b.c.d): a
 * client that connected with AF_INET is in /proc/net/tcp. */
static int as_v4(const endpoint *e, endpoint *v4)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!e->v6 || memcmp(e->w, prefix, 12))
        return -1;
    *v4 = (endpoint){.v6 = 0, .w = {e->w[3]}, .port = e->port};
    return 0;
}

int rd_http_is_loopback(const struct sockaddr *a)
{
    endpoint e, v4;
    if (endpoint_of(a, &e))
        return 0;
    if (!as_v4(&e, &v4))
        e = v4;
    if (!e.v6)
        return ((const uint8_t *)e.w)[0] == 127;
    static const uint8_t one[16] = {[15] = 1};
    return !memcmp(e.w, one, 16);
}

/* "HEX:PORT" of a table line into e (v6: 32 hex digits). 0 or -1. */
static int parse_end(const char *s, int v6, endpoint *e)
{
    int nw = v6 ? 4 : 1;
    for (int i = 0; i < nw; i++, s += 8) {
        char word[9];
        memcpy(word, s, 8);
        word[8] = 0;
        char *end;
        e->w[i] = (uint32_t)strtoul(word, &end, 16);
        if (*end || !*word)
            return -1;
    }
    char *end;
    if (*s != ':')
        return -1;
    e->port = (unsigned)strtoul(s + 1, &end, 16);
    return end == s + 1 ? -1 : 0;
}

static int same_end(const endpoint *a, const endpoint *b)
{
    return a->port == b->port && !memcmp(a->w, b->w, a->v6 ? 16 : 4);
}

/* The uid of the socket at local end `me` connected to `them` in file. */
static long find_uid(const char *file, const endpoint *me, const endpoint *them)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return -1;
    char line[512], l[80], r[80];
    long uid = -1;
    unsigned long u, inode;
    if (!fgets(line, sizeof line, f)) /* the heading */
        line[0] = 0;
    while (uid < 0 && fgets(line, sizeof line, f)) {
        endpoint a = {.v6 = me->v6}, b = {.v6 = me->v6};
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if (sscanf(line, " %*u: %79s %79s %*x %*x:%*x %*x:%*x %*x %lu %*d %lu", l, r, &u,
                   &inode) != 4 ||
            parse_end(l, me->v6, &a) || parse_end(r, me->v6, &b))
            continue;
        /* a closed socket (time-wait, orphaned) shows uid 0 and no inode */
        if (same_end(&a, me) && same_end(&b, them))
            uid = inode ? (long)u : -2;
    }
    fclose(f);
    return uid < 0 ? -1 : uid;
}

long rd_http_peer_uid(const struct sockaddr *peer, const struct sockaddr *local)
{
    endpoint p, l, p4, l4;
    if (endpoint_of(peer, &p) || endpoint_of(local, &l) || p.v6 != l.v6)
        return -1;
    long known = rd_sockdiag_uid(peer, local); /* the kernel's lookup, if it answers */
    if (known != RD_SOCKDIAG_UNAVAILABLE)
        return known;
    if (!p.v6)
        return find_uid("/proc/net/tcp", &p, &l);
    long uid = find_uid("/proc/net/tcp6", &p, &l);
    if (uid < 0 && !as_v4(&p, &p4) && !as_v4(&l, &l4))
        uid = find_uid("/proc/net/tcp", &p4, &l4);
    return uid;
}

/* }====== */

/* {====== the bearer token */

int rd_http_token_load(const char *path, char *tok, size_t cap, char *err, size_t errcap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errcap, "--http-token-file %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    const char *why = !S_ISREG(st.st_mode)      ? "not a regular file"
                      : st.st_uid != geteuid()   ? "not your own file"
                      : (st.st_mode & 077) != 0 ? "other users may read or write it (chmod 600)"
                                                : NULL;
    ssize_t n = why ? 0 : read(fd, tok, cap); /* cap bytes: one too many */
    close(fd);
    if (!why && n < 0)
        why = strerror(errno);
    n = n < 0 ? 0 : n;
    while (n > 0 && (tok[n - 1] == '\n' || tok[n - 1] == '\r'))
        n--;
    if (!why && (n < 16 || (size_t)n >= cap))
        why = "the token must be 16 to 255 bytes (e.g. head -c 32 /dev/urandom | base64)";
    for (ssize_t i = 0; !why && i < n; i++)
        if (tok[i] <= ' ' || tok[i] > '~')
            why = "the token must be one line of printable characters, no spaces";
    if (!why)
        tok[n] = 0;
    if (why) {
        snprintf(err, errcap, "--http-token-file %s: %s", path, why);
        memset(tok, 0, cap);
        return -1;
    }
    return 0;
}

int rd_http_token_eq(const char *tok, const char *given, size_t n)
{
    size_t len = strlen(tok);
    unsigned diff = len != n;
    for (size_t i = 0; i < len; i++)
        diff |= (unsigned char)tok[i] ^ (unsigned char)(i < n ? given[i] : 0);
    return len > 0 && diff == 0;
}

/* }====== */
