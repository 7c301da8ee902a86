#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/check.h"

static enum log_level min_level = LOG_INFO;
static const char *const level_names[] = {"debug", "info", "warn", "error"};

void log_set_level(enum log_level lvl)
{
    min_level = lvl;
}

bool log_enabled(enum log_level lvl)
{
    return lvl >= min_level;
}

int log_level_parse(const char *s)
{
    for (size_t i = 0; i < ARRAY_LEN(level_names); i++)
        if (strcmp(s, level_names[i]) == 0)
            return (int)i;
    return -1;
}

void log_emit(enum log_level lvl, const char *event, const char *fmt, ...)
{
    if (lvl < min_level)
        return;
    char line[4096];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof(line), "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03dZ level=%s event=%s",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (int)(tv.tv_usec / 1000), level_names[lvl], event);
    if (fmt && fmt[0] && n < (int)sizeof(line) - 2) {
        line[n++] = ' ';
        va_list ap;
        va_start(ap, fmt);
        int m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
        va_end(ap);
        if (m > 0)
            n += m;
    }
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}

const char *log_quote(char *buf, size_t cap, const char *s, size_t len)
{
    CHECK(cap >= 8);
    size_t o = 0;
    buf[o++] = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char tmp[5];
        size_t tn;
        if (c == '"' || c == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)c;
            tn = 2;
        } else if (c < 0x20 || c == 0x7f) {
            tn = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", c);
        } else {
            tmp[0] = (char)c;
            tn = 1;
        }
        if (o + tn + 5 > cap) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(buf + o, tmp, tn);
        o += tn;
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}
