"""Sends malformed and hostile frames to a running broker. Each must get the right Kafka error
or a closed connection; the broker must keep serving other clients and its RSS must not grow.

usage: bad_input.py HOST PORT BROKER_PID"""
import struct
import sys
import time

from kwire import (Conn, batch, parse_produce_v3_errors, produce_v3, request, string, uvarint)

host, port, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
TOPIC = "badinput"
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def rss_kb():
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def api_versions_ok(c, corr=7):
    c.send(request(18, 0, b"", corr=corr))
    f = c.recv_frame()
    return f is not None and struct.unpack_from(">ih", f, 0) == (corr, 0)


def closes(frame, what):
    c = Conn(host, port)
    c.send(frame)
    check(c.closed_by_peer(), what + ": connection closed")
    c.close()


def produce_errors(records, version=3, what=""):
    c = Conn(host, port)
    c.send(request(0, version, produce_v3(TOPIC, 0, records, version=version)))
    f = c.recv_frame()
    c.close()
    if f is None:
        check(False, what + ": got a response")
        return None
    return [e[2] for e in parse_produce_v3_errors(f)]


healthy = Conn(host, port)
check(api_versions_ok(healthy), "healthy connection answers ApiVersions")

# create the topic through Metadata v1 auto-creation
c = Conn(host, port)
c.send(request(3, 1, struct.pack(">i", 1) + string(TOPIC)))
check(c.recv_frame() is not None, "metadata auto-creates the topic")
c.close()

rss_before = rss_kb()
for rnd in range(3):
    last = rnd == 2
    # size prefix problems: negative, huge, beyond socket.request.max.bytes
    closes(struct.pack(">i", -1), "negative frame size") if last else None
    closes(struct.pack(">I", 0x7FFFFFFF) + b"x" * 10, "huge frame size") if last else None
    closes(struct.pack(">i", 200 * 1024 * 1024) + b"x" * 100, "frame over 100 MiB") if last else None
    if not last:
        for f in (struct.pack(">i", -1), struct.pack(">I", 0x7FFFFFFF) + b"x" * 10):
            cc = Conn(host, port)
            cc.send(f)
            cc.closed_by_peer()
            cc.close()
    # truncated header: a 3-byte frame
    closes(struct.pack(">i", 3) + b"\x00\x03\x00", "truncated request header")
    # unknown API key
    closes(request(9999, 0, b""), "unknown API key")
    # unsupported version of an API other than ApiVersions
    closes(request(3, 99, b""), "Metadata v99")
    # Metadata v1 claiming 2^31-1 topics in a tiny body
    closes(request(3, 1, struct.pack(">i", 0x7FFFFFFF) + string("a")), "absurd array count")
    # garbage compact lengths in a flexible request (ApiVersions v3, DeleteTopics v4)
    closes(request(18, 3, uvarint(0xFFFFFFFF) + b"\x00", flexible=True),
           "ApiVersions v3 with an overlong compact string")
    closes(request(18, 3, b"\xff\xff\xff\xff\xff\xff", flexible=True),
           "ApiVersions v3 with a malformed uvarint")
    closes(request(20, 4, uvarint(1 << 30) + b"\x01", flexible=True),
           "DeleteTopics v4 with a huge compact array")
    # a body that stops in the middle of a field
    closes(request(0, 3, string(None) + struct.pack(">h", -1)), "Produce body cut short")

# ApiVersions with a version we don't support: v0 body, error 35, full key list, header v0
c = Conn(host, port)
c.send(request(18, 99, b"\x00\x00\x00", corr=42, flexible=True))
f = c.recv_frame()
corr, err, n = struct.unpack_from(">ihi", f, 0)
keys = [struct.unpack_from(">hhh", f, 10 + 6 * i)[0] for i in range(n)]
check(corr == 42 and err == 35 and 0 in keys and 1 in keys and 18 in keys,
      "ApiVersions v99 gets UNSUPPORTED_VERSION with the key list (err=%d, %d keys)" % (err, n))
c.close()

# record batch problems, answered with Kafka error codes
good = batch([b"hello", b"world"])
check(produce_errors(good, what="valid batch") == [0], "a valid batch is accepted")
check(produce_errors(batch([b"x"], corrupt_crc=True)) == [2], "bad CRC -> CORRUPT_MESSAGE (2)")
e = produce_errors(batch([b"a", b"b"], records_count=5, last_offset_delta=4))
check(e in ([2], [87]), "record count larger than the records -> CORRUPT_MESSAGE/INVALID_RECORD (%r)" % e)
e = produce_errors(batch([b"a", b"b", b"c"], records_count=2, last_offset_delta=1))
check(e in ([2], [87]), "record count smaller than the records -> error (%r)" % e)
e = produce_errors(batch([b"a", b"b"], records_count=2, last_offset_delta=7))
check(e == [87], "count disagreeing with lastOffsetDelta -> INVALID_RECORD (%r)" % e)
e = produce_errors(good[:40])
check(e == [2], "truncated batch -> CORRUPT_MESSAGE (%r)" % e)
e = produce_errors(good + good)
check(e == [87], "two batches in one partition (v3+) -> INVALID_RECORD (%r)" % e)
e = produce_errors(good, version=2)
check(e == [35], "Produce v2 -> UNSUPPORTED_VERSION (%r)" % e)
c = Conn(host, port)
c.send(request(0, 3, produce_v3("no-such-topic", 0, good)))
f = c.recv_frame()
check(f is not None and parse_produce_v3_errors(f)[0][2] == 3,
      "produce to an unknown topic -> UNKNOWN_TOPIC_OR_PARTITION")
c.close()
big = batch([b"x" * (2 * 1024 * 1024)])
e = produce_errors(big)
check(e == [10], "batch over max.message.bytes -> MESSAGE_TOO_LARGE (%r)" % e)

# a client that sends half a frame and vanishes, and many connections opened and dropped
for _ in range(50):
    cc = Conn(host, port)
    cc.send(struct.pack(">i", 1000) + b"\x00" * 100)
    cc.close()

# pipelined requests on one connection are answered in order
c = Conn(host, port)
c.send(b"".join(request(18, 0, b"", corr=100 + i) for i in range(50)))
order = [struct.unpack_from(">i", c.recv_frame(), 0)[0] for _ in range(50)]
check(order == list(range(100, 150)), "50 pipelined requests answered in order")
c.close()

time.sleep(0.5)
rss_after = rss_kb()
check(rss_after - rss_before < 10 * 1024,
      "RSS growth under 10 MiB (%d KiB -> %d KiB)" % (rss_before, rss_after))
check(api_versions_ok(healthy, corr=8), "the healthy connection still works")
healthy.close()
if failures:
    print("%d checks failed" % len(failures))
    sys.exit(1)
print("all checks passed")
