#!/usr/bin/env bash
# streampulse worker, the main acceptance run: 1,000 jobs on an 8-partition topic; the handler
# fails every job's first two attempts and 10 poison jobs always. Every good job runs exactly
# three times (attempt 1 from the topic, 2 and 3 from jobs.retry) and never again after its
# success; every poison job runs --max-attempts (6) times and lands in jobs.dlq with its error
# and original coordinates; the delays between attempts follow the backoff schedule
# (100ms,2x,max=1s, jitter 0.2: 100, 200, 400, 800, 1000 ms) within the jitter bounds; the group
# ends with no lag on jobs and jobs.retry. Every run is recorded in a log the test inspects.
# timeout: 240
source "$(dirname "$0")/lib.sh"
start_broker
export STREAMPULSE_BROKERS=$BROKER

"$SP" topic create jobs --partitions 8 >/dev/null
seq 0 999 | awk '{ print "job-" $1 ":" $1 }' | "$SP" produce -t jobs -K : 2>/dev/null

RUNS=$TMP/runs.log
H=$ITEST_BIN/worker_handler   # one line per run in $RUNS: key attempt start end topic ...
[ -x "$H" ] || fail "$H is missing (make all builds it)"

t0=$(date +%s%N)
rc=0
timeout 180 "$SP" worker -t jobs -g workers -c 8 --max-attempts 6 --backoff 100ms,2x,max=1s \
    --drain -X session.timeout.ms=6000 -X heartbeat.interval.ms=500 \
    -- "$H" "$RUNS" --fail-below 3 --poison 100:7 2>"$TMP/worker.log" || rc=$?
note "worker ran for $(( ($(date +%s%N) - t0) / 1000000 )) ms, exit $rc; $(wc -l <"$RUNS") runs"
[ $rc -eq 0 ] || { tail -20 "$TMP/worker.log"; fail "worker --drain exited $rc"; }
grep -q 'event=worker_stopped' "$TMP/worker.log" || fail "no worker_stopped line"
note "$(grep 'event=worker_stopped' "$TMP/worker.log")"

"$SP" consume -t jobs.dlq --exit --json >"$TMP/dlq.json"
"$SP" consume -t jobs.retry --exit --json >"$TMP/retry.json"
"$SP" consume -t jobs --exit --json >"$TMP/jobs.json"
"$SP" group describe workers >"$TMP/describe"
grep -q '^TOTAL-LAG: 0$' "$TMP/describe" || fail "the group has lag left: $(cat "$TMP/describe")"
for t in jobs jobs.retry; do
    grep -q "^$t " "$TMP/describe" || fail "no committed offsets for $t: $(cat "$TMP/describe")"
done

$PY - "$RUNS" "$TMP/dlq.json" "$TMP/jobs.json" "$TMP/retry.json" 10 <<'PY'
import json, sys, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    key, attempt, t, _end, topic, _p, _o, _ppid, outcome = line.split()
    runs[key].append((float(t), int(attempt), topic, outcome))
poison = {f"job-{i}" for i in range(1000) if i % 100 == 7}
assert len(runs) == 1000, f"{1000 - len(runs)} jobs never ran"
for key, rs in runs.items():
    rs.sort()
    attempts = [a for _, a, _, _ in rs]
    want = list(range(1, 7)) if key in poison else [1, 2, 3]
    assert attempts == want, f"{key}: attempts {attempts}, want {want}"
    assert rs[0][2] == "jobs" and all(r[2] == "jobs.retry" for r in rs[1:]), f"{key}: {rs}"
    outcomes = [o for _, _, _, o in rs]
    if key in poison:
        assert "ok" not in outcomes, key
    else:
        assert outcomes == ["fail", "fail", "ok"], f"{key}: {outcomes}"

# The schedule: each retry copy says when it failed and when it may run again; that delay
# must lie within the jitter bounds of 100ms,2x,max=1s (jitter 0.2) for its attempt, and the
# next attempt must not start before it. How late it starts is queueing for the 8 slots.
def base(n):
    return min(1.0, 0.1 * 2 ** (n - 1))
