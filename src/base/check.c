#include "base/check.h"

#include <stdlib.h>

#include "base/log.h"

void check_fail(const char *file, int line, const char *expr)
{
    log_error("check_failed", "file=%s line=%d expr=\"%s\"", file, line, expr);
    abort();
}
