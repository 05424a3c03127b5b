/* rd_http: connections and requests of the pprof endpoint (rd_http.h).
 * http_parser reads the request; this file only bounds it: the bytes
 * before the end of the headers (RD_HTTP_MAX_HEAD, else 431), no body
 * (413), GET only (405), the time until the request is whole
 * (timeout_ms, else 408), and anything http_parser refuses is a 400. A
 * connection carries one request; the answer ends it: written, then our
 * side shut, the client's leaving awaited (RD_HTTP_LINGER_MS at most),
 * then closed. Who the client
 * is, is known when it connects (rd_http_auth): that bounds its
 * connections at once, and whether it may ask is decided once its
 * request is whole (403 otherwise). */
#include "rd_http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <http_parser.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rd_http_auth.h"
#include "rd_util.h"

enum { C_READING, C_HANDLING, C_REPLIED, C_LINGERING };
enum { H_NONE, H_FIELD, H_VALUE }; /* the header callback called last */

typedef struct rd_http_conn {
    uv_tcp_t tcp;
    uv_timer_t timer; /* the request's deadline, then the linger's */
    uv_shutdown_t shut;
    int nhandles, closing, state;
    rd_http *h;
    http_parser p;
    size_t nhead;  /* bytes read before the headers ended */
    int refusal;   /* a status found by the parser's callbacks (405, 413), or 0 */
    char url[RD_HTTP_MAX_URL + 1], path[RD_HTTP_MAX_URL + 1], query[RD_HTTP_MAX_URL + 1];
    size_t nurl;
    rd_http_req req;
    /* the client: its user (loopback only; -1 if not known), whether that
     * is the daemon's own, and its name for the log and messages */
    long uid;
    int owner;
    char ip[48], who[64];
    /* the Authorization header, read with the others */
    int hstate, in_auth, nauth_hdrs;
    char field[16];
    size_t nfield, nauth;
    char auth[RD_HTTP_TOKEN_MAX + 16];
    char buf[4096];
    struct rd_http_conn *next, **prevp;
} rd_http_conn;

static rd_http_conn *conn_of(rd_http_req *r)
{
    return (rd_http_conn *)((char *)r - offsetof(rd_http_conn, req));
}

static void conn_freed(uv_handle_t *hd)
{
    rd_http_conn *c = hd->data;
    if (--c->nhandles)
        return;
    c->h->nconns--;
    free(c);
}

/* The access log's line for c's answer (status, n bytes of body), or for
 * a client that left before it (status 0). */
static void log_answer(rd_http_conn *c, int status, size_t n)
{
    FILE *f = c->h->log;
    if (!f)
        return;
    char t[32], url[RD_HTTP_MAX_URL + 1], shown[RD_HTTP_MAX_URL + 1];
    time_t now = time(NULL);
    struct tm tm;
    strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    snprintf(url, sizeof url, "%.*s", (int)c->nurl, c->url);
    rd_printable(url, shown, sizeof shown);
    const char *method = c->nurl ? http_method_str((enum http_method)c->p.method) : "-";
    if (status)
        fprintf(f, "recorderd: http %s %s %s %s %d %zu\n", t, c->who, method,
                c->nurl ? shown : "-", status, n);
    else
        fprintf(f, "recorderd: http %s %s %s %s - - (left before the answer)\n", t, c->who,
                method, c->nurl ? shown : "-");
    fflush(f);
}

/* Closes c; a handler still waiting to answer hears of it. */
static void conn_close(rd_http_conn *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    if ((*c->prevp = c->next))
        c->next->prevp = c->prevp;
    if (c->state == C_HANDLING)
        log_answer(c, 0, 0);
    if (c->state == C_HANDLING && c->req.on_gone) {
        c->state = C_REPLIED;
        c->req.on_gone(&c->req, c->req.gone_ud);
    }
    uv_close((uv_handle_t *)&c->timer, conn_freed);
    uv_close((uv_handle_t *)&c->tcp, conn_freed);
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return status < 500 ? "Bad Request" : "Internal Server Error";
    }
}

typedef struct wreq {
    uv_write_t w;
    rd_http_conn *c;
    char *data;
} wreq;

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *hd, size_t hint, uv_buf_t *buf);

