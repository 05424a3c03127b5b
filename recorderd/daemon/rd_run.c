/* rd_run: spawn a command with the environment that makes lua5.1 load the
 * collector and report to us, serve its sessions, exit with its status. */
#include "rd_run.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lt_ring.h"
#include "rd_server.h"
#include "rd_util.h"

#ifndef RD_CMODDIR54
#define RD_CMODDIR54 "/usr/local/lib/lua/5.4"
#endif
#ifndef RD_CMODDIR
#define RD_CMODDIR "/usr/local/lib/lua/5.1"
#endif
#ifndef RD_SRCDIR
#define RD_SRCDIR "."
#endif

extern char **environ;

typedef struct run_ctx {
    rd_server srv;
    uv_process_t proc;
    uv_signal_t sighup;
    int child_done, closed;
    int code;
} run_ctx;

/* Lua 5.1 and LuaJIT load the collector of LUA_CPATH, Lua 5.4 (where its
 * build is, %s: the test of it) the one of LUA_CPATH_5_4 (collector/lua54/),
 * both from the LUA_INIT chunk itself, which the collector takes for
 * start-up (co_module.c). Another Lua runs untraced, and says so (under
 * pcall: an error in LUA_INIT would stop the program). */
#define RD_RUN_LUA_INIT                                                                   \
    "if _VERSION == 'Lua 5.1'%s then require 'luatrace' "                                   \
    "package.loaded.luatrace = nil "                                                        \
    "else pcall(function() local a = rawget(_G, 'arg') "                                    \
    "io.stderr:write('luatrace: ', _VERSION, ' is not supported (Lua 5.1, 5.4 and "         \
    "LuaJIT 2.1 are): ', a and a[0] or 'a program', ' runs untraced\\n') end) end"

/* Directory holding luatrace.so: next to this binary in a build tree
 * (BUILD/collector beside BUILD/recorderd/recorderd, named without "..":
 * recorderd env prints it for people), else the install directory. */
/* The build tree this recorderd runs from (BUILD, of
 * BUILD/recorderd/recorderd, holding BUILD/collector/luatrace.so) into
 * buf: 0, or -1 when it runs installed. */
static int build_tree(char *buf, unsigned long cap)
{
    char exe[PATH_MAX], probe[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1); /* absolute, no .. */
    char *slash = NULL;
    if (n <= 0)
        return -1;
    exe[n] = 0;
    for (int up = 0; up < 2 && (slash = strrchr(exe, '/')); up++)
        *slash = 0; /* BUILD/recorderd/recorderd -> BUILD */
    snprintf(probe, sizeof probe, "%s/collector/luatrace.so", exe);
    if (!slash || access(probe, R_OK))
        return -1;
    snprintf(buf, cap, "%s", exe);
    return 0;
}

void rd_run_module_dir(char *buf, unsigned long cap)
{
    char build[PATH_MAX];
    if (build_tree(build, sizeof build))
        snprintf(buf, cap, "%s", RD_CMODDIR);
    else
        snprintf(buf, cap, "%s/collector", build);
}

/* The same for Lua 5.4's build: BUILD/collector/lua54 or lib/lua/5.4. */
static void module_dir54(char *buf, unsigned long cap)
{
    char build[PATH_MAX];
    if (build_tree(build, sizeof build))
        snprintf(buf, cap, "%s", RD_CMODDIR54);
    else
        snprintf(buf, cap, "%s/collector/lua54", build);
}

/* LUA_CPATH_5_4, which lua5.4 reads before LUA_CPATH (which finds the
 * 5.1 build first): the 5.4 build's ?.so, then what lua5.4 would have
 * read, LUA_CPATH_5_4 or LUA_CPATH (or Lua's default). */
static void rd_run_cpath54(char *buf, unsigned long cap)
{
    char mod[PATH_MAX + 32];
    module_dir54(mod, sizeof mod);
    const char *old = getenv("LUA_CPATH_5_4");
    if (!old || !*old)
        old = getenv("LUA_CPATH");
    snprintf(buf, cap, "%s/?.so;%s", mod, old && *old ? old : ";");
}

