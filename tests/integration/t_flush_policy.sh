#!/usr/bin/env bash
# Durability controls for acks=0/1 data: by default no fdatasync happens for them; a topic with
# flush.messages=1 syncs after every append; one with flush.ms syncs within that time; acks=all
# always syncs before answering. Observed by tracing the broker's fdatasync calls.
# timeout: 120
source "$(dirname "$0")/lib.sh"
start_broker
export STREAMPULSE_BROKERS=$BROKER
"$SP" topic create plain >/dev/null
"$SP" topic create every --config flush.messages=1 >/dev/null
"$SP" topic create timed --config flush.ms=300 >/dev/null
# the first append of a log records its leader epoch (a synced checkpoint): get it done first
for t in plain every timed; do echo first | "$SP" produce -t $t --acks all 2>/dev/null; done

trace() { # trace fdatasync while running a command; prints the number of calls
    strace -f -qq -e trace=fdatasync -o "$TMP/trace" -p "$BROKER_PID" &
    local st=$!
    sleep 0.5
    "$@"
    sleep "${SETTLE:-0.3}"
    kill "$st"; wait "$st" 2>/dev/null || true
    grep -c 'fdatasync(' "$TMP/trace" || true
}
produce_each() { # topic acks count: one request per record
    for i in $(seq 1 "$3"); do echo "r$i" | "$SP" produce -t "$1" --acks "$2" 2>/dev/null; done
}

n=$(trace produce_each plain 1 5)
note "plain, acks=1: $n fdatasync calls"
[ "$n" -eq 0 ] || fail "acks=1 data was synced without flush.messages/flush.ms ($n calls)"
n=$(trace produce_each every 1 5)
note "flush.messages=1, acks=1: $n fdatasync calls"
[ "$n" -ge 5 ] || fail "flush.messages=1 did not sync every append ($n calls for 5 appends)"
n=$(SETTLE=1 trace produce_each timed 1 1)
note "flush.ms=300, acks=1: $n fdatasync calls within 1 s"
[ "$n" -ge 1 ] || fail "flush.ms=300 did not sync within a second"
n=$(trace produce_each plain all 5)
note "plain, acks=all: $n fdatasync calls"
[ "$n" -ge 5 ] || fail "acks=all answered without syncing ($n calls for 5 appends)"
stop_broker