static void shut_done(uv_shutdown_t *s, int status)
{
    (void)s;
    (void)status; /* a failure: the linger's end closes it all the same */
}

static void linger_over(uv_timer_t *t)
{
    conn_close(t->data);
}

/* The answer is sent: a close now, with bytes of the request still
 * unread (a refusal before the request was read: 503, 413, 431, 414),
 * would reset the connection, and the client's kernel then drops the
 * answer it has not read yet (ECONNRESET instead of the 503, 7 clients in
 * 16). So our side is shut (FIN after the answer) and what the client
 * still sends is read and dropped until it leaves, RD_HTTP_LINGER_MS at
 * most; a lingering connection no longer counts as one at once. */
static void linger(rd_http_conn *c)
{
    c->state = C_LINGERING;
    c->shut.data = c;
    if (uv_shutdown(&c->shut, (uv_stream_t *)&c->tcp, shut_done) ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) ||
        uv_timer_start(&c->timer, linger_over, RD_HTTP_LINGER_MS, 0))
        conn_close(c);
}

static void written(uv_write_t *w, int status)
{
    wreq *q = (wreq *)w;
    if (status < 0 || q->c->closing)
        conn_close(q->c);
    else
        linger(q->c);
    free(q->data);
    free(q);
}

void rd_http_reply(rd_http_req *r, int status, const char *type, const void *body, size_t n)
{
    rd_http_conn *c = conn_of(r);
    char head[256];
    int k = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
                     "Connection: close\r\n\r\n",
                     status, reason(status), type, n, status == 405 ? "Allow: GET\r\n" : "");
    if (c->state != C_REPLIED && !c->closing)
        log_answer(c, status, n);
    c->state = C_REPLIED;
    uv_timer_stop(&c->timer);
    uv_read_stop((uv_stream_t *)&c->tcp);
    wreq *q = malloc(sizeof *q);
    char *data = malloc((size_t)k + n);
    if (!q || !data || c->closing) {
        free(q);
        free(data);
        conn_close(c);
        return;
    }
    memcpy(data, head, (size_t)k);
    if (n)
        memcpy(data + k, body, n);
    q->c = c;
    q->data = data;
    uv_buf_t b = uv_buf_init(data, (unsigned)((size_t)k + n));
    if (uv_write(&q->w, (uv_stream_t *)&c->tcp, &b, 1, written)) {
        free(data);
        free(q);
        conn_close(c);
    }
}

void rd_http_error(rd_http_req *r, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg - 1, fmt, ap);
    va_end(ap);
    n = n < 0 ? 0 : n > (int)sizeof msg - 2 ? (int)sizeof msg - 2 : n;
    msg[n++] = '\n';
    rd_http_reply(r, status, "text/plain; charset=utf-8", msg, (size_t)n);
}

/* {====== parsing: http_parser's callbacks */

static int on_url(http_parser *p, const char *at, size_t n)
{
    rd_http_conn *c = p->data;
    if (c->nurl + n > RD_HTTP_MAX_URL) {
        c->refusal = 414;
        return 1; /* stops the parser */
    }
    memcpy(c->url + c->nurl, at, n);
    c->nurl += n;
    return 0;
}

/* Header names and values come in pieces; only Authorization is kept. */
static int on_header_field(http_parser *p, const char *at, size_t n)
{
    rd_http_conn *c = p->data;
    if (c->hstate != H_FIELD)
        c->nfield = 0;
    c->hstate = H_FIELD;
    for (size_t i = 0; i < n; i++, c->nfield++)
        if (c->nfield < sizeof c->field)
            c->field[c->nfield] = (char)tolower((unsigned char)at[i]);
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
    rd_http_conn *c = p->data;
    if (c->hstate != H_VALUE) {
        c->in_auth = c->nfield == 13 && !memcmp(c->field, "authorization", 13);
        c->nauth_hdrs += c->in_auth;
        if (c->in_auth)
            c->nauth = 0;
    }
    c->hstate = H_VALUE;
    for (size_t i = 0; c->in_auth && i < n; i++)
        if (c->nauth < sizeof c->auth)
            c->auth[c->nauth++] = at[i];
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    rd_http_conn *c = p->data;
    if (p->http_major != 1)
        c->refusal = 400;
    else if (p->method != HTTP_GET)
        c->refusal = 405;
    else if ((p->flags & F_CHUNKED) || (p->content_length > 0 && p->content_length != ULLONG_MAX))
        c->refusal = 413;
    c->state = C_HANDLING;
    http_parser_pause(p, 1); /* one request: the rest is not read */
    return 0;
}

