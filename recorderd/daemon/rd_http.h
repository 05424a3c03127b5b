/* rd_http: the HTTP side of `recorderd listen --http ADDR`, on the
 * daemon's loop: a TCP listener, requests parsed by http_parser
 * (libhttp-parser), every request bounded in size (headers, no body) and
 * in time (a request that does not arrive whole in time is answered 408),
 * a bounded number of clients at once, one request per connection. What
 * a request gets is the handler's (rd_http_pprof in live/). Loop thread. */
#ifndef RD_HTTP_H
#define RD_HTTP_H

#include <stddef.h>
#include <uv.h>

enum {
    RD_HTTP_MAX_CONNS = 16,   /* clients at once; more are answered 503 */
    RD_HTTP_MAX_HEAD = 8192,  /* request line and headers, bytes */
    RD_HTTP_MAX_URL = 2048
};

typedef struct rd_http rd_http;
typedef struct rd_http_req rd_http_req;

/* A request, whole: GET (others are refused before the handler), its path
 * and query ("" when none), not decoded. */
struct rd_http_req {
    rd_http *h;
    const char *path, *query;
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
};

/* Listens on spec: PORT (on 127.0.0.1), HOST:PORT or [V6]:PORT, HOST an
 * IP address or localhost; port 0 takes a free one (h->addr says which).
 * Returns 0 or a negative errno with a message in err. */
/* Is spec an address rd_http_listen takes (PORT, IP:PORT, [IPv6]:PORT)? */
int rd_http_addr_ok(const char *spec);

int rd_http_listen(rd_http *h, uv_loop_t *loop, const char *spec, unsigned timeout_ms,
                   rd_http_handler fn, void *ud, char *err, size_t cap);

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