start = {(k, a): t for k, rs in runs.items() for t, a, _, _ in rs}
copies = [json.loads(l) for l in open(sys.argv[4])]
assert len(copies) == 990 * 2 + 10 * 5, len(copies)
late = []
drawn = collections.defaultdict(list)
for r in copies:
    h = {x["key"]: x["value"] for x in r["headers"]}
    n = int(h["sp-attempts"])
    delay = (int(h["sp-not-before"]) - int(h["sp-failed-at"])) / 1000
    assert base(n) * 0.8 <= delay <= base(n), f"{r['key']} attempt {n}: delay {delay} for base {base(n)}"
    drawn[n].append(delay / base(n))
    nb = int(h["sp-not-before"]) / 1000
    began = start[(r["key"], n + 1)]
    assert began >= nb - 0.002, f"{r['key']} attempt {n + 1} started {(nb - began)*1000:.0f} ms before its not-before"
    assert began >= start[(r["key"], n)] + base(n) * 0.8 - 0.002
    late.append(began - nb)
# Jitter is drawn, not constant: the ratios spread over [0.8, 1.0]. For n uniform draws the
# chance that they all fall within a tenth of that width (0.02) is about n * 0.1^(n-1): below
# 1e-8 for the 10 poison jobs of attempts 4 and 5 (a bound of half the width failed ~1% of runs).
for n, ratios in drawn.items():
    assert max(ratios) - min(ratios) > 0.02, f"attempt {n}: no jitter in {sorted(ratios)}"
late.sort()
print(f"# {len(copies)} retries: delays within the schedule's jitter bounds; start after "
      f"not-before: median {late[len(late)//2]*1000:.0f} ms, max {late[-1]*1000:.0f} ms")
assert late[-1] < 60, "a retry waited a minute past its not-before"

orig = {}
for line in open(sys.argv[3]):
    r = json.loads(line)
    orig[r["key"]] = (r["partition"], r["offset"])
dead = [json.loads(l) for l in open(sys.argv[2])]
assert sorted(r["key"] for r in dead) == sorted(poison), [r["key"] for r in dead]
for r in dead:
    h = {x["key"]: x["value"] for x in r["headers"]}
    v = r["value"]
    assert h["sp-attempts"] == "6", h
    assert h["sp-error"] == f"exit status 1; stderr: job {v} attempt 6 failed", h
    assert h["sp-orig-topic"] == "jobs", h
    assert (int(h["sp-orig-partition"]), int(h["sp-orig-offset"])) == orig[r["key"]], (h, orig[r["key"]])
    assert "sp-not-before" not in h and int(h["sp-failed-at"]) > 0, h
    assert r["partition"] == orig[r["key"]][0], "a dead letter keeps its original partition number"
print(f"# {len(runs)} jobs, {sum(len(v) for v in runs.values())} runs, {len(dead)} dead letters: ok")
PY
[ "$(grep -c 'event=job_dead_lettered' "$TMP/worker.log")" -eq 10 ] || fail "expected 10 job_dead_lettered lines"
[ "$(grep -c 'event=job_retry_queued' "$TMP/worker.log")" -eq $((990 * 2 + 10 * 5)) ] ||
    fail "expected $((990 * 2 + 10 * 5)) job_retry_queued lines"

# Unloaded, the worker starts a retry close to its not-before: 8 poison jobs, one per
# partition, 8 slots; every gap between attempts within the schedule plus 500 ms.
"$SP" topic create timed --partitions 8 >/dev/null
for p in 0 1 2 3 4 5 6 7; do echo "t$p:$p" | "$SP" produce -t timed -K : -p $p 2>/dev/null; done
TRUNS=$TMP/timed.log
timeout 60 "$SP" worker -t timed -g timed -c 8 --max-attempts 6 --backoff 100ms,2x,max=1s \
    --drain -- "$H" "$TRUNS" --poison 1:0 2>"$TMP/timed.worker.log" || fail "timed worker failed"
$PY - "$TRUNS" <<'PY'
import sys, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    key, attempt, t, end, *_ = line.split()
    runs[key].append((float(t), float(end), int(attempt)))
assert len(runs) == 8, runs.keys()
worst = 0
for key, rs in runs.items():
    rs.sort()
    assert [a for _, _, a in rs] == [1, 2, 3, 4, 5, 6], (key, rs)
    for (ta, ea, na), (tb, _, _) in zip(rs, rs[1:]):
        b = min(1.0, 0.1 * 2 ** (na - 1))
        gap = tb - ea   # from the end of one run to the start of the next
        assert b * 0.8 - 0.002 <= gap <= b + 0.5, f"{key}: {gap*1000:.0f} ms after attempt {na}, schedule {b*1000:.0f} ms"
        worst = max(worst, gap - b)
print(f"# unloaded: 40 gaps within the schedule, at most {worst*1000:.0f} ms over")
PY
stop_broker
