/* rd_http: the HTTP side of `recorderd listen --http ADDR`, on the
 * daemon's loop: a TCP listener, requests parsed by http_parser
 * (libhttp-parser), every request bounded in size (headers, no body) and
 * in time (a request that does not arrive whole in time is answered 408),
 * a bounded number of clients at once, one request per connection. What
 * a request gets is the handler's (rd_http_pprof in live/). Loop thread. */
#ifndef RD_HTTP_H
#define RD_HTTP_H

#include <stddef.h>
#include <stdio.h>
#include <uv.h>

enum {
    RD_HTTP_MAX_CONNS = 16,   /* connections at once, the owner's not counted; more: 503 */
    RD_HTTP_MAX_PER_CLIENT = 4, /* of one client (a user here, or an address) at once */
    RD_HTTP_MAX_HEAD = 8192,  /* request line and headers, bytes */
    RD_HTTP_MAX_URL = 2048,
    RD_HTTP_LINGER_MS = 2000  /* after an answer, until the client leaves, at most */
};

typedef struct rd_http rd_http;
typedef struct rd_http_req rd_http_req;

/* A request, whole: GET (others are refused before the handler), its path
 * and query ("" when none), not decoded, from a client allowed to ask
 * (others are answered 403 before the handler). */
struct rd_http_req {
    rd_http *h;
    const char *path, *query;
    const char *who; /* the client, for messages: "uid 1000", "10.0.0.7" */
    /* Set by a handler that answers later: called (once) if the client
     * leaves or the server closes before the answer; the request is gone
     * after it. */
    void (*on_gone)(rd_http_req *r, void *ud);
    void *gone_ud;
};

typedef void (*rd_http_handler)(rd_http_req *r, void *ud);

struct rd_http {
    uv_loop_t *loop;
    uv_tcp_t tcp;
    int listening;
    unsigned nconns;
    unsigned timeout_ms; /* the whole request must come within */
    rd_http_handler handler;
    void *ud;
    struct rd_http_conn *conns;
    char addr[64]; /* as bound: HOST:PORT, [V6]:PORT */
    int loopback;  /* addr is a loopback address */
    /* Who may ask: the daemon's own user on a loopback address (the kernel
     * says who owns the client's socket), and a client that sends
     * "Authorization: Bearer TOKEN" when token is set. */
    const char *token;
    FILE *log; /* a line per answer (the access log), or NULL */
};

/* Is spec an address rd_http_listen takes (PORT, IP:PORT, [IPv6]:PORT)? */
int rd_http_addr_ok(const char *spec);

/* Is spec a loopback address (127.0.0.0/8, ::1, localhost, a port alone)? */
int rd_http_addr_loopback(const char *spec);

/* Listens on spec: PORT (on 127.0.0.1), HOST:PORT or [V6]:PORT, HOST an
 * IP address or localhost; port 0 takes a free one (h->addr says which).
 * token (NULL: none; it must outlive h) lets clients with it in. Returns
 * 0 or a negative errno with a message in err. */
int rd_http_listen(rd_http *h, uv_loop_t *loop, const char *spec, unsigned timeout_ms,
                   const char *token, rd_http_handler fn, void *ud, char *err, size_t cap);

/* Answers r (status, Content-Type type, n bytes of body) and closes its
 * connection once written; r is gone after. */
void rd_http_reply(rd_http_req *r, int status, const char *type, const void *body, size_t n);

/* Answers r with a one-line text/plain message. */
void rd_http_error(rd_http_req *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Stops listening and closes every connection (on_gone for those waiting
 * for an answer). */
void rd_http_close(rd_http *h);

#endif
