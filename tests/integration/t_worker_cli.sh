#!/usr/bin/env bash
# streampulse worker and dlq: bad input is refused in words with a non-zero exit; --timeout
# kills a run's whole process group and counts it as a failure (its error says so); SIGTERM
# lets a short run finish and commits it, kills a run past --grace (not committed, it runs
# again later) and exits 0; a second SIGTERM kills at once; --order partition runs one record
# of a partition at a time in offset order, --order key runs different keys in parallel and
# each key in order.
# timeout: 240
source "$(dirname "$0")/lib.sh"
start_broker
export STREAMPULSE_BROKERS=$BROKER
H=$ITEST_BIN/worker_handler
"$SP" topic create t --partitions 2 >/dev/null

refuse() { # refuse STATUS PATTERN ARGS...: the command exits STATUS saying PATTERN
    local want=$1 pattern=$2 rc=0
    shift 2
    "$SP" "$@" >/dev/null 2>"$TMP/err" || rc=$?
    [ $rc -eq "$want" ] || fail "'$*' exited $rc, want $want: $(cat "$TMP/err")"
    grep -q -- "$pattern" "$TMP/err" || fail "'$*' did not say '$pattern': $(cat "$TMP/err")"
}
refuse 2 "topic is required" worker -g g -- true
refuse 2 "group is required" worker -t t -- true
refuse 2 "no command given" worker -t t -g g
refuse 2 "no command given" worker -t t -g g --
refuse 2 "not found" worker -t t -g g -- no-such-command-here
refuse 2 "not found" worker -t t -g g -- /etc/passwd
refuse 2 "\--backoff '1s,zz'" worker -t t -g g --backoff 1s,zz -- true
refuse 2 "above max" worker -t t -g g --backoff 2m,max=1m -- true
refuse 2 "\--concurrency" worker -t t -g g -c 0 -- true
refuse 2 "\--max-attempts" worker -t t -g g --max-attempts 0 -- true
refuse 2 "\--timeout: 'soon'" worker -t t -g g --timeout soon -- true
refuse 2 "\--grace" worker -t t -g g --grace -1s -- true
refuse 2 "\--order must be" worker -t t -g g --order fifo -- true
refuse 2 "three different topics" worker -t t -g g --retry-topic t -- true
refuse 2 "\--log-level" worker -t t -g g --log-level loud -- true
refuse 1 "does not exist" worker -t nosuch -g g -- true
refuse 1 "cannot reach" worker -b 127.0.0.1:1 --cluster-timeout 2 -t t -g g -- true
refuse 2 "missing sub-command" dlq
refuse 2 "unknown sub-command" dlq purge -t t.dlq
refuse 2 "topic is required" dlq replay
refuse 1 "does not exist" dlq replay -t nosuch.dlq
"$SP" worker --help >"$TMP/help" && grep -q SP_HEADER_ "$TMP/help" || fail "worker --help does not document the environment"
"$SP" dlq --help >"$TMP/help" && grep -q "sp-replay-of" "$TMP/help" || fail "dlq --help"
"$SP" topic list | grep -q '^nosuch' && fail "a refused worker created topics"
note "bad input refused"

# --- --timeout: the handler and what it started are killed; the error says so --------------
cat >"$TMP/hang.sh" <<'EOF'
#!/bin/bash
echo "hanging now" >&2
sleep 58.642 &
sleep 57.531
EOF
chmod +x "$TMP/hang.sh"
"$SP" topic create hang --partitions 1 >/dev/null
echo x | "$SP" produce -t hang 2>/dev/null
timeout 60 "$SP" worker -t hang -g h --timeout 1s --max-attempts 1 --drain -- "$TMP/hang.sh" \
    2>"$TMP/hang.log" || fail "worker with --timeout: $(cat "$TMP/hang.log")"
sleep 0.2
pgrep -f "sleep 5[78]\.[56]" >/dev/null && fail "the timed-out handler's processes survive"
"$SP" consume -t hang.dlq --exit --format '%h\n' >"$TMP/hang.dlq"
grep -q 'sp-error=timed out after 1s (killed); stderr: hanging now' "$TMP/hang.dlq" ||
    fail "timeout error: $(cat "$TMP/hang.dlq")"
note "--timeout kills the process group"

