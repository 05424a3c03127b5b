/* rd_label: `name (file:line)`, see rd_label.h. */
#include "rd_label.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rd_label_set_cwd(rd_model *m, const char *cwd)
{
    free(m->cwd);
    m->cwd = NULL;
    if (!cwd || cwd[0] != '/')
        return 0;
    m->cwd = strdup(cwd);
    return m->cwd ? 0 : -ENOMEM;
}

/* A plain prefix test, no realpath: labels are made per call-tree node,
 * and the path shown must be the one traced, only shorter. A relative
 * path is the cwd's already: its "./" (package.path's "./?.lua") goes. */
const char *rd_label_src(const rd_model *m, const char *src)
{
    size_t n = m->cwd ? strlen(m->cwd) : 0;
    while (n > 1 && m->cwd[n - 1] == '/') /* "/" itself stays "/" */
        n--;
    if (n > 1 && !strncmp(src, m->cwd, n) && src[n] == '/' && src[n + 1])
        src += n + 1;
    while (src[0] == '.' && src[1] == '/' && src[2])
        src += 2;
    return src;
}

void rd_label_human(const rd_model *m, uint32_t fid, uint32_t line, char *buf, size_t cap)
{
    const rd_func *f = rd_model_func(m, fid);
    if (!f->known) {
        snprintf(buf, cap, "? (unknown frame)");
        return;
    }
    rd_model_name(m, fid, buf, cap);
    size_t n = strlen(buf);
    if (f->what == LT_WHAT_C)
        snprintf(buf + n, cap - n, " [C]");
    else
        snprintf(buf + n, cap - n, " (%s:%u)", rd_label_src(m, rd_model_string(m, f->src_sid)),
                 line ? line : f->linedefined);
    rd_label_clean(buf);
}