static const http_parser_settings settings = {.on_url = on_url,
                                              .on_header_field = on_header_field,
                                              .on_header_value = on_header_value,
                                              .on_headers_complete = on_headers_complete};

/* The path and query of c's URL; 0, or -1 if it is not one. */
static int split_url(rd_http_conn *c)
{
    struct http_parser_url u;
    http_parser_url_init(&u);
    if (http_parser_parse_url(c->url, c->nurl, 0, &u) || !(u.field_set & (1 << UF_PATH)))
        return -1;
    snprintf(c->path, sizeof c->path, "%.*s", (int)u.field_data[UF_PATH].len,
             c->url + u.field_data[UF_PATH].off);
    if (u.field_set & (1 << UF_QUERY))
        snprintf(c->query, sizeof c->query, "%.*s", (int)u.field_data[UF_QUERY].len,
                 c->url + u.field_data[UF_QUERY].off);
    return 0;
}

/* {====== who may ask */

/* The token of an "Authorization: Bearer TOKEN" header, or NULL. */
static const char *bearer(rd_http_conn *c, size_t *n)
{
    const char *v = c->auth, *end = c->auth + c->nauth;
    if (c->nauth_hdrs != 1 || c->nauth < 7 || strncasecmp(v, "bearer ", 7))
        return NULL;
    for (v += 7; v < end && *v == ' '; v++)
        ;
    while (end > v && end[-1] == ' ')
        end--;
    *n = (size_t)(end - v);
    return c->nauth < sizeof c->auth ? v : NULL;
}

/* 0 if c may ask; else it is answered 403 and -1 returned. */
static int refused(rd_http_conn *c)
{
    rd_http *h = c->h;
    size_t n = 0;
    const char *tok = h->token ? bearer(c, &n) : NULL;
    if (c->owner || (tok && rd_http_token_eq(h->token, tok, n)))
        return 0;
    if (h->token && c->nauth_hdrs)
        rd_http_error(&c->req, 403, "refused: not the bearer token of this endpoint");
    else if (h->token)
        rd_http_error(&c->req, 403, "refused: send the token of recorderd's "
                                    "--http-token-file as 'Authorization: Bearer TOKEN'");
    else if (c->uid >= 0)
        rd_http_error(&c->req, 403, "refused: you are uid %ld; this endpoint serves its "
                                    "own user only (uid %d)", c->uid, (int)geteuid());
    else
        rd_http_error(&c->req, 403, "refused: cannot tell which user of this machine is "
                                    "connecting from %s; this endpoint serves its own user only",
                      c->ip);
    return -1;
}

/* c->uid, owner, ip and who, from its two ends. */
static void identify(rd_http_conn *c)
{
    struct sockaddr_storage peer, me;
    int np = sizeof peer, nm = sizeof me;
    c->uid = -1;
    snprintf(c->ip, sizeof c->ip, "?");
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&peer, &np) ||
        uv_tcp_getsockname(&c->tcp, (struct sockaddr *)&me, &nm)) {
        snprintf(c->who, sizeof c->who, "?");
        return;
    }
    if (peer.ss_family == AF_INET6)
        uv_ip6_name((struct sockaddr_in6 *)&peer, c->ip, sizeof c->ip);
    else
        uv_ip4_name((struct sockaddr_in *)&peer, c->ip, sizeof c->ip);
    if (rd_http_is_loopback((struct sockaddr *)&peer))
        c->uid = rd_http_peer_uid((struct sockaddr *)&peer, (struct sockaddr *)&me);
    c->owner = c->uid >= 0 && c->uid == (long)geteuid();
    if (c->uid >= 0)
        snprintf(c->who, sizeof c->who, "uid %ld", c->uid);
    else
        snprintf(c->who, sizeof c->who, "%s", c->ip);
}

