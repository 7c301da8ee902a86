#!/usr/bin/env bash
# kcat: -L lists the broker and topics; 100,000 keyed lines produced with -P are read back
# byte-identical with -C -e; each key stays in one partition, in produced order.
# timeout: 300
source "$(dirname "$0")/lib.sh"
start_broker --set num.partitions=4

kcat -L -b "$BROKER" >"$TMP/meta0.txt"
grep -q "1 brokers:" "$TMP/meta0.txt" || fail "kcat -L does not list one broker: $(cat "$TMP/meta0.txt")"
grep -q "broker 1 at 127.0.0.1:$PORT" "$TMP/meta0.txt" || fail "kcat -L: broker address missing"

# 100,000 lines "key<TAB>value": 97 keys, values with varied bytes (no tab/newline)
$PY - "$TMP/in.txt" <<'PY'
import sys, random
random.seed(7)
alphabet = [chr(c) for c in range(0x21, 0x7f)] + ["é", "ß", "日", " "]
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for i in range(100000):
        key = "key-%d" % (i % 97)
        body = "".join(random.choice(alphabet) for _ in range(random.randint(0, 60)))
        f.write("%s\t%d:%s\n" % (key, i, body))
PY
kcat -P -b "$BROKER" -t lines -K $'\t' -X linger.ms=5 -l "$TMP/in.txt" 2>"$TMP/produce.err" ||
    fail "kcat -P failed: $(cat "$TMP/produce.err")"

kcat -C -b "$BROKER" -t lines -e -q -f '%p\t%o\t%k\t%s\n' >"$TMP/out.txt" 2>"$TMP/consume.err" ||
    fail "kcat -C failed: $(cat "$TMP/consume.err")"

$PY - "$TMP/in.txt" "$TMP/out.txt" <<'PY'
import sys, collections
lines_in = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
lines_out = open(sys.argv[2], "rb").read().split(b"\n")[:-1]
assert len(lines_out) == len(lines_in), "read %d records, produced %d" % (len(lines_out), len(lines_in))
expected = collections.defaultdict(list)
for l in lines_in:
    k, v = l.split(b"\t", 1)
    expected[k].append(v)
got = collections.defaultdict(list)
parts = collections.defaultdict(set)
last_off = {}
for l in lines_out:
    p, o, k, v = l.split(b"\t", 3)
    p, o = int(p), int(o)
    assert last_off.get(p, -1) < o, "offsets not increasing in partition %d" % p
    last_off[p] = o
    got[k].append(v)
    parts[k].add(p)
for k, vs in expected.items():
    assert len(parts[k]) == 1, "key %r spread over partitions %r" % (k, parts[k])
    assert got[k] == vs, "key %r: values differ or out of order" % k
assert len(set(p for s in parts.values() for p in s)) > 1, "all keys landed in one partition"
print("ok: %d records, %d keys, byte-identical and ordered per key" % (len(lines_out), len(expected)))
PY

kcat -L -b "$BROKER" -t lines >"$TMP/meta1.txt"
grep -q 'topic "lines" with 4 partitions' "$TMP/meta1.txt" || fail "kcat -L does not show the topic: $(cat "$TMP/meta1.txt")"
stop_broker
