/* c_host: a test program that embeds Lua 5.1 in a libuv loop the way a
 * server does, and listens for `recorderd attach` with luatrace_listen(L)
 * (when LUATRACE_ATTACH=1). tests/integration/attach.py attaches to it
 * over and over while it runs.
 *
 *     c_host SCRIPT EVENTS [STOPFILE]
 *
 * SCRIPT registers handlers with host.on(name, fn) and ends with
 * host.run(), which runs the loop (so the main thread's stack, main chunk
 * then host.run, is the base of every stack). Events, all driven from C:
 *   "pool"    timer A (1 ms, EVENTS times): lua_resume of one of 8
 *             coroutines made at startup, each suspended mid-call;
 *   "slow"    timer B (3 ms, EVENTS/3 times): idem, its own 4 coroutines;
 *   "tick"    timer C (2 ms, EVENTS/2 times): lua_pcall on the main
 *             thread; the string it returns is written to one end of a
 *             socketpair;
 *   "message" a line read at the other end: a new coroutine (lua_newthread
 *             from C) runs the handler until it yields its reply, which is
 *             written back; it stays suspended until
 *   "echo"    the reply comes back: the coroutine is resumed to its end.
 * Then, until STOPFILE exists, "linger" (lua_pcall, 1 ms) keeps Lua busy
 * without touching the output; last "finish" prints the transcript. The
 * output depends only on EVENTS, never on timing: each source keeps its
 * own state and the script prints at the end.
 */
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "luatrace.h"

enum { POOL = 8, SLOW = 4, LINE_MAX_ = 512 };

typedef struct conn {
    uv_pipe_t pipe;
    char buf[LINE_MAX_]; /* a partial line */
    size_t n;
    void (*on_line)(struct conn *c, const char *line);
    struct host *h;
} conn;

typedef struct host {
    lua_State *L;
    uv_loop_t *loop;
    uv_timer_t pool_t, slow_t, tick_t, linger_t;
    conn a, b; /* a writes messages and reads echoes; b serves them */
    unsigned events, pool_n, slow_n, tick_n, echo_n;
    int pool_ref, slow_ref, queue_ref; /* registry: tables of coroutines */
    unsigned q_head, q_tail;           /* coroutines waiting for their echo */
    const char *stopfile;
    int failed;
} host;

static host g_host; /* the C functions of the `host` table reach it */

/* {====== calling Lua */

static void fail(host *h, lua_State *co, const char *what)
{
    fprintf(stderr, "c_host: %s: %s\n", what, lua_tostring(co, -1));
    h->failed = 1;
    uv_stop(h->loop);
}

/* Pushes the handler called name, or fails. */
static int push_handler(host *h, const char *name)
{
    lua_getfield(h->L, LUA_REGISTRYINDEX, "c_host.handlers");
    lua_getfield(h->L, -1, name);
    lua_remove(h->L, -2);
    if (lua_isfunction(h->L, -1))
        return 0;
    lua_pop(h->L, 1);
    lua_pushfstring(h->L, "no handler %s", name);
    fail(h, h->L, "script");
    lua_pop(h->L, 1);
    return -1;
}

/* Calls handler name(arg) on the main thread; leaves nres results. */
static int call(host *h, const char *name, const char *arg, int nres)
{
    if (push_handler(h, name))
        return -1;
    lua_pushstring(h->L, arg);
    if (lua_pcall(h->L, 1, nres, 0)) {
        fail(h, h->L, name);
        lua_pop(h->L, 1);
        return -1;
    }
    return 0;
}

/* Resumes co with n arguments already on its stack. Returns LUA_YIELD,
 * 0 (finished) or -1 (failed). */
static int resume(host *h, lua_State *co, int n, const char *what)
{
    int st = lua_resume(co, n);
    if (st != 0 && st != LUA_YIELD) {
        fail(h, co, what);
        return -1;
    }
    return st;
}

/* A new coroutine running handler name, kept in table ref at index i. */
static lua_State *spawn(host *h, const char *name, int ref, unsigned i)
{
    lua_rawgeti(h->L, LUA_REGISTRYINDEX, ref);
    lua_State *co = lua_newthread(h->L);
    lua_rawseti(h->L, -2, (int)i);
    lua_pop(h->L, 1);
    if (push_handler(h, name))
        return NULL;
    lua_xmove(h->L, co, 1);
    return co;
}

static lua_State *get_co(host *h, int ref, unsigned i)
{
    lua_rawgeti(h->L, LUA_REGISTRYINDEX, ref);
    lua_rawgeti(h->L, -1, (int)i);
    lua_State *co = lua_tothread(h->L, -1);
    lua_pop(h->L, 2);
    return co;
}

