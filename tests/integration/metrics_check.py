"""Checks for the broker's HTTP admin listener (t_metrics.sh): a strict parser of the
Prometheus text exposition format (0.0.4), scrapes, JSON endpoints and hostile HTTP.

usage: metrics_check.py COMMAND ADMIN_HOST:PORT [ARGS]
  families ADMIN              scrape /metrics, parse strictly, check every expected family
                              and its type; print a summary line
  snapshot ADMIN FILE         scrape and save the parsed samples to FILE (JSON)
  requests ADMIN BEFORE BROKER
                              scrape, compare with the BEFORE snapshot after this script sent
                              requests with known outcomes itself (below) through BROKER
  longpoll ADMIN BROKER TOPIC a Fetch that waits 600 ms must be measured with its wait
  lag ADMIN GROUP DESCRIBE_FILE
                              the group's lag in /metrics and in /v1/groups must equal the lag
                              column of `streampulse group describe GROUP` (DESCRIBE_FILE)
  escaping ADMIN BROKER       commits offsets for group ids full of quotes, backslashes, line
                              feeds and non-ASCII; their labels must parse back to the same ids
  topics ADMIN TOPIC NPARTS RECORDS
                              /v1/topics: valid JSON, TOPIC has NPARTS partitions whose end
                              offsets add up to RECORDS, and /metrics agrees
  cluster ADMIN TOPIC NODES   cluster mode (t_cluster_status.sh): the Raft, controller and
                              transport families parse, have their types and agree with
                              GET /v1/cluster for partition 0 of TOPIC; NODES: voter count
  health ADMIN STATUS [TEXT]  GET /healthz answers STATUS (and contains TEXT)
  badhttp ADMIN               hostile and malformed HTTP: each gets its 4xx (or a close)
  slowloris ADMIN N SECONDS   N connections trickle a head one byte a second: each must be
                              cut (408 or 503) within SECONDS, none answered 200
Exit status 0 when every check passed; failures are printed."""
import json
import math
import re
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, __import__("os").path.dirname(__file__))
from kgroup import Client  # noqa: E402
from kwire import Conn, request, string  # noqa: E402

NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*$")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")


class ParseError(Exception):
    pass


