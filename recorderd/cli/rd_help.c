/* rd_help: the text of every --help. The format lists come from
 * rd_formats and are never written out here. */
#include "rd_help.h"

#include <string.h>

#include "rd_formats.h"

typedef struct help_opt {
    const char *opt, *what;
} help_opt;

typedef struct cmd_help {
    const char *name, *synopsis, *brief, *about; /* brief: its line in recorderd --help */
    int formats; /* 1: the formats a session writes; 2: report's */
    help_opt opt[18];
    const char *example;
} cmd_help;

#define OUT {"-o, --out DIR", "parent directory of the session directories (./luatrace-out)"}
#define FORMAT                                                                                     \
    {"-f, --format LIST", "also write these reports: names joined with ',', or all (below)"}
#define BACKEND {"-b, --backend SPEC", "also run a streaming backend (repeatable; below)"}
#define NOTRACE {"--no-trace", "keep no trace.ltr: the reports only"}
#define COVERAGE                                                                                   \
    {"--coverage", "read no clock: counts, stacks and coverage only (no time); not\n"              \
                   "                                 with --time, --clock, -f folded|flamegraph|speedscope"}
#define INCLUDE {"--include PAT", "coverage: only sources matching the shell pattern (repeatable)"}
#define EXCLUDE {"--exclude PAT", "coverage: leave out sources matching it (repeatable)"}
#define TIME                                                                                       \
    {"--time exact|sample", "sample: time from a CPU-time timer, lines by sample, every call\n"    \
                            "                                 still exact; exact: each event's clock (default)"}
#define ATTACH_TIME                                                                                \
    {"--time sample|exact", "sample (default): time from a CPU-time timer, lines by sample;\n"     \
                            "                                 exact: each event's clock, every line counted"}
#define CLOCK {"--clock cpu|wall", "--time sample's clock (so it implies it): CPU time (default), or wall"}
#define RUN_TIME                                                                                   \
    {"--time sample|exact", "sample (default): time from a CPU-time timer, calls and stacks\n"     \
                            "                                 exact; exact: each event's clock, every line counted"}
#define LINES                                                                                      \
    {"--lines sample|exact", "sample (default): a line's time by the ticks, no line hook;\n"      \
                             "                                 exact: every line counted (coverage; Lua slower), and with\n"     \
                             "                                 it time exact unless --time sample is given"}
#define MEMORY                                                                                     \
    {"--memory", "trace every allocation and free too: heap.pb.gz, profile.txt's memory\n"          \
                 "                                 table; report -w bytes|objects|live weighs by them"}
#define SOCKET                                                                                     \
    {"--socket PATH", "the daemon's socket ($XDG_RUNTIME_DIR/luatrace/recorderd.sock, else\n"     \
                      "                                 /tmp/luatrace-$UID/recorderd.sock)"}
#define TIMEOUT {"--timeout SECONDS", "give up when the process does not answer (10)"}
#define HELP {"-h, --help", "this help"}

