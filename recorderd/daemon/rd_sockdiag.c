/* rd_sockdiag: the uid owning one TCP socket, from netlink's sock_diag
 * (rd_sockdiag.h). */
#include "rd_sockdiag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* An end as sock_diag takes it: family, address bytes (network order, 4
 * or 16), port in network order. A v4-mapped IPv6 end is its IPv4 one:
 * the kernel keeps such a socket among the IPv4 ones. */
typedef struct end {
    int family;
    uint8_t addr[16];
    uint16_t port;
} end;

static int end_of(const struct sockaddr *s, end *e)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memset(e, 0, sizeof *e);
    if (s->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)s;
        e->family = AF_INET;
        memcpy(e->addr, &a->sin_addr, 4);
        e->port = a->sin_port;
        return 0;
    }
    if (s->sa_family != AF_INET6)
        return -1;
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)s;
    e->port = a->sin6_port;
    if (!memcmp(&a->sin6_addr, mapped, 12)) {
        e->family = AF_INET;
        memcpy(e->addr, (const uint8_t *)&a->sin6_addr + 12, 4);
    } else {
        e->family = AF_INET6;
        memcpy(e->addr, &a->sin6_addr, 16);
    }
    return 0;
}

/* Once the kernel has answered one question, its "no such socket" is
 * taken as said; before, ENOENT may as well mean no tcp_diag module. */
static int g_answered;

long rd_sockdiag_uid(const struct sockaddr *at, const struct sockaddr *to)
{
    end a, b;
    if (end_of(at, &a) || end_of(to, &b) || a.family != b.family)
        return RD_SOCKDIAG_UNKNOWN;
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return RD_SOCKDIAG_UNAVAILABLE;
    struct {
        struct nlmsghdr nh;
        struct inet_diag_req_v2 r;
    } req;
    memset(&req, 0, sizeof req);
    req.nh.nlmsg_len = sizeof req;
    req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.nh.nlmsg_flags = NLM_F_REQUEST; /* one socket, looked up: no dump */
    req.r.sdiag_family = (uint8_t)a.family;
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_states = ~0u;
    req.r.id.idiag_sport = a.port;
    req.r.id.idiag_dport = b.port;
    memcpy(req.r.id.idiag_src, a.addr, sizeof req.r.id.idiag_src);
    memcpy(req.r.id.idiag_dst, b.addr, sizeof req.r.id.idiag_dst);
    req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    long uid = RD_SOCKDIAG_UNAVAILABLE;
    /* the kernel answers within the send: the reply is queued when it returns */
    union {
        struct nlmsghdr nh;
        char buf[8192];
    } rep;
    ssize_t n = -1;
    if (sendto(fd, &req, sizeof req, 0, (struct sockaddr *)&kernel, sizeof kernel) ==
        (ssize_t)sizeof req)
        do
            n = recv(fd, &rep, sizeof rep, MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
    close(fd);
    const struct nlmsghdr *h = &rep.nh;
    if (n < (ssize_t)sizeof *h || !NLMSG_OK(h, (size_t)n))
        return uid;
    if (h->nlmsg_type == NLMSG_ERROR) {
        const struct nlmsgerr *e = NLMSG_DATA(h);
        if (h->nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error == -ENOENT && g_answered)
            uid = RD_SOCKDIAG_UNKNOWN;
        return uid;
    }
    const struct inet_diag_msg *m = NLMSG_DATA(h);
    if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof *m))
        return uid;
    g_answered = 1;
    /* the very socket (a listener on that port is no client), and one with
     * an owner: a closed one (time-wait, orphaned) has no inode */
    if (m->id.idiag_sport != a.port || m->id.idiag_dport != b.port ||
        m->idiag_state == TCP_LISTEN || !m->idiag_inode)
        return RD_SOCKDIAG_UNKNOWN;
    return (long)m->idiag_uid;
}