/* Why c is one connection too many, or NULL: a client has at most
 * RD_HTTP_MAX_PER_CLIENT at once, and all but the owner RD_HTTP_MAX_CONNS
 * together, so no one can keep the owner out. */
static const char *too_many(rd_http_conn *c)
{
    unsigned others = 0, mine = 0;
    for (rd_http_conn *o = c->h->conns; o; o = o->next) {
        if (o == c || o->state == C_LINGERING)
            continue;
        others += !o->owner;
        mine += c->uid >= 0 ? o->uid == c->uid : o->uid < 0 && !strcmp(o->ip, c->ip);
    }
    if (mine >= RD_HTTP_MAX_PER_CLIENT)
        return "too many requests of yours at once";
    return !c->owner && others >= RD_HTTP_MAX_CONNS ? "too many clients at once" : NULL;
}

/* }====== */

/* The request is whole (or refused): answer it, or hand it over. */
static void dispatch(rd_http_conn *c)
{
    rd_http_req *r = &c->req;
    uv_timer_stop(&c->timer);
    if (refused(c))
        return;
    if (c->refusal == 400)
        return rd_http_error(r, 400, "bad request: HTTP/1.0 or HTTP/1.1 only");
    if (c->refusal == 405)
        return rd_http_error(r, 405, "only GET is served");
    if (c->refusal == 413)
        return rd_http_error(r, 413, "a request has no body here");
    if (split_url(c))
        return rd_http_error(r, 400, "bad request: not a URL path");
    r->path = c->path;
    r->query = c->query;
    r->who = c->who;
    c->h->handler(r, c->h->ud);
}

/* Feeds n bytes of the request to the parser. */
static void feed(rd_http_conn *c, const char *p, size_t n)
{
    /* up to the end of the headers when they end here (the parser pauses) */
    c->nhead += http_parser_execute(&c->p, &settings, p, n);
    enum http_errno e = HTTP_PARSER_ERRNO(&c->p);
    if (c->nhead > RD_HTTP_MAX_HEAD)
        return rd_http_error(&c->req, 431, "request headers longer than %d bytes",
                             RD_HTTP_MAX_HEAD);
    if (c->state == C_HANDLING)
        return dispatch(c);
    if (c->refusal == 414)
        return rd_http_error(&c->req, 414, "URL longer than %d bytes", RD_HTTP_MAX_URL);
    if (e != HPE_OK)
        rd_http_error(&c->req, 400, "bad request: %s", http_errno_description(e));
}

/* }====== */

static void on_alloc(uv_handle_t *hd, size_t hint, uv_buf_t *buf)
{
    (void)hint;
    rd_http_conn *c = hd->data;
    *buf = uv_buf_init(c->buf, sizeof c->buf);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    rd_http_conn *c = st->data;
    if (n < 0)
        return conn_close(c); /* gone: a waiting handler hears of it; lingering: done */
    if (n > 0 && c->state == C_READING)
        feed(c, buf->base, (size_t)n);
    /* after the request, bytes are not read for anything but the peer's
     * leaving, and are dropped (lingering: until it leaves) */
}

static void on_timeout(uv_timer_t *t)
{
    rd_http_conn *c = t->data;
    if (c->state == C_READING)
        rd_http_error(&c->req, 408, "the request did not come whole within %u ms",
                      c->h->timeout_ms);
}

static void on_connection(uv_stream_t *server, int status)
{
    rd_http *h = server->data;
    rd_http_conn *c = status < 0 ? NULL : calloc(1, sizeof *c);
    if (!c || uv_tcp_init(h->loop, &c->tcp)) {
        free(c);
        return;
    }
    uv_timer_init(h->loop, &c->timer);
    c->h = h;
    c->nhandles = 2;
    c->tcp.data = c->timer.data = c->p.data = c;
    c->req.h = h;
    h->nconns++;
    if ((c->next = h->conns))
        c->next->prevp = &c->next;
    h->conns = c;
    c->prevp = &h->conns;
    http_parser_init(&c->p, HTTP_REQUEST);
    c->p.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp))
        return conn_close(c);
    identify(c);
    const char *why = too_many(c);
    if (why)
        return rd_http_error(&c->req, 503, "%s (%d a client, %d in all): try again later", why,
                             RD_HTTP_MAX_PER_CLIENT, RD_HTTP_MAX_CONNS);
    uv_timer_start(&c->timer, on_timeout, h->timeout_ms, 0);
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read))
        conn_close(c);
}

