"""Raw consumer-group requests for tests (non-flexible versions, built on kwire), and a watcher
that polls DescribeGroups until the group reaches an expected shape.

As a program:
  kgroup.py wait BROKER GROUP TOPIC NPARTS NMEMBERS TIMEOUT_S [--exclude ID,ID]
      polls until the group is Stable with NMEMBERS members whose assignments cover
      TOPIC[0..NPARTS) exactly once (and none of the excluded member ids); prints one JSON line
      {"members": {id: [partitions]}, "seconds": t} and exits 0, or exits 1 at the timeout
      with the last state seen.
  kgroup.py describe BROKER GROUP       prints the DescribeGroups answer as JSON."""
import json
import struct
import sys
import time

from kwire import Conn, request, string


class Reader:
    def __init__(self, b, off=0):
        self.b, self.off = b, off

    def i8(self):
        v = struct.unpack_from(">b", self.b, self.off)[0]
        self.off += 1
        return v

    def i16(self):
        v = struct.unpack_from(">h", self.b, self.off)[0]
        self.off += 2
        return v

    def i32(self):
        v = struct.unpack_from(">i", self.b, self.off)[0]
        self.off += 4
        return v

    def i64(self):
        v = struct.unpack_from(">q", self.b, self.off)[0]
        self.off += 8
        return v

    def str(self):
        n = self.i16()
        if n < 0:
            return None
        v = self.b[self.off:self.off + n].decode()
        self.off += n
        return v

    def bytes(self):
        n = self.i32()
        if n < 0:
            return None
        v = self.b[self.off:self.off + n]
        self.off += n
        return v


def bytes_(b):
    if b is None:
        return struct.pack(">i", -1)
    return struct.pack(">i", len(b)) + b


def subscription(topics):
    """ConsumerProtocolSubscription v0."""
    out = struct.pack(">hi", 0, len(topics)) + b"".join(string(t) for t in topics)
    return out + bytes_(None)


def assignment(parts):
    """ConsumerProtocolAssignment v0 from {topic: [partitions]}."""
    out = struct.pack(">hi", 0, len(parts))
    for t, ps in parts.items():
        out += string(t) + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", p) for p in ps)
    return out + bytes_(None)


def parse_assignment(b):
    if not b:
        return {}
    r = Reader(b)
    r.i16()
    out = {}
    for _ in range(r.i32()):
        t = r.str()
        out[t] = [r.i32() for _ in range(r.i32())]
    return out


