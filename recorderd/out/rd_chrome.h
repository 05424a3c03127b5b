/* rd_chrome: the "chrome" streaming backend: a timeline of every call in
 * Chrome's trace-event JSON (trace.chrome.json), for Perfetto UI
 * (ui.perfetto.dev) and chrome://tracing. Runs on the drainer thread. */
#ifndef RD_CHROME_H
#define RD_CHROME_H

#include "rd_backend.h"

#define RD_CHROME_FILE "trace.chrome.json"

/* The backend (rd_backend_create_fn); arg must be empty. */
rd_backend *rd_chrome_create(const char *arg, const rd_model *m, char *err, size_t cap);

#endif
