/* rd_cmd_report: `recorderd report`, the offline command: any report of
 * rd_formats (or a streaming backend) rendered from a session's trace,
 * and the coverage of several traces merged. */
#ifndef RD_CMD_REPORT_H
#define RD_CMD_REPORT_H

/* argv: the arguments after "report". Returns the exit status. */
int rd_cmd_report(int argc, char **argv);

#endif