static const cmd_help helps[] = {
    {"run", "run [OPTIONS] [--] CMD [ARGS...]",
     "run a program traced and write its reports (open report.html first)",
     "Runs CMD traced (lua5.1, lua5.4, luajit): each Lua process it starts is a\n"
     "session, OUT/SCRIPT (a rerun keeps the previous one as OUT/SCRIPT.prev).\n"
     "Every call is counted and every stack exact; time comes from a CPU-time\n"
     "timer and lines by sample (--lines exact, coverage's reports or --coverage\n"
     "count every line). Exits with CMD's status (125 when it exited 0 and no\n"
     "Lua process of it loaded luatrace: nothing was traced).",
     1,
     {OUT,
      {"-q, --quiet", "no summary on stderr (failures are still said)"},
      FORMAT,
      {"--ring SIZE", "ring size, a power of two from 64K to 1G (LUATRACE_RING)"},
      {"--mode wait|drop", "a full ring makes the program wait (default), or drops events"},
      COVERAGE,
      INCLUDE,
      EXCLUDE,
      RUN_TIME,
      LINES,
      CLOCK,
      MEMORY,
      {"--sample [HZ]", "a sampler instead of a trace: lua5.1 and lua5.4 read from outside\n"
                        "                                 (no hook), LuaJIT by its profiler (HZ 1-1000, 1000)"},
      NOTRACE,
      BACKEND,
      HELP},
     "recorderd run --format callgrind -- lua5.1 app.lua\n"
     "  recorderd run --lines exact --format lcov -- lua5.1 tests.lua"},
    {"listen", "listen [OPTIONS]",
     "a daemon that traces every program loading luatrace (lua5.1 -lluatrace)",
     "A daemon: traces the programs that load luatrace (lua5.1 -lluatrace app.lua)\n"
     "and writes each one's session under OUT, until recorderd stop.",
     1,
     {SOCKET,
      OUT,
      FORMAT,
      COVERAGE,
      INCLUDE,
      EXCLUDE,
      TIME,
      CLOCK,
      MEMORY,
      NOTRACE,
      BACKEND,
      {"--hello-timeout SECONDS", "close a connection that sends no hello in time (10)"},
      {"--http ADDR", "serve pprof profiles over HTTP: PORT (127.0.0.1), IP:PORT, [IPv6]:PORT"},
      {"--http-token-file FILE", "a secret clients send as 'Authorization: Bearer' (not loopback)"},
      HELP},
     "recorderd listen --out /tmp/traces --format folded &"},
    {"attach", "attach PID [OPTIONS]",
     "trace a running Lua process for a while",
     "Traces a running Lua process until the duration ends, Ctrl-C, SIGTERM or\n"
     "SIGHUP; its session is OUT/attach.PID. Lua 5.1, LuaJIT and 5.4 that loaded\n"
     "luatrace dormant (LUATRACE_ATTACH=1); a Lua 5.1 process that never loaded it\n"
     "gets it loaded with ptrace (x86-64), where no lock of the C library is held;\n"
     "it stays loaded, inert, after the detach, and the next attach reuses it.\n"
     "Time is run's: a CPU-time timer and lines by sample (coverage, --memory count\n"
     "every line; LuaJIT keeps each event's clock, its calibration's).",
     1,
     {{"-d, --duration SECONDS", "how long to trace from now, a wait for the process's first "
                                 "Lua event included (default: until Ctrl-C)"},
      OUT,
      FORMAT,
      COVERAGE,
      INCLUDE,
      EXCLUDE,
      ATTACH_TIME,
      CLOCK,
      MEMORY,
      NOTRACE,
      TIMEOUT,
      BACKEND,
      {"-q, --quiet", "no summary on stderr"},
      HELP},
     "recorderd attach 1234 --duration 5 --format annotate"},
    {"dump", "dump PID [OPTIONS]",
     "print the Lua stack of every thread of a running process",
     "Prints the Lua stack of every thread: a dormant collector answers; a process\n"
     "that never loaded luatrace is read from outside. No files.", 0,
     {TIMEOUT, HELP},
     "recorderd dump 1234"},
    {"top", "top PID [OPTIONS]",
     "a live view of the busiest functions of a running process",
     "A live view of the functions using the most time, redrawn every second,\n"
     "until q, Ctrl-C or the duration. No files. A process that never loaded\n"
     "luatrace is sampled from outside, read as it runs.",
     0,
     {{"-d, --duration SECONDS", "how long to watch (default: until q or Ctrl-C)"},
      TIMEOUT,
      {"--rate HZ", "samples per second from outside, 1 to 1000 (100)"},
      {"--stop", "from outside: stop the process for each read (exact, ~2 ms each)"},
      HELP},
     "recorderd top 1234"},
    {"record", "record PID [OPTIONS]",
     "a sampled session of a process that never loaded luatrace",
     "A sampled session of a process that never loaded luatrace, read from\n"
     "outside until the duration ends, Ctrl-C, SIGTERM, SIGHUP or the process\n"
     "exits: OUT/SCRIPT with the reports of a traced session, marked sampled.",
     0,
     {{"-d, --duration SECONDS", "how long to sample (default: until Ctrl-C)"},
      {"--rate HZ", "samples per second, 1 to 1000 (100)"},
      {"--stop", "stop the process for each read (exact stacks, ~2 ms each)"},
      OUT,
      {"-q, --quiet", "no summary on stderr"},
      HELP},
     "recorderd record 1234 --duration 30"},
    {"heap", "heap PID [OPTIONS]",
     "what the heap of a running Lua 5.1 process holds, and what keeps it alive",
     "Reads the heap of a running Lua 5.1 process from outside: its objects by\n"
     "type, the tables that keep the most memory alive, each by its shortest path\n"
     "from a root (_G.cache.sessions), and the biggest tables. No files.",
     0,
     {{"--diff SECONDS", "a second snapshot that much later: what grew, by path"},
      {"--stop", "hold the process stopped while it is read (an exact snapshot)"},
      {"--timeout SECONDS", "a snapshot's bound (30): the rest is not counted"},
      {"--max-objects N", "objects read at most (4000000; about 75 bytes each here)"},
      {"--top N", "rows of each table (10)"},
      HELP},
     "recorderd heap 1234 --diff 10"},
    {"env", "env",
     "print the exports that find luatrace.so, recorderd and its man pages",
     "Prints the exports that let lua5.1 (and luajit) -lluatrace find this\n"
     "recorderd's luatrace.so (LUA_CPATH; LUA_CPATH_5_4 for lua5.4's build), the\n"
     "build tree's or the installed one, and PATH and MANPATH for recorderd and\n"
     "its man pages.",
     0,
     {HELP},
     "eval \"$(recorderd env)\""},
    {"status", "status [OPTIONS]", "the sessions the daemon is serving",
     "The daemon's sessions: events, rate, ring fill, drops. Without --socket,\n"
     "each recorderd run in progress too (a run has a daemon of its own).", 0,
     {SOCKET, {"--json", "as JSON"}, HELP},
     "recorderd status --json"},
    {"stop", "stop [OPTIONS]", "stop the daemon once every report is written",
     "Stops the daemon once every session's reports are written.", 0,
     {SOCKET, HELP},
     "recorderd stop"},
    {"serve", "serve --fd N [OPTIONS]",
     "the private recorder a traced program starts (not by hand)",
     "The private recorder a traced program starts when no daemon listens\n"
     "(used by the collector, not by hand).",
     1,
     {{"--fd N", "the connected socket to serve"},
      OUT,
      {"--summary", "print the summary on stderr"},
      {"-q, --quiet", "no summary (the default)"},
      FORMAT,
      BACKEND,
      HELP},
     "recorderd serve --fd 3 --out luatrace-out"},
    {"report", "report SESSION_DIR|TRACE_FILE [OPTIONS]",
     "render any report from a session's trace; merge coverage",
     "Renders a report from a session's trace, to stdout or -o; coverage reports\n"
     "may merge several sessions. A file in a session directory (session.json,\n"
     "profile.txt, ...) stands for its session, as a line on stderr says.",
     2,
     {{"-f, --format NAME|LIST", "the report (below; default profile), or several: a LIST of"},
      {"", "names joined with ',', or all, into the session directory or -o DIR"},
      {"-o, --out FILE", "write it there (annotate, a LIST: a directory; --backend: theirs)"},
      {"-w, --weight W", "what a folded stack weighs: time (default), lines, calls, or"},
      {"", "a memory trace's bytes (allocated), objects or live (bytes); folded only"},
      {"--merge", "several sessions: their coverage adds up (default format lcov)"},
      INCLUDE,
      EXCLUDE,
      {"--include-untested DIR", "coverage: every *.lua under DIR, 0 hits if never run"},
      BACKEND,
      HELP},
     "recorderd report luatrace-out/app --format callgrind -o callgrind.out"},
};

