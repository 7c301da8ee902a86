/* The admin listener's configuration (admin.listener). */
#include <string.h>

#include "server/config.h"
#include "test.h"

TEST(config_admin_listener_default_set_and_disable)
{
    struct broker_config c;
    char err[512];
    ASSERT_EQ(config_load(&c, NULL, NULL, 0, err, sizeof(err)), 0);
    ASSERT_STREQ(c.admin_host, "127.0.0.1");
    ASSERT_EQ(c.admin_port, 9644);
    config_free(&c);
    char *on[] = {"admin.listener=0.0.0.0:0"};
    ASSERT_EQ(config_load(&c, NULL, on, 1, err, sizeof(err)), 0);
    ASSERT_STREQ(c.admin_host, "0.0.0.0");
    ASSERT_EQ(c.admin_port, 0);
    config_free(&c);
    char *v6[] = {"admin.listener=http://[::1]:9700"};
    ASSERT_EQ(config_load(&c, NULL, v6, 1, err, sizeof(err)), 0);
    ASSERT_STREQ(c.admin_host, "::1");
    ASSERT_EQ(c.admin_port, 9700);
    bool found = false;
    for (int i = 0; i < c.n_entries; i++)
        if (!strcmp(c.entries[i].name, "admin.listener")) {
            found = true;
            ASSERT_STREQ(c.entries[i].value, "[::1]:9700");
            ASSERT(!c.entries[i].is_default);
        }
    ASSERT(found);
    config_free(&c);
    char *off[] = {"admin.listener="};
    ASSERT_EQ(config_load(&c, NULL, off, 1, err, sizeof(err)), 0);
    ASSERT_EQ(c.admin_port, -1);
    config_free(&c);
    char *bad[] = {"admin.listener=localhost"};
    ASSERT_EQ(config_load(&c, NULL, bad, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "admin.listener"));
}
