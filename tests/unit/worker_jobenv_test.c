/* The worker's pure pieces: handler environment encoding and W3C traceparent. */
#include "base/mem.h"
#include "task/jobenv.h"
#include "task/traceparent.h"
#include "test.h"

static const char *find(const struct jobenv *e, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < e->len; i++)
        if (strncmp(e->vars[i], name, n) == 0 && e->vars[i][n] == '=')
            return e->vars[i] + n + 1;
    return NULL;
}

TEST(worker_header_names_are_mangled)
{
    char out[256];
    ASSERT_EQ(jobenv_header_name("content-type", 12, out, sizeof(out)), 22);
    ASSERT_STREQ(out, "SP_HEADER_CONTENT_TYPE");
    ASSERT(jobenv_header_name("a.b c=d\xc3\xa9", 9, out, sizeof(out)) > 0);
    ASSERT_STREQ(out, "SP_HEADER_A_B_C_D__");
    ASSERT(jobenv_header_name("x\0y", 3, out, sizeof(out)) > 0);
    ASSERT_STREQ(out, "SP_HEADER_X_Y");
    ASSERT_EQ(jobenv_header_name("", 0, out, sizeof(out)), 0);
    char longname[JOBENV_HNAME_MAX + 1];
    memset(longname, 'a', sizeof(longname));
    ASSERT_EQ(jobenv_header_name(longname, sizeof(longname), out, sizeof(out)), 0);
    ASSERT(jobenv_header_name(longname, JOBENV_HNAME_MAX, out, sizeof(out)) > 0);
}

TEST(worker_env_values_with_nul_go_base64)
{
    struct jobenv e;
    jobenv_init(&e);
    jobenv_set(&e, "SP_KEY", "plain key", 9);
    ASSERT_STREQ(find(&e, "SP_KEY"), "plain key");
    jobenv_set(&e, "SP_KEY", "a\0b", 3); /* replaces the earlier one */
    ASSERT(find(&e, "SP_KEY") == NULL);
    ASSERT_STREQ(find(&e, "SP_KEY_B64"), "YQBi");
    jobenv_set(&e, "SP_KEY", "", 0);
    ASSERT_STREQ(find(&e, "SP_KEY"), "");
    ASSERT(find(&e, "SP_KEY_B64") == NULL);
    ASSERT_EQ(e.len, 1);
    jobenv_setf(&e, "SP_OFFSET", "%d", 42);
    ASSERT_STREQ(find(&e, "SP_OFFSET"), "42");
    char *big = mem_calloc(JOBENV_VALUE_MAX + 1, 1);
    memset(big, 'k', JOBENV_VALUE_MAX + 1);
    ASSERT(!jobenv_set(&e, "SP_BIG", big, JOBENV_VALUE_MAX + 1));
    ASSERT(find(&e, "SP_BIG") == NULL);
    mem_free(big);
    char *const base[] = {"PATH=/bin", NULL};
    char **envp = jobenv_envp(&e, base);
    ASSERT_STREQ(envp[0], "PATH=/bin");
    ASSERT(envp[1] && envp[2] && !envp[3]);
    mem_free(envp);
    jobenv_free(&e);
}

TEST(worker_env_headers_later_wins_and_limits_hold)
{
    struct jobenv e;
    jobenv_init(&e);
    ASSERT(jobenv_add_header(&e, "tenant", 6, "a", 1));
    ASSERT(jobenv_add_header(&e, "Tenant", 6, "b", 1));
    ASSERT_STREQ(find(&e, "SP_HEADER_TENANT"), "b");
    ASSERT_EQ(e.header_vars, 1);
    ASSERT(jobenv_add_header(&e, "nul", 3, NULL, 0));
    ASSERT_STREQ(find(&e, "SP_HEADER_NUL"), "");
    ASSERT(jobenv_add_header(&e, "bin", 3, "\0\1", 2));
    ASSERT_STREQ(find(&e, "SP_HEADER_BIN_B64"), "AAE=");
    ASSERT_EQ(e.dropped, 0);

    /* too long a value, too long a name */
    char *v = mem_calloc(JOBENV_HVALUE_MAX + 1, 1);
    memset(v, 'v', JOBENV_HVALUE_MAX + 1);
    ASSERT(!jobenv_add_header(&e, "big", 3, v, JOBENV_HVALUE_MAX + 1));
    char name[JOBENV_HNAME_MAX + 2];
    memset(name, 'n', sizeof(name));
    ASSERT(!jobenv_add_header(&e, name, sizeof(name), "x", 1));
    ASSERT_EQ(e.dropped, 2);

    /* the total budget: 4 values of 32 KiB fit in 128 KiB with what is there? no: 3 do */
    size_t before = e.header_vars;
    int added = 0;
    for (int i = 0; i < 5; i++) {
        char hn[16];
        snprintf(hn, sizeof(hn), "h%d", i);
        added += jobenv_add_header(&e, hn, strlen(hn), v, JOBENV_HVALUE_MAX);
    }
    ASSERT_EQ(added, 3);
    ASSERT_CMP(e.header_bytes, <=, JOBENV_HBYTES_MAX);
    ASSERT_EQ(e.header_vars, before + 3);
    ASSERT_EQ(e.dropped, 4);
    mem_free(v);

    /* the count limit */
    struct jobenv f;
    jobenv_init(&f);
    for (int i = 0; i < JOBENV_HEADERS_MAX + 10; i++) {
        char hn[16];
        snprintf(hn, sizeof(hn), "k%d", i);
        jobenv_add_header(&f, hn, strlen(hn), "1", 1);
    }
    ASSERT_EQ(f.header_vars, JOBENV_HEADERS_MAX);
    ASSERT_EQ(f.dropped, 10);
    jobenv_free(&f);
    jobenv_free(&e);
}

TEST(worker_traceparent_parse_accepts_valid_refuses_invalid)
{
    struct traceparent tp;
    const char *ok = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    ASSERT(traceparent_parse(ok, strlen(ok), &tp));
    ASSERT_STREQ(tp.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    ASSERT_STREQ(tp.parent_id, "00f067aa0ba902b7");
    ASSERT_STREQ(tp.flags, "01");
    const char *future = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-extra";
    ASSERT(traceparent_parse(future, strlen(future), &tp));
    const char *bad[] = {
        "",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",   /* short */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", /* v00 with more */
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  /* version ff */
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  /* zero trace */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  /* zero parent */
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  /* upper case */
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (traceparent_parse(bad[i], strlen(bad[i]), &tp))
            test_fail(__FILE__, __LINE__, "'%s' was accepted", bad[i]);
}

TEST(worker_traceparent_child_keeps_trace_and_flags)
{
    struct traceparent tp, child;
    const char *ok = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    ASSERT(traceparent_parse(ok, strlen(ok), &tp));
    char out[TRACEPARENT_LEN + 1];
    const uint8_t span[8] = {0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3};
    traceparent_child(&tp, span, out);
    ASSERT_STREQ(out, "00-4bf92f3577b34da6a3ce929d0e0e4736-deadbeef00010203-01");
    ASSERT(traceparent_parse(out, strlen(out), &child));
    const uint8_t zero[8] = {0};
    traceparent_child(&tp, zero, out);
    ASSERT_STREQ(out, "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000001-01");
}
