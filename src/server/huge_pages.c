/* serve's heap on transparent huge pages (server/huge_pages.h). Stateless. */
#include "server/huge_pages.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TUNABLE "glibc.malloc.hugetlb"
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

/* Whether the kernel gives transparent huge pages to a process that asks (mode always or
 * madvise, not never). */
static bool thp_available(void)
{
    FILE *f = fopen(THP_ENABLED, "re");
    if (!f)
        return false;
    char line[128] = "";
    bool ok = fgets(line, sizeof(line), f) != NULL && strstr(line, "[never]") == NULL;
    fclose(f);
    return ok;
}

void huge_pages_exec(char **argv)
{
    const char *cur = getenv("GLIBC_TUNABLES");
    if (cur && strstr(cur, TUNABLE))
        return; /* set already: by the exec below, or by whoever started us */
    const char *preload = getenv("LD_PRELOAD");
    if (preload && strstr(preload, "vgpreload"))
        return;
    if (!thp_available())
        return;
    char val[1024];
    int n = cur && *cur ? snprintf(val, sizeof(val), "%s:" TUNABLE "=1", cur)
                        : snprintf(val, sizeof(val), TUNABLE "=1");
    if (n < 0 || (size_t)n >= sizeof(val) || setenv("GLIBC_TUNABLES", val, 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    /* still here: run as we are (the variable stays, so a child would not try again) */
}
