/* rd_outside: a process that asks to be sampled from outside (its
 * collector installed no hook: Lua 5.1's run --sample) gets a recording
 * of it, as `recorderd record PID` makes, into a session of the server's
 * options: a sampler's price (the reads are recorderd's, the program runs
 * untouched) and a sampler's shares of time. The recording ends with the
 * process, or when the server stops. */
#include "rd_outside.h"

#include <stdlib.h>

#include "rd_record.h"

struct rd_outside {
    rd_record_opts o; /* rd_record_start's: must outlive the recording */
    rd_recording *rec;
    rd_server *srv;
    void *conn; /* until the sampling began, or could not */
};

/* The sampler runs: the collector's ack, and the program goes on. */
static void began(rd_session *s, void *ud)
{
    rd_outside *x = ud;
    rd_server_outside_began(x->srv, x->conn, 1, s->name);
    x->conn = NULL;
    rd_record_go(x->rec); /* the ack is on its way: what follows is the program's */
}

static void ended(rd_recording *r, void *ud)
{
    rd_outside *x = ud;
    char err[1024];
    int e = rd_record_free(r, err, sizeof err);
    if (x->conn) /* never began: the collector is told why, and runs unsampled */
        rd_server_outside_began(x->srv, x->conn, 0, err);
    /* 0: the process exited (err says so), as it should */
    rd_server_outside_ended(x->srv, x, e && !x->conn ? err : "");
    free(x);
}

static rd_outside *start(rd_server *srv, pid_t pid, unsigned hz, uint64_t state, void *conn)
{
    rd_outside *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->srv = srv;
    x->conn = conn;
    x->o.pid = pid;
    x->o.hz = hz;
    x->o.so = srv->opts;
    x->o.so.out_fd = -1; /* the recording opens so.out itself */
    x->o.so.sample_hz = hz;
    x->o.started = began;
    x->o.held = 1;
    /* no stop to find the state: run's child would report its stop to
     * libuv's waitpid too (this process is its parent), not only to ours */
    x->o.state = (const void *)(uintptr_t)state;
    if (rd_record_start(&x->o, srv->loop, ended, x, &x->rec)) {
        free(x);
        return NULL;
    }
    return x;
}

static void quit(rd_outside *x)
{
    rd_record_quit(x->rec);
}

const rd_outside_ops rd_outside_sampler = {start, quit};
