/* The in-house unit test runner (in the manner of libuv's test/task.h).
 *
 *   TEST(segment_recover_truncates_torn_tail) { ... ASSERT_EQ(a, b); ... }
 *
 * Tests register themselves at load time. Each runs in a forked child with a timeout (10 s, or
 * TEST_TIMEOUT(name, seconds) before the body), so a crash or hang fails only that test. The
 * runner takes optional substring filters and ends with "N passed, N failed". */
#ifndef SP_TEST_H
#define SP_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn, int timeout_s);
_Noreturn void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A fresh directory for this test (removed by the runner afterwards). */
const char *test_tmpdir(void);

#define TEST_T(name, timeout_s)                                                                    \
    static void name(void);                                                                        \
    __attribute__((constructor)) static void name##_register(void)                                 \
    {                                                                                              \
        test_register(#name, name, timeout_s);                                                     \
    }                                                                                              \
    static void name(void)
#define TEST(name) TEST_T(name, 10)

#define ASSERT(c)                                                                                  \
    do {                                                                                           \
        if (!(c))                                                                                  \
            test_fail(__FILE__, __LINE__, "assertion failed: %s", #c);                             \
    } while (0)

#define ASSERT_EQ(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_);               \
    } while (0)
#define ASSERT_NE(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ == b_)                                                                              \
            test_fail(__FILE__, __LINE__, "%s != %s: both %lld", #a, #b, a_);                      \
    } while (0)
#define ASSERT_UEQ(a, b)                                                                           \
    do {                                                                                           \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);             \
        if (a_ != b_)                                                                              \
            test_fail(__FILE__, __LINE__, "%s == %s: 0x%llx != 0x%llx", #a, #b, a_, b_);           \
    } while (0)
#define ASSERT_CMP(a, op, b)                                                                       \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (!(a_ op b_))                                                                           \
            test_fail(__FILE__, __LINE__, "%s %s %s: %lld vs %lld", #a, #op, #b, a_, b_);          \
    } while (0)
#define ASSERT_STREQ(a, b)                                                                         \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                                     \
            test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", \
                      b_ ? b_ : "(null)");                                                         \
    } while (0)
#define ASSERT_MEMEQ(a, b, n)                                                                      \
    do {                                                                                           \
        if (memcmp((a), (b), (n)) != 0)                                                            \
            test_fail(__FILE__, __LINE__, "%s and %s differ in their first %zu bytes", #a, #b,     \
                      (size_t)(n));                                                                \
    } while (0)

#endif
