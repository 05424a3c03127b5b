/* rd_help: `recorderd --help` (every command's synopsis) and each
 * command's own --help (a line per option, the formats, an example). */
#ifndef RD_HELP_H
#define RD_HELP_H

#include <stdio.h>

/* The synopsis of every command, each with a line saying what it is for. */
void rd_help_usage(FILE *f);

/* The command (or --version, --help) a mistyped one was meant to be (at most 2 letters added,
 * dropped or changed: rn, reprot), or NULL. */
const char *rd_help_closest(const char *word);

/* The --option of cmd's --help that a mistyped one (--fromat, --line) was
 * meant to be, as rd_help_closest finds a command, or NULL. */
const char *rd_help_closest_opt(const char *cmd, const char *word);

/* cmd's help (run, listen, attach, dump, top, status, stop, serve,
 * report). Returns 0 (exit status), or 2 with the synopsis on stderr for a
 * command that has none. */
int rd_help(const char *cmd, FILE *f);

#endif