/* The LUA_CPATH that finds that luatrace.so first: the directory's ?.so,
 * then the environment's LUA_CPATH (or Lua's default). */
static void rd_run_cpath(char *buf, unsigned long cap)
{
    char mod[PATH_MAX + 32]; /* readlink's path and "/../collector" */
    rd_run_module_dir(mod, sizeof mod);
    const char *old = getenv("LUA_CPATH");
    snprintf(buf, cap, "%s/?.so;%s", mod, old && *old ? old : ";");
}

/* s in single quotes for a shell. */
static void put_quoted(const char *s)
{
    putchar('\'');
    for (const char *p = s; *p; p++) /* a quote inside single quotes */
        fputs(*p == '\'' ? "'\\''" : (char[]){*p, 0}, stdout);
    putchar('\'');
}

/* Whether dir is one of the list's, separated by sep. */
static int listed_by(const char *list, const char *dir, char sep)
{
    size_t n = strlen(dir);
    for (const char *p = list; p; p = strchr(p, sep) ? strchr(p, sep) + 1 : NULL)
        if (!strncmp(p, dir, n) && (p[n] == sep || !p[n]))
            return 1;
    return 0;
}

static int listed(const char *list, const char *dir)
{
    return listed_by(list, dir, ':');
}

/* export VAR='...': mod's ?.so before what VAR held (make builds it),
 * or VAR as it is when it lists that already (a second eval adds nothing). */
static void export_cpath(const char *var, const char *mod, void (*make)(char *, unsigned long))
{
    char cpath[PATH_MAX * 2], entry[PATH_MAX + 64];
    snprintf(entry, sizeof entry, "%s/?.so", mod);
    const char *old = getenv(var);
    if (old && listed_by(old, entry, ';'))
        snprintf(cpath, sizeof cpath, "%s", old);
    else
        make(cpath, sizeof cpath);
    printf("export %s=", var);
    put_quoted(cpath);
    putchar('\n');
}

/* `recorderd env`: for the shell, as eval "$(recorderd env)" takes it.
 * From a build tree also PATH (recorderd by name) and MANPATH (man
 * recorderd): the source tree's man/ holds man1/ and man7/. A MANPATH that
 * ends with ':' keeps man's own search path after it. */
int rd_run_env(void)
{
    char build[PATH_MAX], dir[PATH_MAX + 32];
    const char *path = getenv("PATH"), *manpath = getenv("MANPATH");
    if (!build_tree(build, sizeof build)) {
        snprintf(dir, sizeof dir, "%s/recorderd", build);
        if (!listed(path ? path : "", dir)) {
            fputs("export PATH=", stdout);
            put_quoted(dir);
            fputs(path && *path ? ":\"$PATH\"\n" : "\n", stdout);
        }
        snprintf(dir, sizeof dir, "%s/man", RD_SRCDIR);
        char page[PATH_MAX + 64];
        snprintf(page, sizeof page, "%s/man1/recorderd.1", dir);
        if (!access(page, R_OK) && !listed(manpath ? manpath : "", dir)) {
            fputs("export MANPATH=", stdout);
            put_quoted(dir);
            fputs(manpath && *manpath ? ":\"$MANPATH\"\n" : ":\n", stdout);
        }
    }
    char mod[PATH_MAX + 32], entry[PATH_MAX + 64];
    rd_run_module_dir(mod, sizeof mod);
    export_cpath("LUA_CPATH", mod, rd_run_cpath);
    /* lua5.4 reads LUA_CPATH_5_4 first: the 5.4 build, where there is one */
    module_dir54(mod, sizeof mod);
    snprintf(entry, sizeof entry, "%s/luatrace.so", mod);
    if (!access(entry, R_OK))
        export_cpath("LUA_CPATH_5_4", mod, rd_run_cpath54);
    return ferror(stdout) ? 1 : 0;
}

