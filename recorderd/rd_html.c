#include "rd_html.h"
#include <errno.h>
int rd_html_write(const rd_model *m, const rd_html_info *info, FILE *out)
{ (void)m; (void)info; (void)out; return -ENOSYS; }
