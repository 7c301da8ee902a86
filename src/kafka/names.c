#include "kafka/names.h"

const char *ktopic_name_problem(const char *name, size_t len)
{
    if (len == 0)
        return "Topic name is empty";
    if (len > KTOPIC_NAME_MAX)
        return "Topic name is longer than 249 characters";
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return "Topic name cannot be \".\" or \"..\"";
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok)
            return "Topic name is illegal: it contains a character other than ASCII "
                   "alphanumerics, '.', '_' and '-'";
    }
    return NULL;
}
