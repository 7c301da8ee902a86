/* Assertions.
 *
 * CHECK(x) is always on, release builds included: it guards invariants whose violation means
 * the process can no longer be trusted with data. DCHECK(x) is for expensive invariant walks;
 * it compiles to nothing unless SP_DEBUG_CHECKS is defined (sanitizer and debug builds).
 *
 * Never CHECK bytes that came from a client or from disk: those get an error return.
 */
#ifndef SP_BASE_CHECK_H
#define SP_BASE_CHECK_H

#include <assert.h>

_Noreturn void check_fail(const char *file, int line, const char *expr);

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (__builtin_expect(!(x), 0))                                                             \
            check_fail(__FILE__, __LINE__, #x);                                                    \
    } while (0)

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SP_ASAN_BUILD 1
#endif
#endif
#if defined(SP_DEBUG_CHECKS) || defined(__SANITIZE_ADDRESS__) || defined(SP_ASAN_BUILD)
#define DCHECK(x) CHECK(x)
#define DCHECK_ENABLED 1
#else
#define DCHECK(x) ((void)0)
#define DCHECK_ENABLED 0
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