def parse_value(s):
    if s in ("+Inf", "Inf"):
        return math.inf
    if s == "-Inf":
        return -math.inf
    if s == "NaN":
        return math.nan
    if not re.match(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$", s):
        raise ParseError("bad value %r" % s)
    return float(s)


def parse_labels(s, i, lineno):
    """Parses '{a="x",b="y"}' starting at s[i] == '{'. Returns (dict, index after '}')."""
    labels = {}
    i += 1
    while True:
        if s[i] == "}":
            return labels, i + 1
        m = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*").match(s, i)
        if not m:
            raise ParseError("line %d: bad label name at %r" % (lineno, s[i:]))
        name = m.group(0)
        i = m.end()
        if s[i:i + 2] != '="':
            raise ParseError("line %d: expected =\" after %s" % (lineno, name))
        i += 2
        val = []
        while True:
            if i >= len(s):
                raise ParseError("line %d: unterminated label value" % lineno)
            c = s[i]
            if c == "\\":
                n = s[i + 1] if i + 1 < len(s) else ""
                if n == "\\":
                    val.append("\\")
                elif n == '"':
                    val.append('"')
                elif n == "n":
                    val.append("\n")
                else:
                    raise ParseError("line %d: bad escape \\%s" % (lineno, n))
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise ParseError("line %d: raw line feed in label value" % lineno)
            else:
                val.append(c)
                i += 1
        if name in labels:
            raise ParseError("line %d: label %s repeated" % (lineno, name))
        labels[name] = "".join(val)
        if s[i] == ",":
            i += 1
        elif s[i] != "}":
            raise ParseError("line %d: expected , or } at %r" % (lineno, s[i:]))


def family_of(sample_name, families):
    if sample_name in families:
        return sample_name
    for suffix in ("_bucket", "_sum", "_count"):
        base = sample_name[: -len(suffix)]
        if sample_name.endswith(suffix) and families.get(base, {}).get("type") == "histogram":
            return base
    return None


def parse_prometheus(text):
    """Strict parse. Returns {family: {"type", "help", "samples": [(name, labels, value)]}}."""
    if not text.endswith("\n"):
        raise ParseError("output does not end with a line feed")
    families = {}
    order = []  # family of each sample run, to detect interleaving
    for lineno, line in enumerate(text.split("\n")[:-1], 1):
        if line == "":
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not NAME_RE.match(name):
                    raise ParseError("line %d: bad metric name %r" % (lineno, name))
                fam = families.setdefault(name, {"type": None, "help": None, "samples": []})
                if fam["samples"]:
                    raise ParseError("line %d: %s after samples of %s" % (lineno, parts[1], name))
                if parts[1] == "TYPE":
                    if fam["type"] is not None:
                        raise ParseError("line %d: second TYPE for %s" % (lineno, name))
                    if len(parts) != 4 or parts[3] not in TYPES:
                        raise ParseError("line %d: bad TYPE line" % lineno)
                    fam["type"] = parts[3]
                else:
                    if fam["help"] is not None:
                        raise ParseError("line %d: second HELP for %s" % (lineno, name))
                    fam["help"] = parts[3] if len(parts) == 4 else ""
                    if re.search(r"\\[^\\n]", fam["help"]):
                        raise ParseError("line %d: bad escape in HELP" % lineno)
            continue
        m = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*").match(line)
        if not m:
            raise ParseError("line %d: bad sample %r" % (lineno, line))
        sname = m.group(0)
        i = m.end()
        labels = {}
        if i < len(line) and line[i] == "{":
            labels, i = parse_labels(line, i, lineno)
        rest = line[i:]
        if not rest.startswith(" "):
            raise ParseError("line %d: no space before the value" % lineno)
        fields = rest.split()
        if len(fields) not in (1, 2):
            raise ParseError("line %d: bad value/timestamp %r" % (lineno, rest))
        value = parse_value(fields[0])
        fam = family_of(sname, families)
        if fam is None or families[fam]["type"] is None:
            raise ParseError("line %d: sample %s without a TYPE line" % (lineno, sname))
        if order and order[-1] != fam and fam in order:
            raise ParseError("line %d: samples of %s are not contiguous" % (lineno, fam))
        if not order or order[-1] != fam:
            order.append(fam)
        families[fam]["samples"].append((sname, labels, value))
    for name, fam in families.items():
        seen = set()
        for sname, labels, _ in fam["samples"]:
            key = (sname, tuple(sorted(labels.items())))
            if key in seen:
                raise ParseError("duplicate series %s %r" % (sname, labels))
            seen.add(key)
        if fam["type"] == "histogram":
            check_histogram(name, fam["samples"])
        if fam["type"] == "counter":
            for sname, labels, v in fam["samples"]:
                if not v >= 0:
                    raise ParseError("counter %s%r is %r" % (sname, labels, v))
    return families


def check_histogram(name, samples):
    """Buckets ascend in le, counts never decrease, +Inf equals _count; _sum exists."""
    series = {}
    for sname, labels, v in samples:
        rest = {k: x for k, x in labels.items() if k != "le"}
        key = tuple(sorted(rest.items()))
        s = series.setdefault(key, {"buckets": [], "sum": None, "count": None})
        if sname == name + "_bucket":
            if "le" not in labels:
                raise ParseError("%s bucket without le" % name)
            s["buckets"].append((parse_value(labels["le"]), v))
        elif sname == name + "_sum":
            s["sum"] = v
        elif sname == name + "_count":
            s["count"] = v
        else:
            raise ParseError("%s: stray sample %s" % (name, sname))
    for key, s in series.items():
        b = s["buckets"]
        if not b or b[-1][0] != math.inf:
            raise ParseError("%s%r: no le=\"+Inf\" bucket last" % (name, key))
        for (l1, c1), (l2, c2) in zip(b, b[1:]):
            if not l1 < l2 or c2 < c1:
                raise ParseError("%s%r: buckets out of order or decreasing" % (name, key))
        if s["count"] is None or s["sum"] is None or s["count"] != b[-1][1]:
            raise ParseError("%s%r: _count/_sum missing or +Inf != _count" % (name, key))


def http_get(admin, path, timeout=10):
    host, port = admin.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=timeout)
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nAccept: */*\r\n\r\n" % (path, admin)).encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if "content-length" in headers and int(headers["content-length"]) != len(body):
        raise AssertionError("%s: Content-Length %s but %d bytes" %
                             (path, headers["content-length"], len(body)))
    return status, headers, body


def scrape(admin):
    status, headers, body = http_get(admin, "/metrics")
    assert status == 200, "GET /metrics: %d" % status
    assert headers.get("content-type", "").startswith("text/plain; version=0.0.4"), headers
    return parse_prometheus(body.decode("utf-8"))


def value(fams, family, sample=None, **labels):
    """The value of the one sample of `family` (sample name defaults to it) with these labels."""
    sample = sample or family
    hits = [v for n, l, v in fams[family]["samples"]
            if n == sample and all(l.get(k) == x for k, x in labels.items())]
    if len(hits) != 1:
        raise AssertionError("%s%r: %d samples" % (sample, labels, len(hits)))
    return hits[0]


def bucket(fams, family, le, **labels):
    return value(fams, family, family + "_bucket", le=le, **labels)


failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


EXPECTED = {
    "streampulse_kafka_requests_total": "counter",
    "streampulse_kafka_request_errors_total": "counter",
    "streampulse_kafka_request_latency_seconds": "histogram",
    "streampulse_kafka_connections": "gauge",
    "streampulse_kafka_connections_accepted_total": "counter",
    "streampulse_kafka_connections_refused_total": "counter",
    "streampulse_kafka_received_bytes_total": "counter",
    "streampulse_kafka_sent_bytes_total": "counter",
    "streampulse_storage_fsync_latency_seconds": "histogram",
    "streampulse_storage_fsync_errors_total": "counter",
    "streampulse_topics": "gauge",
    "streampulse_partitions": "gauge",
    "streampulse_partition_log_start_offset": "gauge",
    "streampulse_partition_log_end_offset": "gauge",
    "streampulse_partition_high_watermark": "gauge",
    "streampulse_partition_size_bytes": "gauge",
    "streampulse_partition_segments": "gauge",
    "streampulse_partition_leader_epoch": "gauge",
    "streampulse_partition_fenced": "gauge",
    "streampulse_partition_appended_records_total": "counter",
    "streampulse_partition_appended_bytes_total": "counter",
    "streampulse_groups": "gauge",
    "streampulse_group_members": "gauge",
    "streampulse_group_committed_offset": "gauge",
    "streampulse_group_lag": "gauge",
    "streampulse_build_info": "gauge",
    "streampulse_uptime_seconds": "gauge",
    "process_start_time_seconds": "gauge",
    "process_resident_memory_bytes": "gauge",
    "process_open_fds": "gauge",
    "process_cpu_seconds_total": "counter",
    "streampulse_admin_http_responses_total": "counter",
    "streampulse_admin_connections_refused_total": "counter",
    "streampulse_admin_timeouts_total": "counter",
    "streampulse_admin_tls_handshake_failures_total": "counter",
    "streampulse_admin_authentications_total": "counter",
}

APIS = ["Produce", "Fetch", "ListOffsets", "Metadata", "OffsetCommit", "OffsetFetch",
        "FindCoordinator", "JoinGroup", "Heartbeat", "LeaveGroup", "SyncGroup", "DescribeGroups",
        "ListGroups", "ApiVersions", "CreateTopics", "DeleteTopics", "DeleteRecords",
        "DescribeConfigs", "AlterConfigs", "CreatePartitions", "DeleteGroups", "OffsetDelete"]


def cmd_families(admin):
    fams = scrape(admin)
    for name, typ in EXPECTED.items():
        check(name in fams and fams[name]["type"] == typ,
              "family %s is a %s (%s)" % (name, typ, fams.get(name, {}).get("type")))
        check(bool(fams.get(name, {}).get("help")), "family %s has HELP text" % name)
    for api in APIS + ["unknown"]:
        value(fams, "streampulse_kafka_requests_total", api=api)
        value(fams, "streampulse_kafka_request_errors_total", api=api)
    for api in APIS:
        fam = "streampulse_kafka_request_latency_seconds"
        les = [l["le"] for n, l, _ in fams[fam]["samples"]
               if n == fam + "_bucket" and l["api"] == api]
        check(len(les) >= 10 and les[-1] == "+Inf", "%s latency histogram has buckets" % api)
    check(value(fams, "streampulse_build_info") == 1, "build_info is 1")
    check(value(fams, "process_resident_memory_bytes") > 1 << 20, "RSS is plausible")
    check(value(fams, "streampulse_storage_fsync_latency_seconds",
                "streampulse_storage_fsync_latency_seconds_count") >= 1, "fsyncs were measured")
    print("families: %d, samples: %d" % (len(fams), sum(len(f["samples"]) for f in fams.values())))


CLUSTER_EXPECTED = {
    "streampulse_controller_leader": "gauge",
    "streampulse_controller_term": "gauge",
    "streampulse_raft_term": "gauge",
    "streampulse_raft_role": "gauge",
    "streampulse_raft_commit_index": "gauge",
    "streampulse_raft_leader": "gauge",
    "streampulse_raft_follower_lag": "gauge",
    "streampulse_transport_peer_connected": "gauge",
    "streampulse_transport_sent_bytes_total": "counter",
    "streampulse_transport_received_bytes_total": "counter",
    "streampulse_transport_dropped_messages_total": "counter",
    "streampulse_transport_reconnects_total": "counter",
}
ROLES = {"follower": 0, "precandidate": 1, "candidate": 2, "leader": 3}


def cmd_cluster(admin, topic, nodes):
    nodes = int(nodes)
    fams = scrape(admin)
    for name, typ in list(EXPECTED.items()) + list(CLUSTER_EXPECTED.items()):
        check(name in fams and fams[name]["type"] == typ,
              "family %s is a %s (%s)" % (name, typ, fams.get(name, {}).get("type")))
    status, _, body = http_get(admin, "/v1/cluster")
    check(status == 200, "GET /v1/cluster answers 200 (%d)" % status)
    doc = json.loads(body)
    check(doc["mode"] == "cluster", "mode is cluster")
    ctl = value(fams, "streampulse_controller_leader")
    check(1 <= ctl <= nodes and ctl == doc["controller"]["leader"],
          "controller leader %s agrees with /v1/cluster" % ctl)
    cterm = value(fams, "streampulse_controller_term")
    check(cterm >= 1 and cterm == doc["controller"]["term"],
          "controller term %s agrees with /v1/cluster" % cterm)
    parts = [p for p in doc["partitions"] if p["topic"] == topic and p["partition"] == 0]
    check(len(parts) == 1, "/v1/cluster lists %s-0" % topic)
    p = parts[0]
    lab = {"topic": topic, "partition": "0"}
    check(value(fams, "streampulse_raft_term", **lab) == p["term"] >= 1, "raft term agrees")
    check(value(fams, "streampulse_raft_role", **lab) == ROLES[p["role"]], "raft role agrees")
    check(value(fams, "streampulse_raft_leader", **lab) == p["leader"], "raft leader agrees")
    commit = value(fams, "streampulse_raft_commit_index", **lab)
    check(commit <= p["commit_index"] and p["high_watermark"] == p["commit_index"] + 1,
          "commit index %s, HW = commit + 1" % commit)
    if p["role"] == "leader":
        lags = {int(l["follower"]): v for n, l, v in fams["streampulse_raft_follower_lag"]["samples"]
                if l["topic"] == topic and l["partition"] == "0"}
        check(sorted(lags) == sorted(f["id"] for f in p["followers"]) and len(lags) == nodes - 1,
              "a lag sample for each follower: %s" % lags)
    peers = {l["peer"]: v for n, l, v in fams["streampulse_transport_peer_connected"]["samples"]}
    check(len(peers) == nodes - 1 and all(v == 1 for v in peers.values()),
          "connected to every peer: %s" % peers)
    sent = sum(v for n, l, v in fams["streampulse_transport_sent_bytes_total"]["samples"])
    check(sent > 0, "transport bytes sent %d" % sent)
    print("cluster families ok at %s (role %s)" % (admin, p["role"]))


def flat(fams):
    return [[n, l, v] for f in fams.values() for n, l, v in f["samples"]]


def cmd_snapshot(admin, path):
    json.dump(flat(scrape(admin)), open(path, "w"))


def lookup(snap, name, **labels):
    hits = [v for n, l, v in snap if n == name and all(l.get(k) == x for k, x in labels.items())]
    assert len(hits) == 1, "%s%r: %d samples" % (name, labels, len(hits))
    return hits[0]


def cmd_requests(admin, before_path, broker):
    """Sends requests with known outcomes, then checks the deltas against BEFORE (taken before
    the test also produced with kcat: at least one Produce and its latency were measured)."""
    host, port = broker.rsplit(":", 1)
    # an OffsetCommit for a partition that does not exist: answered with an error code
    cl = Client(broker)
    errs = cl.commit("metrics-err-g", -1, "", {("no-such-topic", 0): 5})
    check(errs == {("no-such-topic", 0): 3}, "commit to a missing partition is refused (%r)" % errs)
    cl.close()
    # an unknown API key and an unsupported Fetch version: answered by a close
    c = Conn(host, int(port))
    c.send(request(9999 & 0x7FFF, 0, b""))
    check(c.closed_by_peer(), "unknown API key closes the connection")
    c = Conn(host, int(port))
    c.send(request(1, 0, b""))
    check(c.closed_by_peer(), "Fetch v0 closes the connection")
    b = json.load(open(before_path))
    a = flat(scrape(admin))
    req, err = "streampulse_kafka_requests_total", "streampulse_kafka_request_errors_total"
    lat = "streampulse_kafka_request_latency_seconds_count"

    def delta(name, **labels):
        return lookup(a, name, **labels) - lookup(b, name, **labels)

    check(delta(req, api="Produce") >= 1, "Produce requests counted (+%d)" % delta(req, api="Produce"))
    check(delta(lat, api="Produce") == delta(req, api="Produce"),
          "every acks=all Produce has a latency (+%d vs +%d)" % (delta(lat, api="Produce"),
                                                                 delta(req, api="Produce")))
    check(delta(req, api="Metadata") >= 1, "Metadata requests counted")
    check(delta(req, api="ApiVersions") >= 1, "ApiVersions requests counted")
    check(delta(err, api="Produce") == 0, "no Produce errors")
    check(delta(req, api="OffsetCommit") == 1 and delta(err, api="OffsetCommit") == 1,
          "the refused OffsetCommit is one request and one error")
    check(delta(req, api="unknown") == 1 and delta(err, api="unknown") == 1,
          "the unknown API key is one request and one error under api=unknown")
    check(delta(req, api="Fetch") == 1 and delta(err, api="Fetch") == 1,
          "the Fetch v0 is one request and one error (closed)")
    check(delta(lat, api="Fetch") == 0, "a request answered by a close has no latency")
    check(delta("streampulse_kafka_received_bytes_total") > 0 and
          delta("streampulse_kafka_sent_bytes_total") > 0, "bytes in/out moved")
    check(delta("streampulse_kafka_connections_accepted_total") >= 4, "connections counted")


def fetch_v4(topic, partition, offset, max_wait_ms):
    body = struct.pack(">iiiib", -1, max_wait_ms, 1, 1 << 20, 0)
    body += struct.pack(">i", 1) + string(topic) + struct.pack(">i", 1)
    body += struct.pack(">iqi", partition, offset, 1 << 20)
    return body


def cmd_longpoll(admin, broker, topic):
    host, port = broker.rsplit(":", 1)
    fam = "streampulse_kafka_request_latency_seconds"
    b = scrape(admin)
    c = Conn(host, int(port))
    t0 = time.time()
    c.send(request(1, 4, fetch_v4(topic, 0, 0, 600)))
    f = c.recv_frame()
    waited = time.time() - t0
    c.close()
    check(f is not None and waited >= 0.55, "the long poll waited %.3f s" % waited)
    a = scrape(admin)

    def d(le):
        return bucket(a, fam, le, api="Fetch") - bucket(b, fam, le, api="Fetch")

    dsum = value(a, fam, fam + "_sum", api="Fetch") - value(b, fam, fam + "_sum", api="Fetch")
    check(d("+Inf") == 1, "one Fetch observed")
    check(d("0.5") == 0 and d("1") == 1, "it lands in the (0.5, 1] bucket, wait included")
    check(0.55 <= dsum <= waited + 0.05, "its latency %.3f s covers the wait" % dsum)


def describe_lags(path):
    lags = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and f[1].isdigit():
            lags[(f[0], f[1])] = (int(f[2]), int(f[3]), int(f[4]))
    return lags


def cmd_lag(admin, group, describe_path):
    want = describe_lags(describe_path)
    check(len(want) >= 1, "describe lists %d partitions" % len(want))
    fams = scrape(admin)
    got = {(l["topic"], l["partition"]): v for n, l, v in fams["streampulse_group_lag"]["samples"]
           if l["group"] == group}
    comm = {(l["topic"], l["partition"]): v
            for n, l, v in fams["streampulse_group_committed_offset"]["samples"]
            if l["group"] == group}
    for tp, (c, end, lag) in sorted(want.items()):
        check(got.get(tp) == lag, "%s-%s: /metrics lag %r == describe lag %d" % (tp + (got.get(tp), lag)))
        check(comm.get(tp) == c, "%s-%s: /metrics committed %r == describe %d" % (tp + (comm.get(tp), c)))
        check(value(fams, "streampulse_partition_high_watermark", topic=tp[0], partition=tp[1]) == end,
              "%s-%s: high watermark == describe's log end %d" % (tp + (end,)))
    check(any(v > 0 for _, _, v in want.values()), "the paused group has a lag to compare")
    check(value(fams, "streampulse_group_members", group=group) == 1, "the group has its member")
    status, headers, body = http_get(admin, "/v1/groups")
    check(status == 200 and headers.get("content-type") == "application/json", "/v1/groups is JSON")
    doc = json.loads(body)
    g = [x for x in doc["groups"] if x["group"] == group]
    check(len(g) == 1, "/v1/groups lists %s" % group)
    g = g[0]
    check(g["state"] == "Stable" and g["protocol_type"] == "consumer" and g["protocol"] != "",
          "/v1/groups: Stable consumer group with a protocol (%s/%s)" % (g["state"], g["protocol"]))
    check(len(g["members"]) == 1 and g["members"][0]["client_id"] == "rdkafka-group",
          "/v1/groups: its member")
    assigned = sorted((a["topic"], str(p)) for a in g["members"][0]["assignment"]
                      for p in a["partitions"])
    check(assigned == sorted(want), "/v1/groups: the member's assignment %r" % assigned)
    jl = {(o["topic"], str(o["partition"])): (o["committed_offset"], o["log_end_offset"], o["lag"])
          for o in g["offsets"]}
    check(jl == want, "/v1/groups offsets %r == describe %r" % (jl, want))


WEIRD = ['we"ird\\g', "line\nfeed", "caf\u00e9-\u65e5\u672c", "{brace}=,x", " spaced "]


def cmd_escaping(admin, broker):
    cl = Client(broker)
    for i, g in enumerate(WEIRD):
        r = cl.commit(g.encode(), -1, "", {("esc", 0): i + 1})
        check(r == {("esc", 0): 0}, "commit for group %r" % g)
    cl.close()
    fams = scrape(admin)
    got = {l["group"]: v for n, l, v in fams["streampulse_group_committed_offset"]["samples"]
           if l["topic"] == "esc"}
    for i, g in enumerate(WEIRD):
        check(got.get(g) == i + 1, "label of group %r parses back (%r)" % (g, got.get(g)))
    status, _, body = http_get(admin, "/v1/groups")
    ids = {x["group"] for x in json.loads(body.decode("utf-8"))["groups"]}
    check(set(WEIRD) <= ids, "/v1/groups escapes the same ids into valid JSON")


def cmd_topics(admin, topic, nparts, records):
    nparts, records = int(nparts), int(records)
    status, headers, body = http_get(admin, "/v1/topics")
    check(status == 200 and headers.get("content-type") == "application/json", "/v1/topics is JSON")
    doc = json.loads(body)
    names = [t["name"] for t in doc["topics"]]
    check(names == sorted(names), "topics sorted by name")
    t = [x for x in doc["topics"] if x["name"] == topic]
    check(len(t) == 1, "/v1/topics lists %s" % topic)
    t = t[0]
    ps = t["partitions"]
    check([p["partition"] for p in ps] == list(range(nparts)), "%d partitions in order" % nparts)
    check(sum(p["log_end_offset"] for p in ps) == records, "end offsets add up to %d" % records)
    check(all(p["log_start_offset"] <= p["high_watermark"] <= p["log_end_offset"] for p in ps),
          "start <= HW <= LEO")
    check(all(p["size_bytes"] > 0 for p in ps if p["log_end_offset"] > 0), "sizes > 0")
    check(t["configs"] == {"retention.ms": "3600000"}, "config overrides %r" % t["configs"])
    check(t["internal"] is False and len(t["id"]) == 22, "id and internal flag")
    fams = scrape(admin)
    for p in ps:
        lab = dict(topic=topic, partition=str(p["partition"]))
        for key, fam in (("log_end_offset", "streampulse_partition_log_end_offset"),
                         ("high_watermark", "streampulse_partition_high_watermark"),
                         ("log_start_offset", "streampulse_partition_log_start_offset"),
                         ("size_bytes", "streampulse_partition_size_bytes")):
            check(value(fams, fam, **lab) == p[key], "%s %r agrees with /v1/topics" % (fam, lab))


def cmd_health(admin, want, text=None):
    status, headers, body = http_get(admin, "/healthz")
    check(status == int(want), "/healthz answers %d (%d)" % (int(want), status))
    if text:
        check(text.encode() in body, "/healthz says %r (%r)" % (text, body))


def raw(admin, data, wait=5.0, pause=0):
    """Sends data, returns (status or None, seconds until the server closed)."""
    host, port = admin.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=wait)
    t0 = time.time()
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", out)
    return (int(m.group(1)) if m else None), time.time() - t0


def cmd_badhttp(admin):
    cases = [
        (b"garbage\r\n\r\n", 400),
        (b"\x00\x00\x00\x14\x00\x12\x00\x03\x00\x00\x00\x01\x00\x05kafka", 400),  # a Kafka frame
        (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 400),  # TLS ClientHello
        (b"GET /nope HTTP/1.1\r\nHost: a\r\n\r\n", 404),
        (b"GET /metrics/ HTTP/1.1\r\nHost: a\r\n\r\n", 404),
        (b"POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 405),
        (b"DELETE /v1/topics HTTP/1.1\r\nHost: a\r\n\r\n", 405),
        (b"BREW /pot HTTP/1.1\r\nHost: a\r\n\r\n", 405),
        (b"GET /metrics HTTP/1.1\r\nHost: a\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", 431),
        (b"GET /metrics HTTP/1.1\r\nHost: a\r\n" + b"X-A: b\r\n" * 100 + b"\r\n", 431),
        (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: a\r\n\r\n", 414),
        (b"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbody", 200),  # read, unused
        (b"POST /v1/users HTTP/1.1\r\nHost: a\r\nContent-Length: 65537\r\n\r\n", 413),
        (b"POST /v1/users HTTP/1.1\r\nHost: a\r\n\r\n", 411),
        (b"GET /metrics HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411),
        (b"GET /metrics HTTP/9.9\r\nHost: a\r\n\r\n", 505),
        (b"GET /metrics HTTP/1.1\r\n\r\n", 400),
        (b"GET /metrics HTTP/1.1\r\nHost: a\r\n continued\r\n\r\n", 400),
        (b"GET /metrics HTTP/1.1\r\nHost: a\x00b\r\n\r\n", 400),
        (b"G\xe9T /metrics HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n" + b"\x00" * 30000, 200),  # junk after
        (b"GET /healthz HTTP/1.0\r\n\r\n", 200),
        (b"\r\n\r\nGET /healthz HTTP/1.1\nHost: a\n\n", 200),
    ]
    for data, want in cases:
        got, secs = raw(admin, data)
        check(got == want and secs < 2, "%r... -> %r (want %d, %.2f s)" % (data[:24], got, want, secs))
    # the connection is closed after an answer, even if the client keeps sending
    got, secs = raw(admin, b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET /healthz HTTP/1.1\r\n"
                    b"Host: a\r\n\r\n")
    check(got == 200 and secs < 3, "one response per connection, then closed (%.2f s)" % secs)
    # a client that connects and closes at once, or sends half a line and leaves
    for data in (b"", b"GET /met"):
        host, port = admin.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
        s.sendall(data)
        s.close()
    # 500 bytes of random garbage, 50 times
    import random
    rnd = random.Random(6)
    bad = 0
    for _ in range(50):
        data = bytes(rnd.randrange(256) for _ in range(500))
        got, _ = raw(admin, data)
        bad += got is not None and 400 <= got < 500 or got is None
    check(bad == 50, "random garbage gets 4xx or a close (%d/50)" % bad)


def cmd_slowloris(admin, n, seconds):
    n, seconds = int(n), float(seconds)
    host, port = admin.rsplit(":", 1)
    head = b"GET /metrics HTTP/1.1\r\nHost: a\r\nX-Slow: " + b"s" * 200
    results = [None] * n

    def one(i):
        t0 = time.time()
        try:
            s = socket.create_connection((host, int(port)), timeout=seconds + 5)
        except OSError as e:
            results[i] = ("connect-failed %s" % e, 0)
            return
        s.setblocking(False)
        out = b""
        closed = False
        for k in range(len(head)):
            try:
                s.send(head[k:k + 1])
            except (BrokenPipeError, ConnectionResetError):
                closed = True
            except BlockingIOError:
                pass
            deadline = time.time() + 1.0
            while time.time() < deadline and not closed:
                try:
                    b = s.recv(4096)
                    if not b:
                        closed = True
                    out += b
                except BlockingIOError:
                    time.sleep(0.05)
                except ConnectionResetError:
                    closed = True
            if closed or time.time() - t0 > seconds + 5:
                break
        s.close()
        m = re.match(rb"HTTP/1\.1 (\d{3}) ", out)
        results[i] = (int(m.group(1)) if m else ("open" if not closed else "closed"),
                      time.time() - t0)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
        time.sleep(0.01)
    for t in threads:
        t.join()
    codes = [r[0] for r in results]
    print("slowloris results: %r" % sorted("%s@%.1fs" % (c, t) for c, t in results))
    # a refused connection gets a 503, or just a close when its first byte arrived before the
    # server closed it (the kernel then resets the connection and the 503 may be lost)
    check(all(c in (408, 503, "closed") for c in codes), "every slow connection was cut, none served")
    check(sum(1 for c, t in results if t < 2) >= n - 32,
          "connections beyond the cap of 32 were refused at once")
    check(codes.count(408) <= 32 and codes.count(408) >= 1, "the others timed out with 408")
    check(all(r[1] <= seconds for r in results), "all were cut within %.0f s (max %.1f)" %
          (seconds, max(r[1] for r in results)))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    try:
        globals()["cmd_" + cmd](*args)
    except (ParseError, AssertionError) as e:
        check(False, "%s: %s" % (cmd, e))
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
