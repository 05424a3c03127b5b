/* staleline: how often the leaf line read from outside is stale (issue 21).
 * Lua 5.1 keeps the running function's pc in a register of luaV_execute and
 * stores it (L->savedpc) only before what may call out (Protect: table
 * reads through metamethods, calls, concatenation...); a reader from
 * outside sees that stored pc, so the line it gives for the leaf may be an
 * earlier one. The program measured (bench/workloads/staleline_*.lua) keeps
 * its current line in a local, register CUR of the function at LINEDEF,
 * set by the first instruction of each line (a LOADK, which stores no pc).
 * Each sample stops the process (ptrace), reads its running chain as
 * `record --stop` does and that register from the leaf frame's base, then
 * lets it go: the read line against the line the program is on.
 *
 *   staleline PID LINEDEF CUR SAMPLES [-v]
 * prints: samples, in the function, stale, and the stale share in percent;
 * with -v, each sample's line read and the line the program was on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rd_peek.h"

static lr_sr d;

/* The leaf frame of the running chain, or NULL. */
static const lr_sr_frame *leaf(void)
{
    if (!d.nchain)
        return NULL;
    const lr_sr_thread *t = &d.th[d.chain[d.nchain - 1]];
    return t->n ? &d.fr[t->first] : NULL;
}

/* The number in register reg of the running Lua function of L: -1 if none. */
static long reg_number(const void *L, int reg)
{
    uint8_t *base, tv[TV_SIZE];
    if (lr_sr_peek(&d, (const uint8_t *)L + LS_BASE, &base, sizeof base) ||
        lr_sr_peek(&d, base + reg * TV_SIZE, tv, sizeof tv) || tv[TV_TT] != 3)
        return -1; /* LUA_TNUMBER */
    double v;
    memcpy(&v, tv, sizeof v);
    return (long)v;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6)
        return fprintf(stderr, "usage: staleline PID LINEDEF CUR SAMPLES [-v]\n"), 2;
    int verbose = argc == 6 && !strcmp(argv[5], "-v");
    d.pid = atoi(argv[1]);
    int linedef = atoi(argv[2]), cur = atoi(argv[3]), n = atoi(argv[4]);
    const void *found[RD_PEEK_MAX_STATES];
    static rd_peek_stop s;
    if (rd_peek_stop_all(d.pid, &s))
        return fprintf(stderr, "staleline: cannot stop %d\n", (int)d.pid), 1;
    int k = rd_peek_find_states(&d, found);
    rd_peek_let_go(&s);
    if (!k)
        return fprintf(stderr, "staleline: no Lua state in %d\n", (int)d.pid), 1;
    long in = 0, stale = 0;
    for (int i = 0; i < n; i++) {
        usleep(10000);
        if (rd_peek_stop_all(d.pid, &s))
            break;
        lr_sr_read(&d, found[0], 0);
        const lr_sr_frame *f = leaf();
        long truth = reg_number(found[0], cur);
        rd_peek_let_go(&s);
        if (!f || d.fn[f->fn].linedef != linedef || truth <= 0)
            continue; /* elsewhere (a callee, the loop's set-up) */
        in++;
        stale += (long)f->line != truth;
        if (verbose)
            printf("read %u on %ld\n", f->line, truth);
    }
    printf("%d samples, %ld in the function, %ld stale: %.1f%%\n", n, in, stale,
           in ? 100.0 * (double)stale / (double)in : 0.0);
    return 0;
}
