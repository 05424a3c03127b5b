/* co_calhist: LuaJIT's sampled-time calibration, remembered across the
 * user's traced processes.
 *
 * The calibration (co_calib.c) measures what LuaJIT's hook dispatch and
 * our hook leave on the program, in the first milliseconds of a process.
 * On the machine of bench/RESULTS.md (session 54) that measurement came
 * out in two groups: a Lua call's figure 19 ns at most starts, 28 to 32
 * at one start of two to four quiet and at most starts with the machine
 * loaded. A run calibrated in the dear group was over-debited: tiny calls
 * 16 to 21 points light, a wrap generator 23 to 28, where the same runs
 * debited with the cheap group's figures came within 2 to 7 points, under
 * the same load. The program's share follows the cheap figures, which no
 * look at the machine during the run tells apart (the figures of a loop
 * run inside the hook were dearer still).
 *
 * So each calibration's figures are kept in a small file of the user's
 * private directory (/tmp/luatrace-UID/calib, as the attach markers'),
 * with the Lua binary's and the collector's identity and the time; a
 * figure dearer by a fifth than the cheaper quarter of the last hour's
 * (three at least, this one among them) takes that instead, each figure
 * apart (a Lua call's, a C call's, a switch's); so does a call's cheaper
 * than half of it (take). A new build of either, or an hour, starts
 * afresh. LUATRACE_CALIB_HISTORY=0: none read or written; =/PATH: that
 * file instead. Nothing here runs in a hook: it runs once, at the
 * calibration, before tracing begins. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "co_state.h"
#include "lt_attach.h"

#define HIST_MAX 32    /* entries kept */
#define HIST_AGE 3600  /* seconds an entry counts */
#define HIST_MIN 3     /* entries of this build, this one among them, to compare with */

/* the figures kept: a Lua call's, a C call's (co_bias tick[1], tick[2])
 * and a switch's (switch16) */
enum { F_LUA, F_C, F_SWITCH, NFIG };

typedef struct hist {
    long long t;
    unsigned long long exe, so; /* identities (key_of) */
    unsigned long long fig[NFIG];
} hist;

/* A file's identity: device, inode and modification time, mixed. */
static unsigned long long key_of(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return 0;
    unsigned long long k = (unsigned long long)st.st_dev * 0x9E3779B97F4A7C15ull;
    k ^= (unsigned long long)st.st_ino * 0xC2B2AE3D27D4EB4Full;
    return k ^ ((unsigned long long)st.st_mtime * 0x165667B19E3779F9ull) ^
           (unsigned long long)st.st_mtim.tv_nsec;
}

static unsigned long long so_key(void)
{
    Dl_info di;
    return dladdr((void *)so_key, &di) && di.dli_fname ? key_of(di.dli_fname) : 0;
}

/* The history's path, in the user's private directory (lt_user_dir:
 * made 0700 if missing, refused if someone else's or open to others); -1
 * if none. */
static int hist_path(char *buf, size_t cap)
{
    if (lt_user_dir(geteuid(), buf, cap))
        return -1;
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "/calib");
    return 0;
}

/* The file's entries younger than HIST_AGE, at most max (the last). */
static int hist_read(const char *path, hist *h, int max, long long now)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return 0;
    FILE *f = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
                      !(st.st_mode & 022)
                  ? fdopen(fd, "r")
                  : NULL;
    if (!f) {
        close(fd);
        return 0;
    }
    int n = 0;
    hist e;
    while (fscanf(f, "1 %lld %llx %llx %llu %llu %llu\n", &e.t, &e.exe, &e.so, &e.fig[F_LUA],
                  &e.fig[F_C], &e.fig[F_SWITCH]) == 6) {
        if (e.t > now || now - e.t > HIST_AGE)
            continue;
        if (n == max) { /* the oldest goes */
            memmove(h, h + 1, (size_t)(max - 1) * sizeof *h);
            n--;
        }
        h[n++] = e;
    }
    fclose(f);
    return n;
}

/* h's entries to path, through a file renamed over it (another process
 * writing meanwhile loses its entry, never the file). */
static void hist_write(const char *path, const hist *h, int n)
{
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return;
    }
    for (int i = 0; i < n; i++)
        fprintf(f, "1 %lld %llx %llx %llu %llu %llu\n", h[i].t, h[i].exe, h[i].so,
                h[i].fig[F_LUA], h[i].fig[F_C], h[i].fig[F_SWITCH]);
    if (fclose(f) != 0 || rename(tmp, path) < 0)
        unlink(tmp);
}

static int by_value(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

/* Of figure k of the entries of this build (e's keys), e among them, not
 * 0 (nothing plausible measured): the cheaper quarter's dearest, or 0 if
 * there are fewer than HIST_MIN. Each figure apart: a start may find one
 * dear and another not (or none: a switch's). */
static unsigned long long cheap_quarter(const hist *h, int n, const hist *e, int k)
{
    unsigned long long v[HIST_MAX];
    int m = 0;
    for (int i = 0; i < n; i++)
        if (h[i].exe == e->exe && h[i].so == e->so && h[i].fig[k])
            v[m++] = h[i].fig[k];
    if (m < HIST_MIN)
        return 0;
    qsort(v, (size_t)m, sizeof *v, by_value);
    return v[(m - 1) / 4];
}

/* *fig stays, unless it is dearer by a fifth than the cheaper quarter's
 * q (or none, 0, was measured), or, for a call's (low), cheaper than half
 * of q: then q. The low side: one start in 32 of a session-55 history
 * measured a Lua call at 1.8 ns where the others gave 4.1 to 5.9, and its
 * tiny calls came out 21 points heavy. A switch's figure spreads from 0
 * to 3 ns start to start and is kept when cheap. */
static void take(uint64_t *fig, unsigned long long q, int low)
{
    if (q && (!*fig || (double)*fig > 1.2 * (double)q || (low && 2 * *fig < q)))
        *fig = q;
}

void co_calhist_apply(co_bias *b)
{
    const char *env = getenv("LUATRACE_CALIB_HISTORY");
    char path[128];
    if ((env && !strcmp(env, "0")) || !b->tick[1])
        return;
    if (env && env[0] == '/' && strlen(env) < sizeof path - 8) /* a file of the user's own */
        strcpy(path, env);
    else if (hist_path(path, sizeof path))
        return;
    static hist h[HIST_MAX];
    long long now = (long long)time(NULL);
    int n = hist_read(path, h, HIST_MAX - 1, now); /* room for this start's */
    uint64_t *fig[NFIG] = {&b->tick[1], &b->tick[2], &b->switch16};
    hist e = {now, key_of("/proc/self/exe"), so_key(), {0}};
    for (int k = 0; k < NFIG; k++)
        e.fig[k] = *fig[k];
    h[n++] = e;
    hist_write(path, h, n);
    if (!e.exe || !e.so)
        return;
    for (int k = 0; k < NFIG; k++) /* a dear moment's figures: the cheap ones' instead */
        take(fig[k], cheap_quarter(h, n, &e, k), k != F_SWITCH);
}
