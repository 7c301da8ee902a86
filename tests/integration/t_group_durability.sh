#!/usr/bin/env bash
# At-least-once and durable offsets:
#  1. a librdkafka consumer that commits each record after writing it is killed (-9) mid-stream
#     and replaced: every record is processed at least once, none is skipped;
#  2. acknowledged commits survive a broker kill -9 (a commit loop runs while the broker is
#     killed: the offset found after restart is at least the last acknowledged one), and so does
#     the group with a live member: after the restart it is still Stable with the same member,
#     which carries on without a rebalance;
#  3. a consumer started after the restart resumes at the committed offsets; a clean restart
#     keeps them too.
# timeout: 180
source "$(dirname "$0")/lib.sh"
start_broker
cd "$ROOT/tests/integration"
KG="$PY kgroup.py"
T=alo
$PY - "$BROKER" <<'PY'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for f in a.create_topics([NewTopic("alo", 3, 1), NewTopic("live", 2, 1)]).values():
    f.result()
PY
for p in 0 1 2; do seq -f "p$p-%g" 1 1000 | kcat -P -b "$BROKER" -t $T -p $p -X linger.ms=5; done

# --- 1. at-least-once across a consumer killed mid-stream
"$ITEST_BIN/rdkafka_group" "$BROKER" alo-g $T "$TMP/c1" "$TMP/stop1" --manual --delay-us 2000 2>"$TMP/c1.err" &
C1=$!
for _ in $(seq 1 200); do [ "$(wc -l <"$TMP/c1" 2>/dev/null || echo 0)" -ge 600 ] && break; sleep 0.05; done
kill -9 $C1; wait $C1 2>/dev/null || true
note "consumer 1 killed after $(wc -l <"$TMP/c1") records"
"$ITEST_BIN/rdkafka_group" "$BROKER" alo-g $T "$TMP/c2" "$TMP/stop2" --manual 2>"$TMP/c2.err" &
C2=$!
for _ in $(seq 1 400); do [ "$(cat "$TMP/c1" "$TMP/c2" | cut -d' ' -f1,2 | sort -u | wc -l)" -ge 3000 ] && break; sleep 0.05; done
touch "$TMP/stop2"; wait $C2 || fail "replacement consumer failed: $(tail -3 "$TMP/c2.err")"
$PY - "$TMP/c1" "$TMP/c2" <<'PY' || fail "at-least-once violated"
import sys, collections
first, seen = {}, collections.Counter()
for i, f in enumerate(sys.argv[1:]):
    for line in open(f):
        p, o, v = line.split()
        p, o = int(p), int(o)
        assert v == "p%d-%d" % (p, o + 1), line
        seen[(p, o)] += 1
        if i == 1:
            first.setdefault(p, o)
missing = [(p, o) for p in range(3) for o in range(1000) if (p, o) not in seen]
assert not missing, "%d records skipped, e.g. %r" % (len(missing), missing[:5])
dups = sum(n - 1 for n in seen.values())
print("ok: all 3000 records processed; %d processed twice; replacement started at %r" % (dups, first))
assert dups <= 3, "more duplicates than one uncommitted record per partition"
PY
offs=$($PY -c 'from kgroup import Client; import sys; c=Client(sys.argv[1]); print(c.fetch_offsets("alo-g","alo",[0,1,2])[0])' "$BROKER")
note "committed after the replacement closed: $offs"

# --- 2. kill -9 of the broker during commits, and with a live group member
"$ITEST_BIN/rdkafka_group" "$BROKER" live-g live "$TMP/live" "$TMP/stop-live" --session 10000 2>"$TMP/live.err" &
LIVE=$!
$KG wait "$BROKER" live-g live 2 1 20 >"$TMP/live1.json" || fail "live member never stable"
LIVE_ID=$($PY -c 'import json,sys; print(list(json.load(open(sys.argv[1]))["members"])[0])' "$TMP/live1.json")
# The loop ends in one of two ways, told apart by its exit status: the connection goes when the
# broker is killed (exit 0, "broker gone"), or a commit answers an error or the loop outlives its
# 60 s bound (exit 1: a test failure).
$PY - "$BROKER" "$TMP/acked" <<'PY' &
import sys, time
from kgroup import Client
c = Client(sys.argv[1])
deadline = time.time() + 60
with open(sys.argv[2], "w") as f:
    for i in range(1, 10**7):
        try:
            errs = c.commit("dur-g", -1, "", {("alo", 0): i})
        except OSError as e:  # ConnectionError, reset, broken pipe: the broker was killed
            print("# commit loop: broker gone after %d acknowledged commits (%s)" % (i - 1, e))
            sys.exit(0)
        if errs != {("alo", 0): 0}:
            sys.exit("commit %d answered %r while the broker was up" % (i, errs))
        f.write("%d\n" % i)
        f.flush()
        if time.time() > deadline:
            sys.exit("commit loop: the broker was not killed within 60 s")
