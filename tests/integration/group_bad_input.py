"""Misuse of the group APIs, over the raw wire: every request gets Kafka's error for it, and the
group and the broker stay healthy. usage: group_bad_input.py BROKER BROKER_PID"""
import struct
import sys

from kgroup import Client, assignment, subscription
from kwire import Conn, request, string

broker, pid = sys.argv[1], int(sys.argv[2])
failures = []
E = {"NONE": 0, "UNKNOWN_TOPIC_OR_PARTITION": 3, "ILLEGAL_GENERATION": 22,
     "INCONSISTENT_GROUP_PROTOCOL": 23, "INVALID_GROUP_ID": 24, "UNKNOWN_MEMBER_ID": 25,
     "INVALID_SESSION_TIMEOUT": 26, "REBALANCE_IN_PROGRESS": 27, "INVALID_REQUEST": 42,
     "NON_EMPTY_GROUP": 68, "GROUP_ID_NOT_FOUND": 69, "MEMBER_ID_REQUIRED": 79}


def check(got, want, what):
    ok = got == E[want]
    print(("ok   " if ok else "FAIL ") + "%s: %s (got %r)" % (what, want, got))
    if not ok:
        failures.append(what)


def rss_kb():
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])


c = Client(broker, "bad-input")
G, T = "bad-g", "bad"
# a healthy one-member group to abuse
j = c.join(G)
check(j["error"], "MEMBER_ID_REQUIRED", "JoinGroup v5 without a member id")
j = c.join(G, member_id=j["member_id"])
check(j["error"], "NONE", "JoinGroup with the id handed out")
me, gen = j["member_id"], j["generation"]
s = c.sync(G, gen, me, [(me, assignment({T: [0, 1]}))])
check(s["error"], "NONE", "leader SyncGroup")

# JoinGroup misuse
check(c.join(G, member_id="", protocol_type="connect", version=3)["error"],
      "INCONSISTENT_GROUP_PROTOCOL", "JoinGroup with another protocol type")
check(c.join(G, protocols=[("sticky-only", subscription([T]))], version=3)["error"],
      "INCONSISTENT_GROUP_PROTOCOL", "JoinGroup with no protocol in common")
check(c.join("fresh-g", protocol_type="", version=3)["error"],
      "INCONSISTENT_GROUP_PROTOCOL", "JoinGroup with an empty protocol type")
check(c.join("fresh-g", protocols=[], version=3)["error"],
      "INCONSISTENT_GROUP_PROTOCOL", "JoinGroup with no protocols")
check(c.join(G, session_ms=1000)["error"], "INVALID_SESSION_TIMEOUT",
      "JoinGroup with a session timeout below group.min.session.timeout.ms")
check(c.join(G, member_id="forged-member")["error"], "UNKNOWN_MEMBER_ID",
      "JoinGroup with an invented member id")
check(c.join("", version=3)["error"], "INVALID_GROUP_ID", "JoinGroup with an empty group id")
big = b"x" * (2 << 20)
check(c.join(G, protocols=[("range", big)], version=3)["error"], "INVALID_REQUEST",
      "JoinGroup with 2 MiB of metadata (group.max.metadata.bytes is 1 MiB)")

# SyncGroup / Heartbeat / commit misuse
check(c.sync(G, gen, "intruder")["error"], "UNKNOWN_MEMBER_ID", "SyncGroup from a non-member")
check(c.sync("no-such-g", 1, "intruder")["error"], "UNKNOWN_MEMBER_ID",
      "SyncGroup to an unknown group")
check(c.sync(G, gen - 1, me)["error"], "ILLEGAL_GENERATION", "SyncGroup with a stale generation")
check(c.heartbeat(G, gen - 1, me), "ILLEGAL_GENERATION", "Heartbeat with a stale generation")
check(c.heartbeat(G, gen, "intruder"), "UNKNOWN_MEMBER_ID", "Heartbeat from a non-member")
errs = c.commit(G, gen - 1, me, {(T, 0): 5})
check(errs[(T, 0)], "ILLEGAL_GENERATION", "OffsetCommit with a stale generation")
errs = c.commit(G, gen, me, {(T, 0): 5, (T, 99): 5, ("no-such-topic", 0): 5})
check(errs[(T, 0)], "NONE", "OffsetCommit of an existing partition")
check(errs[(T, 99)], "UNKNOWN_TOPIC_OR_PARTITION", "OffsetCommit of a nonexistent partition")
check(errs[("no-such-topic", 0)], "UNKNOWN_TOPIC_OR_PARTITION", "OffsetCommit of a nonexistent topic")
offs, err = c.fetch_offsets(G, T, [0, 99])
check(err, "NONE", "OffsetFetch")
check(0 if offs[(T, 0)] == (5, 0) and offs[(T, 99)] == (-1, 0) else -99, "NONE",
      "OffsetFetch returns the good commit only (%r)" % offs)
check(c.commit(G, -1, "", {(T, 1): 1})[(T, 1)], "UNKNOWN_MEMBER_ID",
      "admin OffsetCommit while the group has members")
check(c.delete_groups([G])[G], "NON_EMPTY_GROUP", "DeleteGroups of a group with members")
check(c.delete_groups(["never-g"])["never-g"], "GROUP_ID_NOT_FOUND", "DeleteGroups of an unknown group")
check(c.leave(G, "intruder"), "UNKNOWN_MEMBER_ID", "LeaveGroup of a non-member")

# a truncated JoinGroup body closes the connection, nothing else
bad = Conn(*broker.rsplit(":", 1))
bad.send(request(11, 2, string(G) + struct.pack(">i", 6000)))
closed = bad.closed_by_peer()
print(("ok   " if closed else "FAIL ") + "truncated JoinGroup: connection closed")
if not closed:
    failures.append("truncated JoinGroup")

# the group and the broker are unharmed
check(c.heartbeat(G, gen, me), "NONE", "the member still heartbeats")
d = c.describe(G)
check(0 if d["state"] == "Stable" and list(d["members"]) == [me] else -99, "NONE",
      "group still Stable with its member (%s)" % d["state"])
check(c.leave(G, me), "NONE", "LeaveGroup of the member")
check(c.delete_groups([G])[G], "NONE", "DeleteGroups of the now empty group")
check(0 if c.describe(G)["state"] == "Dead" else -99, "NONE", "deleted group describes as Dead")
print("rss_kb=%d" % rss_kb())
if rss_kb() > 200 * 1024:
    failures.append("rss")
c.close()
if failures:
    sys.exit("%d failures: %s" % (len(failures), failures))
