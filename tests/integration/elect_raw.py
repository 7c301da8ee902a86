"""ElectLeaders (43) on the wire, every version, byte for byte: what a Kafka broker answers for a
partition its preferred replica leads (ELECTION_NOT_NEEDED, null message), an unknown partition
and topic (UNKNOWN_TOPIC_OR_PARTITION with Kafka's controller's messages), a partition named twice
(INVALID_REQUEST), UNCLEAN on a partition with a leader (ELECTION_NOT_NEEDED), an unknown
election type (INVALID_REQUEST at the top, v1+), and every partition (null) when none needs an
election (no results at all).

usage: elect_raw.py HOST:PORT TOPIC   (TOPIC-0 led by its preferred replica; TOPIC and
                                       nothing else in the cluster)"""
import struct
import sys

import kwire

host, port = sys.argv[1].rsplit(":", 1)
TOPIC = sys.argv[2]
corr = 100


def ask(version, body):
    global corr
    corr += 1
    flex = version >= 2
    c = kwire.Conn(host, int(port))
    c.send(kwire.request(43, version, body, corr=corr, flexible=flex))
    frame = c.recv_frame()
    c.close()
    assert frame is not None, "no answer to ElectLeaders v%d" % version
    head = struct.pack(">i", corr) + (b"\x00" if flex else b"")
    assert frame.startswith(head), frame.hex()
    return frame[len(head):]


def s(x, flex):  # non-null string
    b = x.encode()
    return kwire.uvarint(len(b) + 1) + b if flex else struct.pack(">h", len(b)) + b


def ns(x, flex):  # nullable string
    return (b"\x00" if flex else struct.pack(">h", -1)) if x is None else s(x, flex)


def arr(n, flex):
    return kwire.uvarint(n + 1) if flex else struct.pack(">i", n)


def req(version, topics, etype=0, timeout=10000):
    """topics: [(name, [partitions])] or None (every partition)"""
    flex = version >= 2
    tag = b"\x00" if flex else b""
    b = struct.pack(">b", etype) if version >= 1 else b""
    if topics is None:
        b += b"\x00" if flex else struct.pack(">i", -1)
    else:
        b += arr(len(topics), flex)
        for name, parts in topics:
            b += s(name, flex) + arr(len(parts), flex) + b"".join(struct.pack(">i", p) for p in parts) + tag
    return b + struct.pack(">i", timeout) + tag


def resp(version, top, results):
    """results: [(name, [(partition, error, message)])]"""
    flex = version >= 2
    tag = b"\x00" if flex else b""
    b = struct.pack(">i", 0) + (struct.pack(">h", top) if version >= 1 else b"")
    b += arr(len(results), flex)
    for name, parts in results:
        b += s(name, flex) + arr(len(parts), flex)
        for p, e, m in parts:
            b += struct.pack(">ih", p, e) + ns(m, flex) + tag
        b += tag
    return b + tag


def check(what, version, body, want):
    got = ask(version, body)
    assert got == want, "%s: got %s, want %s" % (what, got.hex(), want.hex())
    print("ok: %s" % what)


NOT_NEEDED, UNKNOWN, INVALID = 84, 3, 42
for v in (0, 1, 2):
    check("v%d: %s-0 needs no election" % (v, TOPIC), v, req(v, [(TOPIC, [0])]),
          resp(v, 0, [(TOPIC, [(0, NOT_NEEDED, None)])]))
check("v2: unknown partition and topic, a duplicate", 2,
      req(2, [(TOPIC, [0, 7, 0]), ("nope", [0])]),
      resp(2, 0, [(TOPIC, [(0, NOT_NEEDED, None),
                           (7, UNKNOWN, "No such partition as %s-7" % TOPIC),
                           (0, INVALID, "Duplicate partition in the request")]),
                  ("nope", [(0, UNKNOWN, "No such topic as nope")])]))
check("v0: unknown topic", 0, req(0, [("nope", [1])]),
      resp(0, 0, [("nope", [(1, UNKNOWN, "No such topic as nope")])]))
check("v1: UNCLEAN on a partition with a leader", 1, req(1, [(TOPIC, [0])], etype=1),
      resp(1, 0, [(TOPIC, [(0, NOT_NEEDED, None)])]))
check("v1: election type 5", 1, req(1, [(TOPIC, [0])], etype=5),
      resp(1, INVALID, [(TOPIC, [(0, INVALID, "Unknown election type 5")])]))
for v in (0, 2):
    check("v%d: every partition, none needs an election" % v, v, req(v, None), resp(v, 0, []))
