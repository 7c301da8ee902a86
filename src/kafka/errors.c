#include "kafka/errors.h"

const char *kafka_error_name(int16_t code)
{
    switch (code) {
#define X(name, c)                                                                                 \
    case c:                                                                                        \
        return #name;
        KAFKA_ERROR_TABLE(X)
#undef X
    }
    return "UNKNOWN_ERROR_CODE";
}
