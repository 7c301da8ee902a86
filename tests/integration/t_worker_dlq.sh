#!/usr/bin/env bash
# streampulse worker's handler environment and traceparent, and `streampulse dlq replay`:
#  - a record's value arrives on stdin byte for byte, its key, coordinates, attempt and headers in
#    the environment (binary values base64 under NAME_B64, header names mangled, our sp-*
#    headers not exported as SP_HEADER_*, oversized headers dropped and counted, inherited SP_*
#    variables not passed on);
#  - a traceparent set by the producer reaches the handler unchanged; the retry carries a child
#    span (same trace id and flags, new parent id); an invalid one is not given as TRACEPARENT;
#  - records that fail --max-attempts times land in t.dlq; `dlq replay` puts them back on t,
#    where they run again from attempt 1 with SP_REPLAY_OF and SP_LAST_ERROR; a second replay
#    sends nothing (its progress is committed) and nothing runs twice.
# timeout: 180
source "$(dirname "$0")/lib.sh"
start_broker
export STREAMPULSE_BROKERS=$BROKER
H=$ITEST_BIN/worker_handler
RUNS=$TMP/runs.log
mkdir -p "$TMP/env1" "$TMP/env2"
TP=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01

"$SP" topic create t --partitions 2 >/dev/null
$PY - "$BROKER" "$TP" <<'PY'
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "acks": "all"})
tp = sys.argv[2]
p.produce("t", key=b"tp-1", value=b"1", headers=[
    ("traceparent", tp.encode()), ("tracestate", b"congo=t61rcWkgMzE"),
    ("content-type", b"application/json"), ("x.weird-Name", b"w"), ("bin", b"\x00\x01\x02"),
    ("sp-evil", b"not for SP_HEADER_"), ("huge", b"h" * 40000), ("dup", b"first"),
    ("dup", b"second")])
p.produce("t", key=b"k\x00ey", value=b"2 bin\x00ary\nvalue\xff")
p.produce("t", key=b"bad-tp", value=b"3", headers=[("traceparent", b"00-not-a-trace")])
p.produce("t", key=b"nullv", value=None)
assert p.flush(10) == 0
PY

touch "$TMP/broken"
SP_FOO=leak TRACEPARENT=leak timeout 60 "$SP" worker -t t -g g --max-attempts 2 --backoff 100ms \
    --drain -- "$H" "$RUNS" --fail-if-exists "$TMP/broken" --env-dir "$TMP/env1" \
    --stdin-dir "$TMP/env1" 2>"$TMP/w1.log" || { cat "$TMP/w1.log"; fail "first worker run"; }
[ "$(wc -l <"$RUNS")" -eq 8 ] || fail "expected 4 records x 2 attempts: $(cat "$RUNS")"
"$SP" consume -t t.dlq --exit --json >"$TMP/dlq1.json"
[ "$(wc -l <"$TMP/dlq1.json")" -eq 4 ] || fail "expected 4 dead letters: $(cat "$TMP/dlq1.json")"

$PY - "$TMP/env1" "$TP" "$TMP/dlq1.json" <<'PY'
import base64, json, os, sys
d, tp = sys.argv[1], sys.argv[2]
def env(name):
    raw = open(os.path.join(d, name + ".env"), "rb").read()
    return dict(e.split(b"=", 1) for e in raw.split(b"\0") if e)
def stdin(name):
    return open(os.path.join(d, name + ".in"), "rb").read()

e = env("tp-1.1")
assert e[b"TRACEPARENT"] == tp.encode(), e.get(b"TRACEPARENT")
assert e[b"TRACESTATE"] == b"congo=t61rcWkgMzE"
assert e[b"SP_HEADER_TRACEPARENT"] == tp.encode()
assert e[b"SP_HEADER_CONTENT_TYPE"] == b"application/json"
assert e[b"SP_HEADER_X_WEIRD_NAME"] == b"w"
assert e[b"SP_HEADER_BIN_B64"] == base64.b64encode(b"\x00\x01\x02") and b"SP_HEADER_BIN" not in e
assert e[b"SP_HEADER_DUP"] == b"second"
assert b"SP_HEADER_HUGE" not in e and e[b"SP_HEADERS_DROPPED"] == b"1", e.get(b"SP_HEADERS_DROPPED")
assert not any(k.startswith(b"SP_HEADER_SP_") for k in e), "sp-* headers are the worker's"
assert b"SP_FOO" not in e, "an inherited SP_* variable was passed on"
assert e[b"SP_KEY"] == b"tp-1" and e[b"SP_ATTEMPT"] == b"1" and e[b"SP_MAX_ATTEMPTS"] == b"2"
assert e[b"SP_TOPIC"] == b"t" and e[b"SP_ORIG_TOPIC"] == b"t" and e[b"SP_GROUP"] == b"g"
assert e[b"SP_ORIG_OFFSET"] == e[b"SP_OFFSET"] and e[b"SP_ORIG_PARTITION"] == e[b"SP_PARTITION"]
assert int(e[b"SP_TIMESTAMP"]) > 0 and b"SP_LAST_ERROR" not in e and b"SP_VALUE_NULL" not in e
assert stdin("tp-1.1") == b"1"

