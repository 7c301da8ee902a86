"""Self-test of history.py: a clean history passes, and each kind of anomaly, planted alone in
an otherwise clean history, is reported (and only it). Run by t_history.sh."""
import sys

from history import check

# Values 0..5 over 2 partitions, idempotent, in order: partition 0 holds 0 2 4, partition 1: 1 3 5.
FINAL = [(0, 0, "0"), (0, 1, "2"), (0, 2, "4"), (1, 0, "1"), (1, 1, "3"), (1, 2, "5")]
ACKED = list(FINAL)
READ = [FINAL[:2] + [("seek", 0), (0, 0, "0")] + FINAL[1:]]
OPTS = dict(values=6, partitions=2, idempotent=True, ordered=True, complete=True)


def run(name, want, **kw):
    args = dict(acked=ACKED, failed=[], reads=READ, final=FINAL)
    args.update(OPTS)
    args.update(kw)
    got = check(**args)
    if set(got) != set(want):
        sys.exit("%s: want %s, got %r" % (name, sorted(want), got))
    print("ok %s -> %s" % (name, sorted(got) or "clean"))


run("clean", [])
run("clean without a final read", [], final=None)
run("lost", ["lost"], acked=ACKED + [(0, 3, "6")], values=8, complete=False)
run("lost by truncation", ["lost", "missing"], final=FINAL[:2] + FINAL[3:], reads=[])
run("two values", ["two-values"], reads=[[(0, 0, "0"), (0, 1, "4")]])
run("duplicate", ["duplicate"], final=FINAL + [(1, 3, "5")], ordered=False)
run("duplicate out of order", ["duplicate", "disorder"], final=FINAL + [(1, 3, "5")])
run("duplicate allowed without idempotence", [], final=FINAL + [(1, 3, "5")],
    idempotent=False, ordered=False)
run("phantom", ["phantom"], final=FINAL + [(1, 3, "99")], ordered=False)
run("wrong partition", ["phantom"], final=FINAL + [(1, 3, "4")], idempotent=False,
    ordered=False)
run("failed but stored", ["failed-stored"], failed=["3"])
run("backwards", ["backwards"], reads=[[(0, 1, "2"), (0, 0, "0")]])
run("repeat without seek", ["backwards"], reads=[[(0, 1, "2"), (0, 1, "2")]])
run("disorder", ["disorder"],
    final=[(0, 0, "2"), (0, 1, "0"), (0, 2, "4")] + FINAL[3:], reads=[], acked=[])
run("missing", ["missing"], final=FINAL[:5], acked=ACKED[:5], reads=[])
# retention moved partition 0's log start to 1: value 0 (acknowledged at offset 0) is gone
run("below the log start", [], final=FINAL[1:], reads=[], log_start={0: 1})
run("lost above the log start", ["lost", "missing"], final=FINAL[2:], reads=[],
    log_start={0: 1})
run("stored below the log start", ["below-start"], reads=[], log_start={0: 1})
run("unacknowledged below the log start", ["missing"], final=FINAL[1:], reads=[],
    acked=ACKED[1:], log_start={0: 1})
print("history checker self-test passed")