static void finish(run_ctx *r)
{
    if (!r->closed) {
        r->closed = 1;
        uv_close((uv_handle_t *)&r->sighup, NULL);
        rd_server_close(&r->srv);
    }
}

/* SIGTERM and SIGHUP sent to run alone are the child's, as with any
 * wrapper: it ends as it would untraced, and run then writes the reports
 * and exits with its status (and removes its temporary directory). */
static void forward(rd_server *srv, int sig)
{
    run_ctx *r = srv->ud;
    if (!r->child_done)
        uv_process_kill(&r->proc, sig);
}

static void on_sighup(uv_signal_t *h, int sig)
{
    run_ctx *r = h->data;
    forward(&r->srv, sig);
}

/* Why CMD could not be started, and for the usual mistake, a Lua script
 * given as the command (run -- app.lua), what to type instead: the script
 * is not on PATH, or not executable, and lua5.1 runs it either way. */
static void say_cannot_run(const char *cmd, int e)
{
    size_t n = strlen(cmd);
    int script = n > 4 && !strcmp(cmd + n - 4, ".lua");
    int on_path = !strchr(cmd, '/');
    const char *why = e == UV_ENOENT && on_path ? "not found on PATH" : uv_strerror(e);
    if (script && (e == UV_ENOENT || e == UV_EACCES))
        fprintf(stderr, "recorderd: cannot run %s: %s (a Lua script: recorderd run -- lua5.1 "
                        "%s)\n", cmd, why, cmd);
    else
        fprintf(stderr, "recorderd: cannot run %s: %s\n", cmd, why);
}

/* A SIGHUP that was ignored (nohup) stays ignored. */
static void start_sighup(run_ctx *r, uv_loop_t *loop)
{
    struct sigaction old;
    uv_signal_init(loop, &r->sighup);
    r->sighup.data = r;
    if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
        return;
    uv_signal_start(&r->sighup, on_sighup, SIGHUP);
    uv_unref((uv_handle_t *)&r->sighup);
}

static void on_idle(rd_server *srv)
{
    run_ctx *r = srv->ud;
    if (r->child_done)
        finish(r);
}

static void on_child_exit(uv_process_t *p, int64_t status, int sig)
{
    run_ctx *r = p->data;
    r->code = sig ? 128 + sig : (int)status;
    r->child_done = 1;
    uv_close((uv_handle_t *)p, NULL);
    if (rd_server_idle(&r->srv))
        finish(r);
}

typedef struct envb {
    char **v;
    int n;
    char *mine[16]; /* the entries we allocated */
    int nmine;
} envb;

static void env_free(envb *e)
{
    for (int i = 0; i < e->nmine; i++)
        free(e->mine[i]);
    free(e->v);
}

static void env_set(envb *e, const char *key, const char *val)
{
    size_t kl = strlen(key);
    char *kv = malloc(kl + strlen(val) + 2);
    sprintf(kv, "%s=%s", key, val);
    e->mine[e->nmine++] = kv;
    for (int i = 0; i < e->n; i++)
        if (!strncmp(e->v[i], key, kl) && e->v[i][kl] == '=') {
            e->v[i] = kv;
            return;
        }
    e->v[e->n++] = kv;
    e->v[e->n] = NULL;
}

