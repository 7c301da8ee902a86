"""Checks an idempotence test's outcome:

  idem_check.py ACKED_FILE STORED_FILE COUNT PARTITIONS

STORED_FILE holds "partition offset value" for every record in the topic (kcat -f '%p %o %s\\n');
ACKED_FILE the producer's delivery reports in the same form (idem_producer.py). Passes when
each partition p holds exactly the values p, p + PARTITIONS, ... < COUNT in that order (every
record once, in produced order) and every acknowledged offset holds the acknowledged value."""
import sys

acked_path, stored_path, count, parts = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
stored = {}
by_part = {p: [] for p in range(parts)}
for line in open(stored_path):
    p, o, v = line.split()
    p, o = int(p), int(o)
    assert (p, o) not in stored, "offset %d of partition %d read twice" % (o, p)
    stored[(p, o)] = v
    by_part[p].append((o, int(v)))
for p in range(parts):
    got = [v for _, v in sorted(by_part[p])]
    want = list(range(p, count, parts))
    if got != want:
        seen, dups = set(), []
        for v in got:
            if v in seen:
                dups.append(v)
            seen.add(v)
        missing = sorted(set(want) - seen)
        disorder = next((i for i in range(1, len(got)) if got[i] <= got[i - 1]), None)
        sys.exit("partition %d: %d records, want %d; duplicates %d (e.g. %r), missing %d "
                 "(e.g. %r), first out-of-order position %r" %
                 (p, len(got), len(want), len(dups), dups[:5], len(missing), missing[:5],
                  disorder))
acked = [l.split() for l in open(acked_path) if l.strip()]
assert len(acked) == count, "%d delivery reports for %d records" % (len(acked), count)
wrong = [(p, o, v) for p, o, v in acked if stored.get((int(p), int(o))) != v]
assert not wrong, "%d acknowledged offsets do not hold their record, e.g. %r" % (len(wrong),
                                                                                 wrong[:5])
print("ok: %d records over %d partitions, each once and in order; all %d acknowledged offsets "
      "hold their record" % (count, parts, len(acked)))
