/* Internal error codes. Functions return 0 on success, a negative errno for OS failures, or a
 * negative ERR_* below. These never go on the wire: the broker maps them to Kafka error codes
 * (kafka/errors.h) at the protocol edge. err_str() gives the text of either kind. */
#ifndef SP_BASE_ERRORS_H
#define SP_BASE_ERRORS_H

/* X(name, text). Values start at 10000 so they never collide with errno. */
#define SP_ERR_TABLE(X)                                                                            \
    X(ERR_CORRUPT, "corrupt data")                                                                 \
    X(ERR_SHORT, "input ends early")                                                               \
    X(ERR_INVALID, "invalid argument")                                                             \
    X(ERR_NOT_FOUND, "not found")                                                                  \
    X(ERR_EXISTS, "already exists")                                                                \
    X(ERR_TOO_LARGE, "too large")                                                                  \
    X(ERR_OUT_OF_RANGE, "offset out of range")                                                     \
    X(ERR_FENCED, "partition fenced after a storage error")                                        \
    X(ERR_CLOSED, "closed")                                                                        \
    X(ERR_UNSUPPORTED, "unsupported")                                                              \
    X(ERR_LIMIT, "limit reached")                                                                  \
    X(ERR_NOT_LEADER, "not the leader")                                                            \
    X(ERR_BUSY, "busy: an earlier operation is still in progress")                              \
    X(ERR_TIMEOUT, "timed out")

enum sp_err {
    ERR_BASE_ = 10000,
#define X(name, text) name,
    SP_ERR_TABLE(X)
#undef X
    ERR_END_
};

/* Text for rc (0, -errno or -ERR_*). Never NULL. */
const char *err_str(int rc);

#endif
