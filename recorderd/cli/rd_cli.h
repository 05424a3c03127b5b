/* rd_cli: what every command's argument parsing shares: option values,
 * numbers, --help, unknown options and the --backend list. */
#ifndef RD_CLI_H
#define RD_CLI_H

#include <stdint.h>

#include "rd_backend.h"

/* Returns the value of option argv[*i] (advancing), or NULL with a message.
 * "--" is no value: `--out -- lua5.1 x.lua` lacks one. */
const char *rd_cli_optval(int argc, char **argv, int *i);
/* The command (run, report, ...) that rd_cli_optval's message names. */
void rd_cli_set_command(const char *cmd);

/* v as a whole decimal number from min to max, or -1 ("123abc" is none). */
long rd_cli_whole(const char *v, long min, long max);

/* Seconds (decimals allowed) as milliseconds; -1 if not a number. */
long rd_cli_seconds_ms(const char *v);

int rd_cli_is_help(const char *a);

/* Exit status 2, naming what was not understood. */
int rd_cli_unknown(const char *cmd, const char *a);

/* An unquoted --include or --exclude pattern (/usr/ then a star) that the shell
 * expanded: its second path, argv[i], would be taken for run's command or
 * report's second trace. When argv[i] follows the value of one of them in
 * the same directory, says to quote it and returns 1; else 0. */
int rd_cli_expanded_pattern(const char *cmd, char **argv, int i);

/* --backend SPEC, repeatable (run, listen, serve, attach, report). */
extern const char *rd_cli_backends[RD_MAX_BACKENDS];
extern unsigned rd_cli_nbackends;

/* 1 if argv[*i] was --backend (taken), 0 if not, -1 on a bad value. */
int rd_cli_backend(int argc, char **argv, int *i);

/* Adds backend v (kept: it must live as long as the command). 0, or -1
 * after saying why not (unknown, a Lua file that does not load, too many). */
int rd_cli_add_backend(const char *v);

/* A --format list v (names of rd_formats joined with ',', or all) into
 * *rows, bit i for rd_formats[i]; a backend's name in it is added as
 * --backend. 0, or -1 after saying what cmd does not know. */
int rd_cli_format_list(const char *cmd, const char *v, uint32_t *rows);

/* --format callgrind, pprof: the shell split the list after its ',' (a
 * list of one, "callgrind,", is one on purpose), and the next word, a
 * format's name, would be taken for the command (run: "cannot run
 * pprof") or a trace (report). 1 after saying so, else 0. */
int rd_cli_format_split(const char *cmd, const char *v, const char *next);

/* The rows of rd_formats the --format lists so far named one by one
 * (not by "all"): what the user asked for by name. */
uint32_t rd_cli_formats_named(void);

/* -o, --out (and report's --output): where a command writes. */
int rd_cli_is_out(const char *a);

/* The options of every command that makes sessions (run, listen, attach,
 * serve): -o/--out DIR, --format LIST, --backend SPEC and --coverage, into so. 1 if
 * argv[*i] was one (taken), 0 if not, -1 on a bad value (said). */
enum { RD_MAX_PATTERNS = 64 }; /* --include, --exclude of a session, each */

struct rd_session_opts;
int rd_cli_session_opt(const char *cmd, int argc, char **argv, int *i,
                       struct rd_session_opts *so);

/* What rd_cli_session_opt took that does not go together (--coverage with
 * --time, --clock or a format weighed by time), for run, listen and attach
 * once every option is read: 0, or exit status 2 after saying why. */
int rd_cli_session_check(const char *cmd, const struct rd_session_opts *so);

#endif
