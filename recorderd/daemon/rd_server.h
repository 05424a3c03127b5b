/* rd_server: the libuv side of recorderd: a unix socket (or an inherited
 * connected fd), the hello/ack handshake, session lifecycle, signals.
 * Everything here runs on the loop thread. */
#ifndef RD_SERVER_H
#define RD_SERVER_H

#include <uv.h>

#include "rd_session.h"

typedef struct rd_server rd_server;

/* Sampling a process from outside, for a hello that asks it (Lua 5.1's
 * run --sample): live/ has the sampler and daemon/ may not use live/, so
 * the command that makes the server sets these (rd_outside_ops). */
typedef struct rd_outside rd_outside;
typedef struct rd_outside_req {
    pid_t pid, tid; /* the process, and the thread running its Lua (0: unknown) */
    unsigned hz;
    uint64_t state; /* its lua_State's address */
} rd_outside_req;
typedef struct rd_outside_ops {
    /* Starts sampling req's process as its hello asks into a session of
     * srv->opts. Once it
     * samples, or cannot, it calls rd_server_outside_began (with conn);
     * after its session is over, rd_server_outside_ended. NULL: out of
     * memory, and neither is called. */
    rd_outside *(*start)(rd_server *srv, const rd_outside_req *req, void *conn);
    void (*quit)(rd_outside *o); /* ends the sampling: the session ends as usual */
} rd_outside_ops;

#define RD_SERVER_ERRORS 8
#define RD_SERVER_WATCH_MS 2000
#define RD_HELLO_MS 10000 /* default bound on a connection's first message (--hello-timeout) */

struct rd_server {
    uv_loop_t *loop;
    uv_poll_t listener; /* on listen_fd (rd_accept.c) */
    int listen_fd;
    int reserve_fd;     /* spare, for refusing a connection out of descriptors */
    uv_timer_t pause;   /* accepting waits for a spare descriptor */
    int listening;
    int relistening;    /* the listener's handle closes, to watch a new socket */
    uv_timer_t watch;   /* looks for the socket's file (rd_server_watch_socket) */
    int watching, watch_said;
    int remake_out;     /* listen: an --out removed is made again at the next hello */
    uv_async_t wake;
    uv_signal_t sigint, sigterm;
    rd_session_opts opts;
    rd_session *sessions;
    unsigned conns;  /* open connections */
    const rd_outside_ops *outside_ops; /* NULL: hellos asking for it are refused */
    rd_outside **outside;              /* the processes sampled from outside */
    void **outside_conn;               /* each one's connection while it is open, or NULL */
    unsigned noutside, outside_cap;
    int once;        /* stop after the first session ends (serve --fd) */
    int stopping;
    int ignore_sigint; /* run: Ctrl-C is the child's to handle */
    /* run: SIGTERM goes here instead of stopping (the child's to handle) */
    void (*on_signal)(rd_server *, int sig);
    void (*on_idle)(rd_server *); /* no session and no connection left */
    void *ud;
    pid_t only_pid;    /* attach: serve this process only */
    /* dump: a dump message (lt_attach.h: DUMP_NOW) arrived whole from
     * only_pid: records[0..n), LT_DUMP_* flags. Without it (or once one was
     * handled, or a session started) dump messages are refused, and once
     * one was handled hellos are. */
    void (*on_dump)(rd_server *, uint32_t flags, const uint8_t *records, size_t n);
    unsigned ndumps;
    unsigned nstarted; /* sessions ever started */
    unsigned nofd;     /* connections refused: out of file descriptors */
    unsigned nrefused; /* hellos refused: no session could be made for them */
    unsigned nidle;    /* connections closed: no hello within hello_ms */
    unsigned hello_ms; /* a connection's first message must come within */
    char path[108];
    /* the latest problems, for status; long enough for a session's error,
     * which names every file it could not write */
    char errors[RD_SERVER_ERRORS][1200];
    unsigned nerrors; /* how many were ever noted */
};

/* Notes a problem: on stderr (the log) and in the list status shows. */
void rd_server_note(rd_server *srv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Opens opts->out (unless no_files; rd_out_open: created if absent, the
 * out-directory rule applied; one that cannot be made yet is tried again at
 * each hello) and sets up handles on loop. Returns 0, or a negative errno
 * (out breaks the rule, or is a symlink) or libuv error with a message in
 * err; then nothing is to be closed. */
int rd_server_init(rd_server *srv, uv_loop_t *loop, const rd_session_opts *opts, char *err,
                   size_t cap);

/* Listens on path (0600, directory created 0700; a stale socket file with
 * nobody behind it is replaced, any other file is left alone: -EEXIST).
 * Returns 0 or -errno with err. */
int rd_server_listen(rd_server *srv, const char *path, char *err, size_t cap);

/* After rd_server_listen: every RD_SERVER_WATCH_MS, a socket file removed
 * (a cleaner of /tmp, rm, its directory gone) is made again, noted, so
 * that programs, status and stop still reach the daemon. */
int rd_server_watch_socket(rd_server *srv);

/* Serves one already connected socket (the private recorder). */
int rd_server_adopt(rd_server *srv, int fd);

/* Whether nothing is left to serve: no session, connection or sampling. */
int rd_server_idle(const rd_server *srv);

/* rd_outside_ops's calls back, on the loop: the sampling of conn's process
 * began (ok: the session's name in text) or not (text: why); returns 1 if
 * conn closed meanwhile (the state is gone: the sampling should end). The
 * sampling o is over, its session's reports written (err: why it ended
 * early, or ""). */
int rd_server_outside_began(rd_server *srv, void *conn, int ok, const char *text);
void rd_server_outside_ended(rd_server *srv, rd_outside *o, const char *err);

/* Closes every handle (after the loop ran dry or was stopped). */
/* Ends every session (its reports written, its connection closed; a
 * process blocked in C detaches at its next Lua event), then idle. */
void rd_server_stop(rd_server *srv);

void rd_server_close(rd_server *srv);


#endif
