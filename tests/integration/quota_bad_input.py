"""AlterClientQuotas and DescribeClientQuotas v0 with what a careful client would not send,
raw (kwire): each bad entry gets INVALID_REQUEST (42) while a good one in the same request is
applied; a bad filter gets INVALID_REQUEST for the whole DescribeClientQuotas; the broker keeps
serving.

usage: quota_bad_input.py HOST:PORT"""
import struct
import sys

import kwire

host, port = sys.argv[1].split(":")


def s(x):
    return kwire.string(x)


def entity(*parts):
    return struct.pack(">i", len(parts)) + b"".join(s(t) + s(n) for t, n in parts)


def op(key, value, remove=False):
    return s(key) + struct.pack(">d?", value, remove)


def alter(entries, validate_only=False):
    body = struct.pack(">i", len(entries))
    for ent, ops in entries:
        body += ent + struct.pack(">i", len(ops)) + b"".join(ops)
    return body + struct.pack(">?", validate_only)


def call(api, body):
    c = kwire.Conn(host, int(port))
    c.send(kwire.request(api, 0, body, corr=7))
    f = c.recv_frame()
    c.close()
    assert f is not None and struct.unpack(">i", f[:4])[0] == 7, f
    return f[4:]


def alter_errors(resp):
    n = struct.unpack(">i", resp[4:8])[0]
    at, codes = 8, []
    for _ in range(n):
        code = struct.unpack(">h", resp[at:at + 2])[0]
        at += 2
        ml = struct.unpack(">h", resp[at:at + 2])[0]
        at += 2 + max(ml, 0)
        ne = struct.unpack(">i", resp[at:at + 4])[0]
        at += 4
        for _ in range(ne):
            tl = struct.unpack(">h", resp[at:at + 2])[0]
            at += 2 + tl
            nl = struct.unpack(">h", resp[at:at + 2])[0]
            at += 2 + max(nl, 0)
        codes.append(code)
    return codes


bad = [
    (entity(("user", "bob")), [op("bytes_per_fortnight", 1)]),
    (entity(("user", "carol")), [op("producer_byte_rate", -5)]),
    (entity(("user", "dan")), [op("producer_byte_rate", float("nan"))]),
    (entity(("ip", "10.0.0.1")), [op("connection_creation_rate", 5)]),
    (entity(("galaxy", "x")), [op("producer_byte_rate", 5)]),
    (entity(("user", "eve"), ("user", "eve")), [op("producer_byte_rate", 5)]),
    (entity(), [op("producer_byte_rate", 5)]),
    (entity(("user", "")), [op("producer_byte_rate", 5)]),
    (entity(("user", "fay")), [op("producer_byte_rate", 5), op("producer_byte_rate", 6)]),
]
good = (entity(("user", "gus")), [op("consumer_byte_rate", 5000)])
codes = alter_errors(call(49, alter(bad + [good])))
assert codes == [42] * len(bad) + [0], codes
print("AlterClientQuotas: %d bad entries refused (42), the good one applied" % len(bad))
# a filter on an unknown entity type, and an exact match without a name
for comp in [s("galaxy") + struct.pack(">b", 2) + s(None), s("user") + struct.pack(">b", 0) + s(None),
             s("user") + struct.pack(">b", 9) + s(None)]:
    resp = call(48, struct.pack(">i", 1) + comp + b"\x00")
    assert struct.unpack(">h", resp[4:6])[0] == 42, resp
print("DescribeClientQuotas: 3 bad filters refused (42)")
