/* quorum.state (broker/quorum_state.h): what is written reads back; a file that does not parse
 * is refused with the line, never guessed around. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/errors.h"
#include "broker/quorum_state.h"
#include "test.h"

static void put_file(const char *dir, const char *text)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, QUORUM_STATE_FILE);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs(text, f);
    fclose(f);
}

TEST(broker_quorum_state_roundtrip_and_refusals)
{
    const char *dir = test_tmpdir();
    struct quorum_state st = {.n_voters = 3}, back;
    snprintf(st.cluster_id, sizeof(st.cluster_id), "%s", "AbC-12_x");
    st.voters[0] = (struct broker_voter){1, "127.0.0.1", 9093};
    st.voters[1] = (struct broker_voter){4, "::1", 19093};
    st.voters[2] = (struct broker_voter){7, "node-7.example", 65535};
    char err[512];
    ASSERT_EQ(quorum_state_read(dir, &back, err, sizeof(err)), -ENOENT);
    ASSERT_EQ(quorum_state_write(dir, &st), 0);
    ASSERT_EQ(quorum_state_read(dir, &back, err, sizeof(err)), 0);
    ASSERT_STREQ(back.cluster_id, "AbC-12_x");
    ASSERT_EQ(back.n_voters, 3);
    for (size_t i = 0; i < 3; i++) {
        ASSERT_EQ(back.voters[i].id, st.voters[i].id);
        ASSERT_STREQ(back.voters[i].host, st.voters[i].host);
        ASSERT_EQ(back.voters[i].port, st.voters[i].port);
    }
    struct quorum_state none = {0};
    ASSERT_EQ(quorum_state_write(dir, &none), -EINVAL);

    static const char *bad[] = {
        "cluster.id=x\n",                                                         /* no voters */
        "voters=1@h:1\n",                                                         /* no id */
        "cluster.id=x\nvoters=1@h:0\n",                                           /* port 0 */
        "cluster.id=x\nvoters=1@h:70000\n",                                       /* port too big */
        "cluster.id=x\nvoters=1@h:1,1@g:2\n",                                     /* duplicate id */
        "cluster.id=x\nvoters=-1@h:1\n",                                          /* negative id */
        "cluster.id=x\nvoters=1h:1\n",                                            /* no @ */
        "cluster.id=x\nvoters=\n",                                                /* empty list */
        "cluster.id=x\nvoters=1@h:1\nunknown=1\n",                                /* unknown key */
        "cluster.id=0123456789012345678901234567890123\nvoters=1@h:1\n",          /* id too long */
        "cluster.id=x\nvoters=1@h:1,2@h:2,3@h:3,4@h:4,5@h:5,6@h:6,7@h:7,8@h:8\n", /* > 7 */
        "garbage\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        put_file(dir, bad[i]);
        err[0] = '\0';
        ASSERT_EQ(quorum_state_read(dir, &back, err, sizeof(err)), -ERR_CORRUPT);
        ASSERT(strstr(err, QUORUM_STATE_FILE) != NULL);
    }
    put_file(dir, "# comment\n\ncluster.id=x\nvoters=2@[::1]:5\n");
    ASSERT_EQ(quorum_state_read(dir, &back, err, sizeof(err)), 0);
    ASSERT_STREQ(back.voters[0].host, "::1");
    ASSERT_EQ(back.voters[0].port, 5);
}