# --- SIGTERM: finish what fits in --grace, kill the rest, commit, exit 0 --------------------
cat >"$TMP/sleepy.sh" <<EOF
#!/bin/bash
read -r v || true
echo "start \$SP_KEY \$SP_ATTEMPT" >>"$TMP/sleepy.log"
[ -e "$TMP/quick" ] || sleep "\$v"
echo "end \$SP_KEY" >>"$TMP/sleepy.log"
EOF
chmod +x "$TMP/sleepy.sh"
"$SP" topic create slow --partitions 2 >/dev/null
echo "short:2" | "$SP" produce -t slow -K : -p 0 2>/dev/null
echo "long:59.753" | "$SP" produce -t slow -K : -p 1 2>/dev/null
"$SP" worker -t slow -g s -c 2 --grace 4s -- "$TMP/sleepy.sh" 2>"$TMP/slow.log" &
WP=$!
for _ in $(seq 100); do [ "$(grep -c start "$TMP/sleepy.log" 2>/dev/null)" = 2 ] && break; sleep 0.1; done
[ "$(grep -c start "$TMP/sleepy.log")" = 2 ] || fail "the two slow jobs did not start"
t0=$(date +%s%N)
kill -TERM $WP
rc=0; wait $WP || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc -eq 0 ] || fail "worker exited $rc after SIGTERM: $(tail "$TMP/slow.log")"
[ $ms -ge 3500 ] && [ $ms -le 12000 ] || fail "stopped after $ms ms with --grace 4s"
grep -q "end short" "$TMP/sleepy.log" || fail "the short job was not allowed to finish"
grep -q "end long" "$TMP/sleepy.log" && fail "the long job finished?"
pgrep -f "sleep 59.753" >/dev/null && fail "the long job was not killed"
grep -q 'event=job_abandoned.*reason=shutdown' "$TMP/slow.log" || fail "no job_abandoned line"
"$SP" group describe s >"$TMP/describe"
grep -Eq '^slow +0 +1 +1 +0 ' "$TMP/describe" || fail "the finished job is not committed: $(cat "$TMP/describe")"
grep -Eq '^slow +1 +- +1 +1 |^slow +1 +0 +1 +1 ' "$TMP/describe" ||
    fail "the killed job was committed: $(cat "$TMP/describe")"
note "SIGTERM after $ms ms: short job committed, long job killed and left uncommitted"
touch "$TMP/quick"
timeout 60 "$SP" worker -t slow -g s --drain -- "$TMP/sleepy.sh" 2>>"$TMP/slow.log" || fail "rerun"
[ "$(grep -c 'start long 1' "$TMP/sleepy.log")" = 2 ] || fail "the killed job did not run again at attempt 1: $(cat "$TMP/sleepy.log")"
[ "$(grep -c 'start short' "$TMP/sleepy.log")" = 1 ] || fail "the committed job ran again"

# a second SIGTERM does not wait for --grace
rm "$TMP/quick"
echo "long2:59.753" | "$SP" produce -t slow -K : -p 1 2>/dev/null
"$SP" worker -t slow -g s --grace 60s -- "$TMP/sleepy.sh" 2>"$TMP/slow2.log" &
WP=$!
for _ in $(seq 100); do grep -q "start long2" "$TMP/sleepy.log" && break; sleep 0.1; done
t0=$(date +%s%N)
kill -TERM $WP; sleep 0.5; kill -TERM $WP
rc=0; wait $WP || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc -eq 0 ] && [ $ms -lt 10000 ] || fail "second SIGTERM: exit $rc after $ms ms"
grep -q event=worker_stop_now "$TMP/slow2.log" || fail "no worker_stop_now line"

# --- ordering within a partition ------------------------------------------------------------
"$SP" topic create ord --partitions 1 >/dev/null
printf 'a:0\nb:1\na:2\nb:3\nc:4\na:5\nc:6\nb:7\n' | "$SP" produce -t ord -K : 2>/dev/null
for mode in partition key; do
    timeout 60 "$SP" worker -t ord -g "ord-$mode" -c 4 --order $mode --drain \
        -- "$H" "$TMP/ord-$mode.log" --sleep-ms 300 2>"$TMP/ord-$mode.err" || fail "--order $mode"
done
$PY - "$TMP/ord-partition.log" "$TMP/ord-key.log" <<'PY'
import sys
def load(path):
    rs = []
    for line in open(path):
        key, attempt, start, end, topic, part, off, *_ = line.split()
        rs.append((int(off), key, float(start), float(end)))
    assert sorted(r[0] for r in rs) == list(range(8)), rs
    return sorted(rs)
def overlap(a, b):
    return a[2] < b[3] and b[2] < a[3]
p = load(sys.argv[1])
for a, b in zip(p, p[1:]):
    assert b[2] >= a[3], f"--order partition: offset {b[0]} started before {a[0]} ended"
k = load(sys.argv[2])
for i, a in enumerate(k):
    for b in k[i + 1:]:
        if a[1] == b[1]:
            assert b[2] >= a[3], f"--order key: {b[1]}@{b[0]} started before {a[1]}@{a[0]} ended"
parallel = sum(1 for i, a in enumerate(k) for b in k[i + 1:] if a[1] != b[1] and overlap(a, b))
assert parallel > 0, "--order key ran nothing in parallel"
span_p = p[-1][3] - p[0][2]
span_k = max(r[3] for r in k) - min(r[2] for r in k)
print(f"# --order partition: serial, {span_p:.2f} s; --order key: {parallel} overlapping pairs, {span_k:.2f} s")
PY
stop_broker