/* spec into addr: PORT, HOST:PORT or [V6]:PORT. 0 or -EINVAL. */
static int parse_addr(const char *spec, struct sockaddr_storage *ss)
{
    char host[64] = "127.0.0.1", *end;
    const char *port = spec, *colon = strrchr(spec, ':');
    if (colon) {
        const char *h0 = spec, *h1 = colon;
        if (*h0 == '[' && h1 > h0 && h1[-1] == ']')
            h0++, h1--;
        if (h1 - h0 <= 0 || (size_t)(h1 - h0) >= sizeof host)
            return -EINVAL;
        snprintf(host, sizeof host, "%.*s", (int)(h1 - h0), h0);
        port = colon + 1;
    }
    long pn = strtol(port, &end, 10);
    if (!*port || *end || pn < 0 || pn > 65535)
        return -EINVAL;
    if (!strcmp(host, "localhost"))
        snprintf(host, sizeof host, "127.0.0.1");
    if (!uv_ip4_addr(host, (int)pn, (struct sockaddr_in *)ss))
        return 0;
    return uv_ip6_addr(host, (int)pn, (struct sockaddr_in6 *)ss) ? -EINVAL : 0;
}

int rd_http_addr_ok(const char *spec)
{
    struct sockaddr_storage ss;
    return parse_addr(spec, &ss) == 0;
}

int rd_http_addr_loopback(const char *spec)
{
    struct sockaddr_storage ss;
    return parse_addr(spec, &ss) == 0 && rd_http_is_loopback((struct sockaddr *)&ss);
}

/* h->addr and h->loopback from the bound socket. */
static void bound_addr(rd_http *h)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char ip[48] = "?";
    uv_tcp_getsockname(&h->tcp, (struct sockaddr *)&ss, &len);
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        uv_ip6_name(a, ip, sizeof ip);
        snprintf(h->addr, sizeof h->addr, "[%s]:%d", ip, ntohs(a->sin6_port));
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        uv_ip4_name(a, ip, sizeof ip);
        snprintf(h->addr, sizeof h->addr, "%s:%d", ip, ntohs(a->sin_port));
    }
    h->loopback = rd_http_is_loopback((struct sockaddr *)&ss);
}

int rd_http_listen(rd_http *h, uv_loop_t *loop, const char *spec, unsigned timeout_ms,
                   const char *token, rd_http_handler fn, void *ud, char *err, size_t cap)
{
    struct sockaddr_storage ss;
    memset(h, 0, sizeof *h);
    h->loop = loop;
    h->timeout_ms = timeout_ms;
    h->token = token;
    h->log = stderr;
    h->handler = fn;
    h->ud = ud;
    if (parse_addr(spec, &ss)) {
        snprintf(err, cap, "--http %s: give PORT, IP:PORT or [IPv6]:PORT", spec);
        return -EINVAL;
    }
    int e = uv_tcp_init(loop, &h->tcp);
    if (e)
        return snprintf(err, cap, "--http %s: %s", spec, uv_strerror(e)), e;
    h->tcp.data = h;
    e = uv_tcp_bind(&h->tcp, (struct sockaddr *)&ss, 0);
    if (!e)
        e = uv_listen((uv_stream_t *)&h->tcp, 64, on_connection);
    if (e) {
        snprintf(err, cap, "--http %s: %s", spec, uv_strerror(e));
        uv_close((uv_handle_t *)&h->tcp, NULL);
        return e;
    }
    h->listening = 1;
    bound_addr(h);
    return 0;
}

void rd_http_close(rd_http *h)
{
    if (!h->listening)
        return;
    h->listening = 0;
    uv_close((uv_handle_t *)&h->tcp, NULL);
    while (h->conns)
        conn_close(h->conns);
}
