#include "kafka/api.h"

#include <stddef.h>

static const struct kafka_api_info apis[] = {
#define X(e, key, name, min, max, flex) {key, name, min, max, flex},
    KAFKA_API_TABLE(X)
#undef X
};

const struct kafka_api_info *kafka_api_find(int16_t key)
{
    for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
        if (apis[i].key == key)
            return &apis[i];
    return NULL;
}

const struct kafka_api_info *kafka_api_all(int *count)
{
    *count = (int)(sizeof(apis) / sizeof(apis[0]));
    return apis;
}

bool kafka_api_flexible(int16_t key, int16_t version)
{
    const struct kafka_api_info *a = kafka_api_find(key);
    return a && version >= a->first_flexible;
}

const char *kafka_api_name(int16_t key)
{
    const struct kafka_api_info *a = kafka_api_find(key);
    return a ? a->name : "Unknown";
}
