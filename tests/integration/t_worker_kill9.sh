#!/usr/bin/env bash
# Three `streampulse worker`s in one group share a 6-partition topic of 600 jobs (30 ms each).
# One is killed with kill -9 in the middle: every job still completes at least once (a few may
# run twice: those the dead one had started or finished without committing), the survivors take
# over the dead one's partitions after its session timeout, and they stop cleanly with SIGTERM
# (exit 0) leaving no lag.
# timeout: 240
source "$(dirname "$0")/lib.sh"
start_broker
export STREAMPULSE_BROKERS=$BROKER
H=$ITEST_BIN/worker_handler
RUNS=$TMP/runs.log

"$SP" topic create jobs --partitions 6 >/dev/null
seq 0 599 | awk '{ print "job-" $1 ":" $1 }' | "$SP" produce -t jobs -K : 2>/dev/null

start_worker() { # start_worker NAME: pid in ${NAME}_PID, log in $TMP/NAME.log
    "$SP" worker -t jobs -g pool -c 2 --backoff 100ms --grace 5s \
        -X session.timeout.ms=6000 -X heartbeat.interval.ms=500 -X client.id="$1" \
        -- "$H" "$RUNS" --sleep-ms 30 2>"$TMP/$1.log" &
    eval "${1}_PID=$!"
}
runs() { [ -f "$RUNS" ] && wc -l <"$RUNS" || echo 0; }
wait_for() { # wait_for SECONDS CONDITION...
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.2
    done
}
# partitions NAME: the partitions of jobs NAME holds now, from its assigned/revoked log lines
partitions() {
    $PY - "$TMP/$1.log" <<'PY'
import re, sys
held = set()
for line in open(sys.argv[1]):
    m = re.search(r'event=partitions_(assigned|revoked|lost) partitions="([^"]*)"', line)
    if not m:
        continue
    for part in re.findall(r'jobs\[([0-9,]+)\]', m.group(2)):
        ids = {int(x) for x in part.split(",")}
        held = held | ids if m.group(1) == "assigned" else held - ids
print(" ".join(str(p) for p in sorted(held)))
PY
}
all_hold() { [ -n "$(partitions a)" ] && [ -n "$(partitions b)" ] && [ -n "$(partitions c)" ]; }

start_worker a
wait_for 30 grep -q event=partitions_assigned "$TMP/a.log" || fail "a got no partitions"
start_worker b
start_worker c
wait_for 40 all_hold || fail "not all three workers hold partitions: a=$(partitions a) b=$(partitions b) c=$(partitions c)"
note "a=[$(partitions a)] b=[$(partitions b)] c=[$(partitions c)] after $(runs) runs"
B_PARTS=$(partitions b)
[ "$(runs)" -lt 600 ] || fail "all jobs ran before the kill; the test proves nothing"

kill -9 "$b_PID"
wait "$b_PID" 2>/dev/null || true
t_kill=$(date +%s.%N)
note "killed b (pid $b_PID, partitions $B_PARTS) after $(runs) runs"

done_all() {
    $PY - "$RUNS" <<'PY'
import sys
ok = {l.split()[0] for l in open(sys.argv[1]) if l.split()[-1] == "ok"}
sys.exit(0 if len(ok) == 600 else 1)
PY
}
wait_for 120 done_all || fail "not every job completed: $($PY -c "import sys; print(len({l.split()[0] for l in open(sys.argv[1])}))" "$RUNS") distinct"
note "all 600 jobs done, $(runs) runs"

# the survivors hold b's partitions now
for p in $B_PARTS; do
    holder=""
    for w in a c; do
        for q in $(partitions $w); do [ "$q" = "$p" ] && holder=$w; done
    done
    [ -n "$holder" ] || fail "partition $p of the killed worker was not taken over: a=[$(partitions a)] c=[$(partitions c)]"
done
note "after the kill: a=[$(partitions a)] c=[$(partitions c)]"

for w in a c; do
    pid_var=${w}_PID
    kill -TERM "${!pid_var}"
    rc=0
    wait "${!pid_var}" || rc=$?
    [ $rc -eq 0 ] || fail "worker $w exited $rc after SIGTERM; its log ends: $(tail -40 "$TMP/$w.log")"
    grep -q event=worker_stopped "$TMP/$w.log" || fail "worker $w: no worker_stopped line"
done

$PY - "$RUNS" "$a_PID" "$b_PID" "$c_PID" "$t_kill" "$B_PARTS" <<'PY'
import sys, collections
runs = collections.defaultdict(list)
a, b, c = sys.argv[2:5]
t_kill = float(sys.argv[5])
b_parts = set(sys.argv[6].split())
for line in open(sys.argv[1]):
    key, attempt, t, end, topic, part, off, ppid, outcome = line.split()
    runs[key].append((float(t), ppid, topic, part, outcome))
assert len(runs) == 600, f"{600 - len(runs)} jobs never ran"
by = collections.Counter(ppid for rs in runs.values() for _, ppid, _, _, _ in rs)
# handlers b had started when it died finish as orphans (their parent is then init or a
# subreaper): they count as b's runs
orphans = sum(n for p, n in by.items() if p not in (a, b, c))
assert orphans <= 2, by  # -c 2: at most two handlers were running in b
twice = [k for k, rs in runs.items() if len(rs) > 1]
# after the kill, b's partitions are served by the survivors
taken = [r for rs in runs.values() for r in rs
         if r[0] > t_kill and r[2] == "jobs" and r[3] in b_parts and r[1] in (a, c)]
assert taken, "no job of the dead worker's partitions ran on a survivor after the kill"
print(f"# runs by worker: a={by[a]} b={by[b]}+{orphans} orphaned c={by[c]}; ran more than once: {len(twice)}; "
      f"runs of b's partitions on survivors after the kill: {len(taken)}")
PY
"$SP" group describe pool >"$TMP/describe"
grep -q '^TOTAL-LAG: 0$' "$TMP/describe" || fail "lag left: $(cat "$TMP/describe")"
stop_broker
