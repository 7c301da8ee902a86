#include "base/errors.h"

#include <string.h>

static const char *const texts[] = {
#define X(name, text) text,
    SP_ERR_TABLE(X)
#undef X
};

const char *err_str(int rc)
{
    if (rc == 0)
        return "ok";
    int e = rc < 0 ? -rc : rc;
    if (e > ERR_BASE_ && e < ERR_END_)
        return texts[e - ERR_BASE_ - 1];
    return strerror(e);
}