/* }====== */

/* {====== the socketpair */

typedef struct wreq {
    uv_write_t req;
    char data[];
} wreq;

static void on_written(uv_write_t *req, int status)
{
    if (status < 0)
        fprintf(stderr, "c_host: write: %s\n", uv_strerror(status));
    free(req);
}

/* Writes s and a newline to c. */
static void send_line(conn *c, const char *s, size_t len)
{
    wreq *w = malloc(sizeof *w + len + 1);
    if (!w)
        return;
    memcpy(w->data, s, len);
    w->data[len] = '\n';
    uv_buf_t buf = uv_buf_init(w->data, (unsigned)len + 1);
    if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &buf, 1, on_written) < 0)
        free(w);
}

static void on_alloc(uv_handle_t *hd, size_t size, uv_buf_t *buf)
{
    static char space[65536];
    (void)hd;
    (void)size;
    *buf = uv_buf_init(space, sizeof space);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    conn *c = s->data;
    for (ssize_t i = 0; i < n; i++) {
        if (buf->base[i] != '\n') {
            if (c->n + 1 < sizeof c->buf)
                c->buf[c->n++] = buf->base[i];
            continue;
        }
        c->buf[c->n] = 0;
        c->n = 0;
        c->on_line(c, c->buf);
    }
    if (n < 0)
        uv_read_stop(s);
}

/* b: a message; its coroutine yields the reply and waits for the echo. */
static void on_message(conn *c, const char *line)
{
    host *h = c->h;
    lua_State *co = spawn(h, "message", h->queue_ref, ++h->q_tail);
    if (!co)
        return;
    lua_pushstring(co, line);
    if (resume(h, co, 1, "message") != LUA_YIELD || !lua_isstring(co, -1)) {
        if (!h->failed)
            lua_pushliteral(co, "message handler must yield a string"), fail(h, co, "message");
        return;
    }
    size_t len;
    const char *reply = lua_tolstring(co, -1, &len);
    send_line(&h->b, reply, len);
    lua_pop(co, 1);
}

static void maybe_done(host *h);

/* a: an echo; the oldest waiting coroutine takes it and ends. */
static void on_echo(conn *c, const char *line)
{
    host *h = c->h;
    lua_State *co = get_co(h, h->queue_ref, ++h->q_head);
    if (!co) {
        fprintf(stderr, "c_host: an echo nobody waits for\n");
        h->failed = 1;
        uv_stop(h->loop);
        return;
    }
    lua_pushstring(co, line);
    if (resume(h, co, 1, "echo") == LUA_YIELD) {
        lua_pushliteral(co, "the message coroutine yielded twice");
        fail(h, co, "echo");
    }
    lua_rawgeti(h->L, LUA_REGISTRYINDEX, h->queue_ref);
    lua_pushnil(h->L);
    lua_rawseti(h->L, -2, (int)h->q_head); /* done: let the GC have it */
    lua_pop(h->L, 1);
    h->echo_n++;
    maybe_done(h);
}

static int open_conns(host *h)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return -1;
    conn *c[2] = {&h->a, &h->b};
    for (int i = 0; i < 2; i++) {
        c[i]->h = h;
        c[i]->pipe.data = c[i];
        c[i]->on_line = i ? on_message : on_echo;
        if (uv_pipe_init(h->loop, &c[i]->pipe, 0) || uv_pipe_open(&c[i]->pipe, sv[i]))
            return -1;
        uv_read_start((uv_stream_t *)&c[i]->pipe, on_alloc, on_read);
    }
    return 0;
}

/* }====== */

/* {====== timers */

static void on_pool(uv_timer_t *t)
{
    host *h = t->data;
    int slow = t == &h->slow_t;
    unsigned n = slow ? ++h->slow_n : ++h->pool_n;
    lua_State *co = get_co(h, slow ? h->slow_ref : h->pool_ref, n % (slow ? SLOW : POOL) + 1);
    if (co)
        lua_pushinteger(co, (lua_Integer)n);
    if (co && resume(h, co, 1, slow ? "slow" : "pool") == LUA_YIELD)
        lua_settop(co, 0);
    else if (!h->failed)
        lua_pushliteral(h->L, "a pool coroutine ended"), fail(h, h->L, "pool");
    if (n >= (slow ? h->events / 3 : h->events))
        uv_timer_stop(t);
    maybe_done(h);
}

