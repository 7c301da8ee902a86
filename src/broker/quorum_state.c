/* quorum.state read and write (contract in broker/quorum_state.h). Stateless. */
#include "broker/quorum_state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/strbuf.h"
#include "storage/io.h"

#define QUORUM_STATE_BYTES_MAX 8192

bool quorum_split_addr(const char *addr, char *host, size_t cap, int *port)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr)
        return false;
    const char *h = addr;
    size_t hl = (size_t)(colon - addr);
    if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']')
        h++, hl -= 2;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (hl == 0 || hl >= cap || *end != '\0' || end == colon + 1 || p <= 0 || p > 65535)
        return false;
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (int)p;
    return true;
}

/* "id@host:port,..." into st->voters. */
static bool parse_voters(char *v, struct quorum_state *st)
{
    st->n_voters = 0;
    for (char *save = NULL, *e = strtok_r(v, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        char *at = strchr(e, '@');
        if (!at || at == e || st->n_voters >= BROKER_VOTERS_MAX)
            return false;
        *at = '\0';
        char *end;
        long id = strtol(e, &end, 10);
        if (*end != '\0' || id < 0 || id > INT32_MAX)
            return false;
        struct broker_voter *bv = &st->voters[st->n_voters];
        if (!quorum_split_addr(at + 1, bv->host, sizeof(bv->host), &bv->port))
            return false;
        for (size_t i = 0; i < st->n_voters; i++)
            if (st->voters[i].id == (int32_t)id)
                return false;
        bv->id = (int32_t)id;
        st->n_voters++;
    }
    return st->n_voters > 0;
}

int quorum_state_read(const char *dir, struct quorum_state *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof(*out));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    char buf[QUORUM_STATE_BYTES_MAX + 1];
    ssize_t n = io_read_small_file(dfd, QUORUM_STATE_FILE, buf, QUORUM_STATE_BYTES_MAX);
    close(dfd);
    if (n == -ENOENT)
        return -ENOENT;
    if (n < 0) {
        snprintf(err, errcap, "cannot read %s/%s: %s", dir, QUORUM_STATE_FILE, err_str((int)n));
        return -ERR_CORRUPT;
    }
    buf[n] = '\0';
    bool have_id = false, have_voters = false;
    int line_no = 0;
    for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        line_no++;
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *eq = strchr(line, '=');
        bool ok = eq != NULL;
        if (ok) {
            *eq = '\0';
            const char *v = eq + 1;
            if (!strcmp(line, "cluster.id")) {
                ok = strlen(v) >= 1 && strlen(v) <= QUORUM_STATE_ID_MAX;
                if (ok)
                    memcpy(out->cluster_id, v, strlen(v) + 1);
                have_id = ok;
            } else if (!strcmp(line, "voters")) {
                ok = have_voters = parse_voters(eq + 1, out);
            } else {
                ok = false;
            }
        }
        if (!ok) {
            snprintf(err, errcap,
                     "%s/%s line %d does not parse: the node does not guess its "
                     "cluster (restore the file, or move it away to join by "
                     "controller.quorum.bootstrap.servers)",
                     dir, QUORUM_STATE_FILE, line_no);
            return -ERR_CORRUPT;
        }
    }
    if (!have_id || !have_voters) {
        snprintf(err, errcap, "%s/%s lacks %s", dir, QUORUM_STATE_FILE,
                 have_id ? "voters=" : "cluster.id=");
        return -ERR_CORRUPT;
    }
    return 0;
}

int quorum_state_write(const char *dir, const struct quorum_state *st)
{
    if (!st->cluster_id[0] || st->n_voters < 1 || st->n_voters > BROKER_VOTERS_MAX)
        return -EINVAL;
    struct strbuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb,
                  "# The metadata quorum this node belongs to (written by streampulse)\n"
                  "cluster.id=%s\nvoters=",
                  st->cluster_id);
    for (size_t i = 0; i < st->n_voters; i++) {
        const struct broker_voter *v = &st->voters[i];
        bool v6 = strchr(v->host, ':') != NULL;
        strbuf_printf(&sb, "%s%" PRId32 "@%s%s%s:%d", i ? "," : "", v->id, v6 ? "[" : "", v->host,
                      v6 ? "]" : "", v->port);
    }
    strbuf_printf(&sb, "\n");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = dfd < 0 ? -errno : io_write_file_atomic(dfd, QUORUM_STATE_FILE, sb.p, sb.len, true);
    if (dfd >= 0)
        close(dfd);
    strbuf_destroy(&sb);
    return rc;
}
