#!/usr/bin/env bash
# serve's heap on transparent huge pages (server/huge_pages.h): the broker runs with glibc's
# malloc tunable set (it executed itself again with it) and, where the kernel gives huge pages
# to those who ask, its heap holds some once it has grown; a tunable set by whoever starts it
# (glibc.malloc.hugetlb=0 opts out) is left as it is.
# timeout: 120
source "$(dirname "$0")/lib.sh"
tunables() { tr '\0' '\n' <"/proc/$BROKER_PID/environ" | sed -n 's/^GLIBC_TUNABLES=//p'; }
huge_kib() { awk '/^AnonHugePages:/ { print $2 }' "/proc/$BROKER_PID/smaps_rollup"; }
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo "[never]")

start_broker
case "$thp" in
*"[never]"*)
    [ -z "$(tunables)" ] || fail "tunable set though the kernel has no huge pages: $(tunables)"
    note "transparent huge pages are off here: only the opt-out is checked"
    ;;
*)
    [ "$(tunables)" = "glibc.malloc.hugetlb=1" ] || fail "GLIBC_TUNABLES of serve: '$(tunables)'"
    # a few thousand partitions: some megabytes of heap, in 2 MiB pages
    "$SP" topic create wide --partitions 2000 -b "$BROKER" >/dev/null || fail "topic create wide"
    [ "$(huge_kib)" -gt 0 ] || fail "no huge page in the heap: $(grep -E 'Anon|Rss' "/proc/$BROKER_PID/smaps_rollup")"
    ;;
esac
stop_broker

# opted out: the environment is the starter's, and the heap stays in 4 KiB pages
export GLIBC_TUNABLES=glibc.malloc.hugetlb=0
start_broker
[ "$(tunables)" = "glibc.malloc.hugetlb=0" ] || fail "opt-out not kept: '$(tunables)'"
[ "$(huge_kib)" -eq 0 ] || fail "huge pages though opted out: $(huge_kib) KiB"
stop_broker