static void child_env(envb *e, const rd_run_opts *o, const char *sock)
{
    int n = 0;
    while (environ[n])
        n++;
    *e = (envb){calloc((size_t)n + 16, sizeof(char *)), n, {0}, 0};
    memcpy(e->v, environ, (size_t)n * sizeof(char *));
    char cpath[PATH_MAX * 2];
    rd_run_cpath(cpath, sizeof cpath);
    env_set(e, "LUA_CPATH", cpath);
    char cpath54[PATH_MAX * 2];
    rd_run_cpath54(cpath54, sizeof cpath54);
    env_set(e, "LUA_CPATH_5_4", cpath54);
    env_set(e, "LUATRACE_SOCKET", sock);
    if (!getenv("LUATRACE_SHM")) /* each process's session after its own script */
        env_set(e, "LUATRACE_SHM", LT_RING_NAME_SCRIPT);
    /* lua5.1 app.lua without -lluatrace is traced too; another Lua that
     * the program starts (5.2+, LuaJIT) reads LUA_INIT as well, and cannot
     * load this collector: it runs untraced, and says so (an error in
     * LUA_INIT would stop it: the message is written under pcall). The
     * program never asked for the collector, so package.loaded does not
     * show it (busted's insulation, for one, walks package.loaded): its
     * own require "luatrace" loads it again, then as the module it asked
     * for. */
    if (!getenv("LUA_INIT")) {
        char mod54[PATH_MAX + 32], init[1024];
        module_dir54(mod54, sizeof mod54);
        snprintf(mod54 + strlen(mod54), sizeof mod54 - strlen(mod54), "/luatrace.so");
        snprintf(init, sizeof init, RD_RUN_LUA_INIT,
                 access(mod54, R_OK) ? "" : " or _VERSION == 'Lua 5.4'");
        env_set(e, "LUA_INIT", init);
        /* what LUA_CPATH gained, for the collector to take off the
         * program's package.cpath again (collector/co_cpath.c) */
        char mod[PATH_MAX + 32], add[PATH_MAX + 40];
        rd_run_module_dir(mod, sizeof mod);
        snprintf(add, sizeof add, "%s/?.so;", mod);
        env_set(e, "LUATRACE_RUN_CPATH", add);
        const char *old = getenv("LUA_CPATH");
        if (!old || !*old) /* ";;": Lua's default, then a ';' of ours */
            env_set(e, "LUATRACE_RUN_CPATH_TAIL", "1");
        /* and what LUA_CPATH_5_4 gained (5.4 adds no ';' after ";;") */
        char add54[PATH_MAX + 40];
        module_dir54(add54, sizeof add54 - 8);
        snprintf(add54 + strlen(add54), sizeof add54 - strlen(add54), "/?.so;");
        env_set(e, "LUATRACE_RUN_CPATH_5_4", add54);
    }
    if (o->ring)
        env_set(e, "LUATRACE_RING", o->ring);
    if (o->mode)
        env_set(e, "LUATRACE_MODE", o->mode);
    if (o->coverage) /* counts, stacks and lines; the collector reads no clock */
        env_set(e, "LUATRACE_TIMING", "none");
    else if (o->sample_time) /* as the ack says: no calibration for a clock unused */
        env_set(e, "LUATRACE_TIMING", "sample");
    if (!o->coverage && o->sample_time)
        env_set(e, "LUATRACE_TICK_CLOCK", o->wall ? "wall" : "cpu");
    if (!o->coverage && o->sample_time)
        env_set(e, "LUATRACE_LINES", o->lines_sampled ? "sample" : "exact");
    if (o->memory)
        env_set(e, "LUATRACE_MEMORY", "1");
    if (o->quiet) /* the collector's notes too (LuaJIT's JIT off), not its errors */
        env_set(e, "LUATRACE_QUIET", "1");
    if (o->sample_hz) {
        char hz[16];
        snprintf(hz, sizeof hz, "%u", o->sample_hz);
        env_set(e, "LUATRACE_SAMPLE", hz);
    }
}

static int spawn(run_ctx *r, const rd_run_opts *o, char **argv, const char *sock)
{
    uv_stdio_container_t io[3];
    for (int i = 0; i < 3; i++) {
        io[i].flags = UV_INHERIT_FD;
        io[i].data.fd = i;
    }
    uv_process_options_t po = {0};
    envb env;
    child_env(&env, o, sock);
    po.exit_cb = on_child_exit;
    po.file = argv[0];
    po.args = argv;
    po.env = env.v;
    po.stdio = io;
    po.stdio_count = 3;
    r->proc.data = r;
    int e = uv_spawn(r->srv.loop, &r->proc, &po);
    env_free(&env);
    if (e)
        say_cannot_run(argv[0], e);
    return e;
}