#define NHELPS (sizeof helps / sizeof helps[0])

void rd_help_usage(FILE *f)
{
    fprintf(f, "usage: recorderd COMMAND ..., one of:\n");
    for (size_t i = 0; i < NHELPS; i++)
        fprintf(f, "  recorderd %s\n      %s\n", helps[i].synopsis, helps[i].brief);
    fprintf(f, "  recorderd --version | --help\n"
               "recorderd COMMAND --help: that command's options and an example\n"
               "start with: recorderd run -- lua5.1 app.lua\n");
}

/* Edit distance of a and b (each under 32 bytes; longer: far). */
static unsigned distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    unsigned row[33];
    if (na > 32 || nb > 32)
        return 99;
    for (size_t j = 0; j <= nb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= na; i++) {
        unsigned diag = row[0], up;
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= nb; j++) {
            up = row[j];
            unsigned best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            row[j] = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            diag = up;
        }
    }
    return row[nb];
}

const char *rd_help_closest(const char *word)
{
    const char *best = NULL;
    unsigned bd = 3;
    static const char *const flags[] = {"--version", "--help"}; /* recorderd --versoin */
    for (size_t i = 0; i < NHELPS + 2; i++) {
        const char *name = i < NHELPS ? helps[i].name : flags[i - NHELPS];
        unsigned d = distance(word, name);
        if (d < bd && d * 2 <= strlen(word) + 1) /* r: run, record or report? */
            bd = d, best = name;
    }
    return best;
}

