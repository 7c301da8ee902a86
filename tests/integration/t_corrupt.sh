#!/usr/bin/env bash
# A byte flipped inside the last segment after a crash: recovery truncates from that batch on,
# logs what it cut, never serves the corrupt batch, and the log continues from the cut.
# timeout: 120
source "$(dirname "$0")/lib.sh"
start_broker
seq 1 3000 | sed 's/^/value-/' | kcat -P -b "$BROKER" -t corrupt -X batch.num.messages=50 -X linger.ms=1
kill9_broker
seg=$(ls "$DATA"/corrupt-0/*.log | sort | tail -1)
size=$(stat -c %s "$seg")
pos=$((size * 6 / 10))
note "flipping a byte at $pos of $size in $seg"
$PY - "$seg" "$pos" <<'PY'
import sys
path, pos = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(pos)
    b = f.read(1)
    f.seek(pos)
    f.write(bytes([b[0] ^ 0x5A]))
PY
start_broker
grep -q 'event=log_truncated' "$BROKER_LOG" || fail "recovery did not log the truncation"
grep 'event=log_truncated' "$BROKER_LOG"
kcat -C -b "$BROKER" -t corrupt -e -q -f '%o %s\n' >"$TMP/out.txt"
n=$(wc -l <"$TMP/out.txt")
note "$n records survive"
[ "$n" -gt 0 ] && [ "$n" -lt 3000 ] || fail "expected a strict prefix to survive, got $n records"
# a clean prefix: offsets 0..n-1 holding value-1..value-n, nothing corrupt
awk '{ if ($1 != NR-1 || $2 != "value-" NR) { print "bad line " NR ": " $0; exit 1 } }' "$TMP/out.txt" ||
    fail "surviving records are not the exact prefix"
# the log continues at the cut
echo "after-repair" | kcat -P -b "$BROKER" -t corrupt
last=$(kcat -C -b "$BROKER" -t corrupt -e -q -f '%o %s\n' | tail -1)
[ "$last" = "$n after-repair" ] || fail "new record not at offset $n: $last"
stop_broker