/* The file cmd runs (as execvp finds it) into path, and the interpreter
 * its #! line names, when that is a Lua luatrace does not trace (lua, as
 * Debian's alternatives choose it, lua5.2, lua5.3: busted and luacheck
 * start with #!/usr/bin/env lua) into lua: 1, else 0. */
static int other_lua_script(const char *cmd, char *path, size_t cap, char *lua, size_t lcap)
{
    const char *dirs = strchr(cmd, '/') ? "" : getenv("PATH");
    FILE *f = NULL;
    for (const char *d = dirs; d && !f;) {
        const char *end = strchr(d, ':');
        size_t n = end ? (size_t)(end - d) : strlen(d);
        if (!strchr(cmd, '/'))
            snprintf(path, cap, "%.*s%s%s", (int)n, d, n ? "/" : "", cmd);
        else
            snprintf(path, cap, "%s", cmd);
        f = access(path, X_OK) == 0 ? fopen(path, "r") : NULL;
        d = end ? end + 1 : NULL;
    }
    if (!f)
        return 0;
    char line[256];
    int ok = fgets(line, sizeof line, f) && !strncmp(line, "#!", 2);
    fclose(f);
    if (!ok)
        return 0;
    line[strcspn(line, "\r\n")] = 0;
    /* the last word: the interpreter, or the name env looks up */
    char *w = line + strlen(line);
    while (w > line + 2 && w[-1] != ' ' && w[-1] != '\t' && w[-1] != '/')
        w--;
    if (strcmp(w, "lua") && strncmp(w, "lua5.2", 6) && strncmp(w, "lua5.3", 6))
        return 0;
    snprintf(lua, lcap, "%.*s", (int)(lcap - 1), w);
    return 1;
}

/* The command ended and no process of it connected: say why that may be,
 * rather than leave the user looking for a session that is not there. Not
 * for a Lua interpreter that failed under run's LUA_INIT: it loaded the
 * collector, and never ran its script (missing, a syntax error, a bad
 * option), which its own message says. */
/* Whether a Lua interpreter's options (those before its script, as
 * lua.c reads them) include -E: Lua 5.2 and later then ignore LUA_INIT
 * and LUA_CPATH, both of which run sets to load the collector. */
static int ignores_env(char **argv)
{
    for (int i = 1; argv[i] && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "--"))
            return 0;
        if (!strcmp(argv[i], "-E"))
            return 1;
        if ((!strcmp(argv[i], "-e") || !strcmp(argv[i], "-l")) && argv[i + 1])
            i++; /* the option's argument, not an option */
    }
    return 0;
}

/* Says that nothing was traced, with --quiet too (a failure, not a
 * summary): 1, or 0 where the command's own failure says why (a Lua
 * interpreter that failed under run's LUA_INIT). */