class Client:
    """One connection to one broker. Before its first request for a group it asks
    FindCoordinator for that group until the answer is no error (at most 10 s), as a real client
    does: the group's partition of __consumer_offsets may still be on its way. The broker asked
    must be the coordinator (a single node is)."""

    def __init__(self, broker, client_id="kgroup"):
        host, port = broker.rsplit(":", 1)
        self.c = Conn(host, int(port))
        self.corr = 0
        self.client_id = client_id
        self.coordinated = set()

    def find_coordinator(self, group):
        """FindCoordinator v1 (group): (error, node_id)."""
        r = self.call(10, 1, string(group) + struct.pack(">b", 0))
        r.i32()  # throttle
        err = r.i16()
        r.str()  # message
        return err, r.i32()

    def _coord(self, group):
        if group in self.coordinated or not group:
            return
        deadline = time.time() + 10
        while True:
            err, _ = self.find_coordinator(group)
            if err == 0:
                self.coordinated.add(group)
                return
            if time.time() > deadline:
                raise AssertionError("no coordinator for group %r within 10 s (error %d)" % (group, err))
            time.sleep(0.05)

    def call(self, key, version, body):
        self.corr += 1
        self.c.send(request(key, version, body, corr=self.corr, client_id=self.client_id))
        f = self.c.recv_frame()
        if f is None:
            raise ConnectionError("broker closed the connection")
        r = Reader(f)
        assert r.i32() == self.corr, "correlation id mismatch"
        return r

    def join(self, group, member_id="", protocol_type="consumer", protocols=None,
             session_ms=6000, rebalance_ms=10000, instance_id=None, version=5):
        self._coord(group)
        protocols = protocols if protocols is not None else [("range", subscription(["t"]))]
        body = string(group) + struct.pack(">ii", session_ms, rebalance_ms) + string(member_id)
        if version >= 5:
            body += string(instance_id)
        body += string(protocol_type) + struct.pack(">i", len(protocols))
        for name, meta in protocols:
            body += string(name) + bytes_(meta)
        r = self.call(11, version, body)
        r.i32()  # throttle
        out = {"error": r.i16(), "generation": r.i32(), "protocol": r.str(), "leader": r.str(),
               "member_id": r.str(), "members": []}
        for _ in range(r.i32()):
            mid = r.str()
            if version >= 5:
                r.str()
            out["members"].append((mid, r.bytes()))
        return out

    def sync(self, group, generation, member_id, assignments=(), version=3):
        self._coord(group)
        body = string(group) + struct.pack(">i", generation) + string(member_id)
        if version >= 3:
            body += string(None)
        body += struct.pack(">i", len(assignments))
        for mid, a in assignments:
            body += string(mid) + bytes_(a)
        r = self.call(14, version, body)
        r.i32()
        return {"error": r.i16(), "assignment": r.bytes()}

    def heartbeat(self, group, generation, member_id):
        self._coord(group)
        r = self.call(12, 2, string(group) + struct.pack(">i", generation) + string(member_id))
        r.i32()
        return r.i16()

    def leave(self, group, member_id):
        self._coord(group)
        r = self.call(13, 2, string(group) + string(member_id))
        r.i32()
        return r.i16()

    def commit(self, group, generation, member_id, offsets, metadata=""):
        """offsets: {(topic, partition): offset}; returns {(topic, partition): error}."""
        self._coord(group)
        by_topic = {}
        for (t, p), o in offsets.items():
            by_topic.setdefault(t, []).append((p, o))
        body = string(group) + struct.pack(">i", generation) + string(member_id)
        body += struct.pack(">q", -1) + struct.pack(">i", len(by_topic))
        for t, ps in by_topic.items():
            body += string(t) + struct.pack(">i", len(ps))
            for p, o in ps:
                body += struct.pack(">iq", p, o) + string(metadata)
        r = self.call(8, 2, body)
        out = {}
        for _ in range(r.i32()):
            t = r.str()
            for _ in range(r.i32()):
                p = r.i32()
                out[(t, p)] = r.i16()
        return out

    def fetch_offsets(self, group, topic, partitions):
        self._coord(group)
        body = string(group) + struct.pack(">i", 1) + string(topic)
        body += struct.pack(">i", len(partitions)) + b"".join(struct.pack(">i", p) for p in partitions)
        r = self.call(9, 3, body)
        r.i32()
        out = {}
        for _ in range(r.i32()):
            t = r.str()
            for _ in range(r.i32()):
                p, o = r.i32(), r.i64()
                r.str()
                out[(t, p)] = (o, r.i16())
        return out, r.i16()

    def describe(self, group):
        self._coord(group)
        r = self.call(15, 0, struct.pack(">i", 1) + string(group))
        r.i32()  # n groups
        g = {"error": r.i16(), "group": r.str(), "state": r.str(), "protocol_type": r.str(),
             "protocol": r.str(), "members": {}}
        for _ in range(r.i32()):
            mid, cid, host = r.str(), r.str(), r.str()
            r.bytes()
            g["members"][mid] = {"client_id": cid, "host": host,
                                 "assignment": parse_assignment(r.bytes())}
        return g

    def list_groups(self):
        r = self.call(16, 0, b"")
        err = r.i16()
        return err, [(r.str(), r.str()) for _ in range(r.i32())]

    def delete_groups(self, groups):
        for g in groups:
            self._coord(g)
        body = struct.pack(">i", len(groups)) + b"".join(string(g) for g in groups)
        r = self.call(42, 0, body)
        r.i32()
        return {r.str(): r.i16() for _ in range(r.i32())}

    def close(self):
        self.c.close()


def covers_exactly_once(g, topic, nparts):
    seen = []
    for m in g["members"].values():
        seen += m["assignment"].get(topic, [])
    return sorted(seen) == list(range(nparts))


def wait(broker, group, topic, nparts, nmembers, timeout, exclude=()):
    t0 = time.time()
    last = None
    while time.time() - t0 < timeout:
        c = Client(broker)
        try:
            g = c.describe(group)
        finally:
            c.close()
        last = g
        if (g["error"] == 0 and g["state"] == "Stable" and len(g["members"]) == nmembers
                and not set(g["members"]) & set(exclude)
                and covers_exactly_once(g, topic, nparts)):
            return {"members": {m: v["assignment"].get(topic, []) for m, v in g["members"].items()},
                    "seconds": round(time.time() - t0, 3)}
        time.sleep(0.1)
    print("timeout; last state: " + json.dumps(last, default=str), file=sys.stderr)
    return None


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "wait":
        broker, group, topic = sys.argv[2], sys.argv[3], sys.argv[4]
        nparts, nmembers, timeout = int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
        exclude = ()
        if len(sys.argv) > 9 and sys.argv[8] == "--exclude":
            exclude = [x for x in sys.argv[9].split(",") if x]
        res = wait(broker, group, topic, nparts, nmembers, timeout, exclude)
        if res is None:
            sys.exit(1)
        print(json.dumps(res))
    elif cmd == "describe":
        c = Client(sys.argv[2])
        print(json.dumps(c.describe(sys.argv[3]), default=str))
        c.close()
    else:
        sys.exit("unknown command " + cmd)
