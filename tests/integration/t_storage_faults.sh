#!/usr/bin/env bash
# Storage faults: an fdatasync failing with EIO fences the partition (KAFKA_STORAGE_ERROR, never
# retried and continued) and loses no acknowledged record; a full disk (size-limited tmpfs)
# refuses produces with an error while fetches keep working, and produces work again once
# space is free.
# timeout: 180
source "$(dirname "$0")/lib.sh"

# --- fsync EIO, injected with strace into the running broker ---
start_broker
echo warm | kcat -P -b "$BROKER" -t fsync-eio -X acks=all
$PY "$ROOT/tests/integration/faulty_producer.py" "$BROKER" fsync-eio 20 before "$TMP/before.txt"
grep -c '^ok' "$TMP/before.txt" | grep -qx 20 || fail "acks=all produce failed before the fault: $(cat "$TMP/before.txt")"
# from now on every fdatasync of the broker fails with EIO
strace -f -qq -o /dev/null -e trace=fdatasync -e inject=fdatasync:error=EIO -p "$BROKER_PID" &
STRACE=$!
sleep 1
$PY "$ROOT/tests/integration/faulty_producer.py" "$BROKER" fsync-eio 5 during "$TMP/during.txt"
kill "$STRACE"; wait "$STRACE" 2>/dev/null || true
cat "$TMP/during.txt"
grep -q '^err KAFKA_STORAGE_ERROR' "$TMP/during.txt" || fail "no KAFKA_STORAGE_ERROR while fsync fails"
grep -q '^ok' "$TMP/during.txt" && fail "a write was acknowledged although its fsync failed"
grep -q 'event=partition_fenced\|event=partition_sync_failed' "$BROKER_LOG" || fail "fencing not logged"
# fsync works again, but the partition stays fenced until restart: never retried and continued
$PY "$ROOT/tests/integration/faulty_producer.py" "$BROKER" fsync-eio 3 after "$TMP/after.txt"
grep -q '^ok' "$TMP/after.txt" && fail "a fenced partition accepted a write: $(cat "$TMP/after.txt")"
# reads keep working on the fenced partition, and show nothing whose sync failed: the high
# watermark stops before the first acks=all batch that is not durable
kcat -C -b "$BROKER" -t fsync-eio -e -q >"$TMP/fenced-read.txt"
grep -q '^before-19|' "$TMP/fenced-read.txt" || fail "fetch from the fenced partition"
grep -q '^during-\|^after-' "$TMP/fenced-read.txt" && fail "a consumer saw a write whose fsync failed"
# Metadata names this broker the fenced partition's leader (its only replica still serves what
# it committed), with KAFKA_STORAGE_ERROR
kcat -L -b "$BROKER" -t fsync-eio >"$TMP/fenced-md.txt"
grep -q 'partition 0, leader 1, .*Disk error' "$TMP/fenced-md.txt" ||
    fail "Metadata of the fenced partition: $(cat "$TMP/fenced-md.txt")"
# other partitions are not affected
echo other | kcat -P -b "$BROKER" -t unaffected -X acks=all
[ "$(kcat -C -b "$BROKER" -t unaffected -e -q)" = other ] || fail "another topic was affected"
kill9_broker
start_broker
kcat -C -b "$BROKER" -t fsync-eio -e -q -f "%o %s\n" | sed "s/|.*//" >"$TMP/log.txt"
while read -r _ _ off val; do
    grep -qx "$off $val" "$TMP/log.txt" || fail "acknowledged record $val at $off lost"
done < <(grep '^ok' "$TMP/before.txt")
echo again | kcat -P -b "$BROKER" -t fsync-eio -X acks=all || fail "partition not writable after restart"
stop_broker

# --- a full disk: size-limited tmpfs ---
SMALL=$TMP/small
mkdir -p "$SMALL"
if ! mount -t tmpfs -o size=12m tmpfs "$SMALL" 2>"$TMP/mount.err"; then
    note "cannot mount a tmpfs here ($(cat "$TMP/mount.err")): disk-full part not run"
    exit 0
fi
EXTRA_CLEANUP='umount "$SMALL" 2>/dev/null'
DATA=$SMALL/data PORT=""
start_broker
seq 1 100 | sed 's/^/small-/' | kcat -P -b "$BROKER" -t full -X acks=all
# leave about 1 MiB free, then write 200 KiB records until the disk is full
avail=$(df --output=avail -B1 "$SMALL" | tail -1)
head -c $((avail - 1024 * 1024)) /dev/zero >"$SMALL/filler"
$PY "$ROOT/tests/integration/faulty_producer.py" "$BROKER" full 12 big "$TMP/full.txt" 200000
cat "$TMP/full.txt"
grep -q '^ok' "$TMP/full.txt" || fail "nothing fit before the disk filled up"
grep -q '^err KAFKA_STORAGE_ERROR' "$TMP/full.txt" || fail "a full disk did not refuse produces"
grep -q 'reason="disk full"' "$BROKER_LOG" || fail "disk full not logged in words"
# reads keep working while the disk is full
kcat -C -b "$BROKER" -t full -e -q -f '%s\n' | cut -d'|' -f1 >"$TMP/full-read.txt"
grep -qx small-100 "$TMP/full-read.txt" || fail "fetch failed while the disk is full"
# space returns: produces work again, on the same partition (not fenced)
rm -f "$SMALL/filler"
$PY "$ROOT/tests/integration/faulty_producer.py" "$BROKER" full 3 after-space "$TMP/after-space.txt" 1000
grep -c '^ok' "$TMP/after-space.txt" | grep -qx 3 || fail "produces did not resume: $(cat "$TMP/after-space.txt")"
kcat -C -b "$BROKER" -t full -e -q -f '%o %s\n' | sed 's/|.*//' >"$TMP/full-log.txt"
while read -r _ _ off val; do
    grep -qx "$off $val" "$TMP/full-log.txt" || fail "acknowledged record $val at $off lost"
done < <(grep -h '^ok' "$TMP/full.txt" "$TMP/after-space.txt")
stop_broker
umount "$SMALL"
