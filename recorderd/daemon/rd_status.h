/* rd_status: the text and JSON answers to `recorderd status`. Loop thread. */
#ifndef RD_STATUS_H
#define RD_STATUS_H

#include <stdio.h>

#include "rd_server.h"

/* Writes the status of srv as a text table into text and as JSON into json
 * (both open memstreams or files). */
void rd_status_write(const rd_server *srv, FILE *text, FILE *json);

#endif