const char *rd_help_closest_opt(const char *cmd, const char *word)
{
    static char best[40];
    unsigned bd = 3;
    best[0] = 0;
    for (size_t i = 0; i < NHELPS && strncmp(word, "--", 2) == 0; i++) {
        if (strcmp(helps[i].name, cmd))
            continue;
        const help_opt *o = helps[i].opt;
        for (size_t k = 0; k < sizeof helps[i].opt / sizeof *o && o[k].opt; k++)
            for (const char *p = strstr(o[k].opt, "--"); p; p = strstr(p + 2, "--")) {
                char name[40]; /* "-o, --out DIR": --out */
                size_t n = strcspn(p, " ,|");
                if (n >= sizeof name)
                    continue;
                memcpy(name, p, n);
                name[n] = 0;
                unsigned d = distance(word, name);
                if (d < bd && d * 2 <= strlen(word) - 2 + 1) /* --x is no --ring */
                    bd = d, memcpy(best, name, n + 1);
            }
    }
    return best[0] ? best : NULL;
}

/* The formats of the registry: the session's (default ones marked), or
 * report's (every one). */
static void print_formats(FILE *f, int session)
{
    fprintf(f, "\nformats%s:\n", session ? " (* written by default)" : "");
    for (unsigned i = 0; i < rd_nformats; i++) {
        const rd_format *r = &rd_formats[i];
        if (session && !r->file)
            continue;
        fprintf(f, "  %c %-11s %-24s %s\n", r->flags & RD_FMT_DEFAULT && session ? '*' : ' ',
                r->name, r->file ? r->file : "", r->what);
    }
    fprintf(f, "backends (SPEC, also a format): chrome (trace.chrome.json), speedscope-evented\n"
               "  (trace.speedscope.json), lua:FILE.lua (a user backend)\n");
}

int rd_help(const char *cmd, FILE *f)
{
    const cmd_help *h = NULL;
    for (size_t i = 0; i < NHELPS && !h; i++)
        if (!strcmp(helps[i].name, cmd))
            h = &helps[i];
    if (!h)
        return rd_help_usage(stderr), 2;
    fprintf(f, "usage: recorderd %s\n%s\n\noptions:\n", h->synopsis, h->about);
    for (size_t i = 0; i < sizeof h->opt / sizeof h->opt[0] && h->opt[i].opt; i++)
        fprintf(f, "  %-30s %s\n", h->opt[i].opt, h->opt[i].what);
    if (h->formats)
        print_formats(f, h->formats == 1);
    fprintf(f, "\nexample:\n  %s\n", h->example);
    return 0;
}