static int untraced_note(char **argv, int code)
{
    const char *b = strrchr(argv[0], '/');
    const char *base = b ? b + 1 : argv[0];
    int lua = !strncmp(base, "lua", 3);
    /* lua5.4 reads LUA_INIT_5_4 instead of LUA_INIT where it is set: a
     * lua5.4 command, or one that may start it (a script) */
    int init54 = getenv("LUA_INIT_5_4") && (!lua || !strncmp(base, "lua5.4", 6));
    if (code != 0 && lua && !getenv("LUA_INIT") && !init54 && !ignores_env(argv))
        return 0;
    /* a collector that loaded and could not begin (no room in /dev/shm)
     * said why above: the note must not deny it was loaded */
    fprintf(stderr, "recorderd: nothing was traced: no Lua process of the command loaded "
                    "luatrace, or none could begin to trace (its message above says why)%s\n",
            code ? "" : " (exit status 125)");
    char shown[128];
    rd_printable(base, shown, sizeof shown);
    /* the hint names the interpreter the user ran (it said lua5.1 of any):
     * lua, lua5.4, luajit, luajit-2.1..., not a Lua script's name
     * (luacheck), which takes no -lluatrace */
    int interp = !strcmp(base, "lua") || !strncmp(base, "lua5.", 5) ||
                 !strncmp(base, "luajit", 6);
    if (getenv("LUA_INIT") && interp)
        fprintf(stderr, "recorderd: LUA_INIT is set, so run did not set it to load the "
                        "collector: add -lluatrace (recorderd run -- %s -lluatrace ...)\n",
                shown);
    else if (getenv("LUA_INIT"))
        fprintf(stderr, "recorderd: LUA_INIT is set, so run did not set it to load the "
                        "collector: add -lluatrace to the command of each Lua it starts "
                        "(lua5.1 -lluatrace ...)\n");
    else if (init54)
        fprintf(stderr, "recorderd: LUA_INIT_5_4 is set, and lua5.4 reads it instead of run's "
                        "LUA_INIT: add -lluatrace to the lua5.4 command\n");
    else if (interp && ignores_env(argv))
        fprintf(stderr, "recorderd: %s -E ignores LUA_INIT and LUA_CPATH, which run sets to "
                        "load the collector: drop -E\n", shown);
    char path[PATH_MAX], named[64];
    if (!interp && other_lua_script(argv[0], path, sizeof path, named, sizeof named)) {
        /* a test runner whose #! line picks the system's lua, which may
         * be 5.2 or 5.3: the note above is all it said */
        char cmd[256], at[256];
        rd_printable(argv[0], cmd, sizeof cmd);
        rd_printable(path, at, sizeof at);
        rd_printable(named, named, sizeof named);
        fprintf(stderr, "recorderd: %s runs under %s, as its #! line says: name the "
                        "interpreter: recorderd run -- lua5.1 %s%s\n",
                cmd, named, at, argv[1] ? " ..." : "");
    }
    return 1;
}

int rd_run(const rd_run_opts *o, char **argv)
{
    char tmp[] = RD_RUN_DIR "XXXXXX", sock[64], err[512];
    run_ctx r = {.code = 127};
    rd_session_opts so = {.out = o->out, .summary = !o->quiet, .no_trace = o->no_trace,
                          .coverage = o->coverage, .sample_time = o->sample_time, .wall = o->wall,
                          .memory = o->memory,
                          .backends = o->backends, .nbackends = o->nbackends,
                          .formats = o->formats, .cov = o->cov};
    uv_loop_t *loop = uv_default_loop();
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "recorderd: cannot create a temporary directory: %s\n", strerror(errno));
        return 127;
    }
    snprintf(sock, sizeof sock, "%s/sock", tmp);
    if (rd_server_init(&r.srv, loop, &so, err, sizeof err)) {
        fprintf(stderr, "recorderd: %s\n", rd_printable(err, err, sizeof err));
        rmdir(tmp);
        return 127;
    }
    r.srv.outside_ops = o->outside;
    if (rd_server_listen(&r.srv, sock, err, sizeof err)) {
        fprintf(stderr, "recorderd: %s\n", rd_printable(err, err, sizeof err));
        rd_server_close(&r.srv);
        uv_run(loop, UV_RUN_DEFAULT);
        rmdir(tmp);
        return 127;
    }
    r.srv.ud = &r;
    r.srv.on_idle = on_idle;
    r.srv.ignore_sigint = 1;
    r.srv.on_signal = forward;
    start_sighup(&r, loop);
    if (spawn(&r, o, argv, sock)) {
        r.child_done = 1;
        finish(&r);
    }
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    rmdir(tmp);
    if (!r.srv.nstarted && r.code != 127 && untraced_note(argv, r.code))
        return r.code ? r.code : RD_RUN_UNTRACED;
    return r.code;
}