PY
LOOP=$!
for _ in $(seq 1 400); do
    [ "$(wc -l <"$TMP/acked" 2>/dev/null || echo 0)" -ge 200 ] && break
    kill -0 $LOOP 2>/dev/null || { wait $LOOP || true; fail "the commit loop ended before the broker was killed"; }
    sleep 0.05
done
[ "$(wc -l <"$TMP/acked")" -ge 200 ] || fail "fewer than 200 commits acknowledged within 20 s"
kill9_broker
wait $LOOP || fail "the commit loop failed while the broker was up (see above)"
ACKED=$(tail -1 "$TMP/acked")
note "broker killed with $ACKED commits acknowledged"
start_broker
grep 'event=groups_loaded' "$BROKER_LOG" | tail -1
$PY - "$BROKER" "$ACKED" "$offs" <<'PY' || fail "committed offsets lost"
import sys
from kgroup import Client
c = Client(sys.argv[1])
offs, err = c.fetch_offsets("dur-g", "alo", [0])
got = offs[("alo", 0)][0]
assert err == 0 and got >= int(sys.argv[2]), "last acknowledged %s, found %r" % (sys.argv[2], offs)
offs, err = c.fetch_offsets("alo-g", "alo", [0, 1, 2])
assert str(offs) == sys.argv[3], "alo-g offsets before %s, after %r" % (sys.argv[3], offs)
print("ok: dur-g at %d (>= %s acknowledged); alo-g unchanged" % (got, sys.argv[2]))
PY
# the live member is still the group's member after the restart, without a rebalance
$KG wait "$BROKER" live-g live 2 1 20 >"$TMP/live2.json" || fail "live group not restored"
grep -q "$LIVE_ID" "$TMP/live2.json" || fail "member changed across the restart: $(cat "$TMP/live1.json") vs $(cat "$TMP/live2.json")"
sleep 3
$KG wait "$BROKER" live-g live 2 1 5 >"$TMP/live3.json" && grep -q "$LIVE_ID" "$TMP/live3.json" ||
    fail "restored member did not keep its membership: $(cat "$TMP/live3.json")"
n_assign=$(grep -c '^assign' "$TMP/live.events")
[ "$n_assign" -eq 1 ] || fail "the live member was reassigned after the restart ($(cat "$TMP/live.events"))"
touch "$TMP/stop-live"; wait $LIVE || true

# --- 3. a new consumer resumes at the committed offsets; a clean restart keeps them
for p in 0 1 2; do seq -f "p$p-%g" 1001 1010 | kcat -P -b "$BROKER" -t $T -p $p; done
timeout 30 kcat -b "$BROKER" -G alo-g -X session.timeout.ms=6000 -X auto.offset.reset=earliest \
    -e -q -f '%p %o %s\n' $T >"$TMP/resume" 2>"$TMP/resume.err" || fail "kcat -G failed: $(cat "$TMP/resume.err")"
$PY - "$TMP/resume" "$offs" <<'PY' || fail "the new consumer did not resume at the committed offsets"
import sys, ast
committed = {k[1]: v[0] for k, v in ast.literal_eval(sys.argv[2]).items()}
first = {}
for line in open(sys.argv[1]):
    p, o, v = line.split()
    first.setdefault(int(p), int(o))
assert first == committed, "first offsets read %r, committed %r" % (first, committed)
print("ok: resumed at %r" % first)
PY
stop_broker
start_broker
$PY -c 'from kgroup import Client; import sys; c=Client(sys.argv[1]); o,e=c.fetch_offsets("alo-g","alo",[0,1,2]); assert e==0 and all(v==(1010,0) for v in o.values()), o; print("ok after clean restart:", o)' "$BROKER" ||
    fail "offsets not kept across a clean restart"
stop_broker
