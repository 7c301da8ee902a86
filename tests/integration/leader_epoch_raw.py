"""OffsetForLeaderEpoch v2 (non-flexible, ErrorCode before Partition as the schema has it) on
the wire, for what the client test cannot see: the current leader epoch is checked as ListOffsets
checks it (ahead: UNKNOWN_LEADER_EPOCH 75), an unknown partition is UNKNOWN_TOPIC_OR_PARTITION
(3), and an epoch the log has ends where the next one starts or at the log end.

The epoch and the log end are ListOffsets v4's (latest) for partition 0 of TOPIC, whose records
are all of one epoch.

usage: leader_epoch_raw.py BROKER TOPIC"""
import struct
import sys

from kwire import Conn, request, string

host, port = sys.argv[1].split(":")
topic = sys.argv[2]
c = Conn(host, int(port))


def latest():
    """ListOffsets v4, latest, partition 0: (offset, leader_epoch)."""
    body = struct.pack(">ib", -1, 0) + struct.pack(">i", 1) + string(topic)
    body += struct.pack(">iiiq", 1, 0, -1, -1)
    c.send(request(2, 4, body, corr=5))
    f = c.recv_frame()
    off = 4 + 4 + 4  # correlation id, throttle, topics
    (nlen,) = struct.unpack_from(">h", f, off)
    off += 2 + nlen + 4
    part, err, ts, offset, epoch = struct.unpack_from(">ihqqi", f, off)
    assert (part, err) == (0, 0), (part, err)
    return offset, epoch


def ask(parts):
    """parts: [(partition, current_leader_epoch, leader_epoch)] -> [(error, partition, epoch, end)]"""
    body = struct.pack(">i", 1) + string(topic) + struct.pack(">i", len(parts))
    for p, cur, e in parts:
        body += struct.pack(">iii", p, cur, e)
    c.send(request(23, 2, body, corr=7))
    f = c.recv_frame()
    corr, throttle, n_topics = struct.unpack_from(">iii", f, 0)
    assert corr == 7 and n_topics == 1, (corr, n_topics)
    off = 12
    (nlen,) = struct.unpack_from(">h", f, off)
    assert f[off + 2:off + 2 + nlen].decode() == topic
    off += 2 + nlen
    (n,) = struct.unpack_from(">i", f, off)
    off += 4
    out = []
    for _ in range(n):
        out.append(struct.unpack_from(">hiiq", f, off))
        off += 18
    assert off == len(f), (off, len(f))
    return out


leo, epoch = latest()
assert leo > 0 and epoch >= 0, (leo, epoch)
got = ask([(0, -1, epoch), (0, epoch + 1, epoch), (0, epoch, epoch), (9, -1, epoch),
           (0, -1, epoch + 1), (0, -1, -1)])
assert got == [(0, 0, epoch, leo),       # the current epoch ends at the log end
               (75, 0, -1, -1),          # the caller knows a later epoch than the leader
               (0, 0, epoch, leo),       # the current epoch named: fine
               (3, 9, -1, -1),           # no such partition
               (0, 0, -1, -1),           # an epoch above any the log has: undefined
               (0, 0, -1, -1)], got      # no epoch asked: undefined
print("ok")