# the retry: a child span of the same trace, with the flags kept
r = env("tp-1.2")
ver, trace, parent, flags = r[b"TRACEPARENT"].split(b"-")
assert (ver, trace, flags) == (b"00", tp.split("-")[1].encode(), b"01"), r[b"TRACEPARENT"]
assert parent != tp.split("-")[2].encode() and len(parent) == 16
assert r[b"SP_TOPIC"] == b"t.retry" and r[b"SP_ORIG_TOPIC"] == b"t" and r[b"SP_ATTEMPT"] == b"2"
assert r[b"SP_ORIG_OFFSET"] == e[b"SP_ORIG_OFFSET"]
assert r[b"SP_LAST_ERROR"] == b"exit status 1; stderr: job 1 attempt 1 failed", r[b"SP_LAST_ERROR"]
assert r[b"SP_HEADER_CONTENT_TYPE"] == b"application/json" and r[b"TRACESTATE"] == b"congo=t61rcWkgMzE"

b = env("-.1")  # the binary key has no SP_KEY, so the handler names its file "-"
assert b[b"SP_KEY_B64"] == base64.b64encode(b"k\x00ey") and b"SP_KEY" not in b
assert stdin("-.1") == b"2 bin\x00ary\nvalue\xff"
assert b"TRACEPARENT" not in b

x = env("bad-tp.1")
assert b"TRACEPARENT" not in x and x[b"SP_HEADER_TRACEPARENT"] == b"00-not-a-trace"
x2 = env("bad-tp.2")
assert b"TRACEPARENT" not in x2 and x2[b"SP_HEADER_TRACEPARENT"] == b"00-not-a-trace"

n = env("nullv.1")
assert n[b"SP_VALUE_NULL"] == b"1" and stdin("nullv.1") == b""

for line in open(sys.argv[3]):
    rec = json.loads(line)
    h = {x["key"]: x["value"] for x in rec["headers"]}
    assert h["sp-attempts"] == "2" and h["sp-orig-topic"] == "t", h
    if rec["key"] == "tp-1":
        assert h["traceparent"].split("-")[1] == tp.split("-")[1], h
        assert h["traceparent"] != tp
print("# environment, stdin and traceparent: ok")
PY

# repaired: replay the dead letters; they run again, from attempt 1
rm "$TMP/broken"
"$SP" dlq replay -t t.dlq 2>"$TMP/replay1.err" || fail "dlq replay: $(cat "$TMP/replay1.err")"
grep -q "replayed 4 dead letters from t.dlq" "$TMP/replay1.err" || fail "replay said: $(cat "$TMP/replay1.err")"
"$SP" dlq replay -t t.dlq 2>"$TMP/replay2.err" || fail "second dlq replay: $(cat "$TMP/replay2.err")"
grep -q "replayed 0 dead letters" "$TMP/replay2.err" || fail "a rerun replayed again: $(cat "$TMP/replay2.err")"
"$SP" consume -t t --exit --json >"$TMP/t.json"
[ "$(wc -l <"$TMP/t.json")" -eq 8 ] || fail "t should hold 4 originals and 4 replays: $(wc -l <"$TMP/t.json")"

timeout 60 "$SP" worker -t t -g g --max-attempts 2 --backoff 100ms --drain \
    -- "$H" "$RUNS" --env-dir "$TMP/env2" 2>"$TMP/w2.log" || fail "second worker run"
[ "$(wc -l <"$RUNS")" -eq 12 ] || fail "expected the 4 replays to run once each: $(cat "$RUNS")"
timeout 60 "$SP" worker -t t -g g --drain -- "$H" "$RUNS" 2>"$TMP/w3.log" || fail "third worker run"
[ "$(wc -l <"$RUNS")" -eq 12 ] || fail "something ran again: $(cat "$RUNS")"

$PY - "$TMP/env2" "$TMP/dlq1.json" "$RUNS" <<'PY'
import json, os, sys
d = sys.argv[1]
def env(name):
    raw = open(os.path.join(d, name + ".env"), "rb").read()
    return dict(e.split(b"=", 1) for e in raw.split(b"\0") if e)
dead = {}
for line in open(sys.argv[2]):
    rec = json.loads(line)
    dead[rec["key"]] = rec
replays = [l.split() for l in open(sys.argv[3])][8:]
assert sorted(r[1] for r in replays) == ["1"] * 4 and all(r[-1] == "ok" for r in replays), replays
e = env("tp-1.1")
rec = dead["tp-1"]
h = {x["key"]: x["value"] for x in rec["headers"]}
assert e[b"SP_REPLAY_OF"] == f"t.dlq/{rec['partition']}/{rec['offset']}".encode(), e[b"SP_REPLAY_OF"]
assert e[b"SP_LAST_ERROR"] == b"exit status 1; stderr: job 1 attempt 2 failed", e[b"SP_LAST_ERROR"]
assert e[b"TRACEPARENT"] == h["traceparent"].encode(), "a replay keeps the dead letter's traceparent"
assert e[b"SP_TOPIC"] == b"t" and e[b"SP_ATTEMPT"] == b"1"
assert e[b"SP_HEADER_CONTENT_TYPE"] == b"application/json"
print("# replayed dead letters ran again from attempt 1: ok")
PY
"$SP" group describe g | grep -q '^TOTAL-LAG: 0$' || fail "lag left in group g"

# --to sends dead letters elsewhere; letters without sp-orig-topic need --to
"$SP" topic create other --partitions 1 >/dev/null
printf 'stray\n' | "$SP" produce -t t.dlq -p 0 2>/dev/null
rc=0; "$SP" dlq replay -t t.dlq 2>"$TMP/replay3.err" || rc=$?
[ $rc -eq 1 ] && grep -q "no sp-orig-topic header" "$TMP/replay3.err" || fail "a letter without origin: rc=$rc $(cat "$TMP/replay3.err")"
"$SP" dlq replay -t t.dlq --to other 2>"$TMP/replay4.err" || fail "replay --to: $(cat "$TMP/replay4.err")"
"$SP" consume -t other --exit | grep -qx stray || fail "--to did not deliver"
stop_broker