static void on_tick(uv_timer_t *t)
{
    host *h = t->data;
    char arg[32];
    snprintf(arg, sizeof arg, "%u", ++h->tick_n);
    if (h->tick_n >= h->events / 2)
        uv_timer_stop(t);
    if (call(h, "tick", arg, 1))
        return;
    size_t len;
    const char *msg = lua_tolstring(h->L, -1, &len);
    if (msg)
        send_line(&h->a, msg, len);
    lua_pop(h->L, 1);
}

static void on_linger(uv_timer_t *t)
{
    host *h = t->data;
    if (!h->stopfile || access(h->stopfile, F_OK) == 0) {
        uv_stop(h->loop);
        return;
    }
    call(h, "linger", "", 0);
}

/* Every source has delivered all its events: linger, then stop. */
static void maybe_done(host *h)
{
    unsigned half = h->events / 2;
    if (h->pool_n >= h->events && h->slow_n >= h->events / 3 && h->tick_n >= half &&
        h->echo_n >= half && !uv_is_active((uv_handle_t *)&h->linger_t))
        uv_timer_start(&h->linger_t, on_linger, 0, 1);
}

/* }====== */

/* Makes n coroutines running handler name, each run to its first yield. */
static int make_pool(host *h, const char *name, int *ref, unsigned n)
{
    lua_newtable(h->L);
    *ref = luaL_ref(h->L, LUA_REGISTRYINDEX);
    for (unsigned i = 1; i <= n; i++) {
        lua_State *co = spawn(h, name, *ref, i);
        if (!co)
            return -1;
        lua_pushinteger(co, (lua_Integer)i);
        if (resume(h, co, 1, name) != LUA_YIELD)
            return -1;
        lua_settop(co, 0);
    }
    return 0;
}

static void close_cb(uv_handle_t *hd, void *ud)
{
    (void)ud;
    if (!uv_is_closing(hd))
        uv_close(hd, NULL);
}

/* host.run(): the loop, until every event is served and STOPFILE exists. */
static int l_run(lua_State *L)
{
    host *h = &g_host;
    (void)L;
    if (make_pool(h, "pool", &h->pool_ref, POOL) || make_pool(h, "slow", &h->slow_ref, SLOW))
        return luaL_error(L, "c_host: cannot start the pools");
    lua_newtable(L);
    h->queue_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (open_conns(h))
        return luaL_error(L, "c_host: socketpair failed");
    uv_timer_t *ts[] = {&h->pool_t, &h->slow_t, &h->tick_t, &h->linger_t};
    for (int i = 0; i < 4; i++) {
        uv_timer_init(h->loop, ts[i]);
        ts[i]->data = h;
    }
    uv_timer_start(&h->pool_t, on_pool, 1, 1);
    uv_timer_start(&h->slow_t, on_pool, 3, 3);
    uv_timer_start(&h->tick_t, on_tick, 2, 2);
    uv_run(h->loop, UV_RUN_DEFAULT);
    uv_walk(h->loop, close_cb, NULL);
    uv_run(h->loop, UV_RUN_DEFAULT);
    if (!h->failed)
        call(h, "finish", "", 0);
    lua_pushboolean(L, !h->failed);
    return 1;
}

/* host.on(name, fn) */
static int l_on(lua_State *L)
{
    luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_getfield(L, LUA_REGISTRYINDEX, "c_host.handlers");
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_rawset(L, -3);
    return 0;
}

/* host.now(): CLOCK_MONOTONIC in ns, as a number. */
static int l_now(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)uv_hrtime());
    return 1;
}

static const luaL_Reg host_funcs[] = {
    {"run", l_run}, {"on", l_on}, {"now", l_now}, {NULL, NULL}};

int main(int argc, char **argv)
{
    if (argc < 3 || atoi(argv[2]) < 6) {
        fprintf(stderr, "usage: c_host SCRIPT EVENTS(>=6) [STOPFILE]\n");
        return 2;
    }
    host *h = &g_host;
    h->events = (unsigned)atoi(argv[2]);
    h->stopfile = argc > 3 ? argv[3] : NULL;
    h->loop = uv_default_loop();
    lua_State *L = h->L = luaL_newstate();
    luaL_openlibs(L);
    const char *attach = getenv("LUATRACE_ATTACH");
    if (attach && !strcmp(attach, "1") && luatrace_listen(L))
        return 1;
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "c_host.handlers");
    luaL_register(L, "host", host_funcs);
    lua_pop(L, 1);
    int st = luaL_loadfile(L, argv[1]) || lua_pcall(L, 0, 1, 0);
    if (st)
        fprintf(stderr, "c_host: %s\n", lua_tostring(L, -1));
    st = st || h->failed || !lua_toboolean(L, -1);
    lua_close(L);
    uv_loop_close(h->loop);
    return st ? 1 : 0;
}
