"""A Jepsen-style checker of a client-visible history of a topic (issue 5's acceptance checker).

  history.py [--acked FILE]... [--failed FILE]... [--read FILE]... [--final FILE]
             [--values N --partitions P] [--idempotent] [--ordered] [--complete]
             [--log-start P=OFFSET]...

Inputs (one record a line, whitespace-separated; values are opaque tokens without spaces):
  --acked FILE   "partition offset value": the producer was told value is at that offset.
  --failed FILE  "value": the producer was told the write definitely failed (a non-retriable
                 error). Values whose fate the client never learnt belong in neither file.
  --read FILE    one consumer's reads in the order it saw them: "partition offset value", and
                 "seek partition" lines where it was told to start a partition again
                 (assignment, reset, seek). Several --read files are several consumers.
  --final FILE   a full read of the topic after the run (e.g. kcat -C -e -f '%p %o %s\\n'):
                 the log as it ended. Without it the union of the --read files stands for it.
  --values N --partitions P
                 the producer wrote the values 0..N-1, value i to partition i % P (as
                 idem_producer.py does): every value seen must be one of them; with
                 --ordered each partition's log must hold its values in increasing order.
  --idempotent   the producer was idempotent: no value may be stored twice.
  --complete     every value 0..N-1 must be stored (the producer delivered them all).
  --log-start P=OFFSET
                 partition P's log starts at OFFSET now (retention or DeleteRecords removed
                 what was below): an acknowledged value below it is not lost, nor missing
                 under --complete, but the final log must hold nothing below it.

Anomalies reported (each one fails the check):
  lost           an acknowledged value is not at its acknowledged offset in the final log
  two-values     one offset seen (by any reader or acknowledgement) with two different values
  duplicate      (--idempotent) a value stored at two offsets
  phantom        a value stored that was never written (outside 0..N-1)
  failed-stored  a value the producer was told failed is stored
  backwards      a consumer saw a partition's offsets go backwards (or repeat) with no seek
  disorder       (--ordered) a partition's values are not increasing in offset order
  missing        (--complete) a value was never stored (an acknowledged one below its
                 partition's --log-start excepted)
  below-start    (--log-start) the final log holds an offset below the partition's log start

Prints one line per kind of anomaly with examples, then a summary; exits 1 if any was found.
The checks are functions of plain lists so tests can feed them histories directly."""
import sys
from collections import defaultdict


def parse_triples(path):
    """'partition offset value' lines -> [(p, o, v)], and 'seek p' lines -> ('seek', p)."""
    out = []
    for n, line in enumerate(open(path), 1):
        f = line.split()
        if not f:
            continue
        if f[0] == "seek" and len(f) == 2:
            out.append(("seek", int(f[1])))
        elif len(f) == 3:
            out.append((int(f[0]), int(f[1]), f[2]))
        else:
            raise SystemExit("%s:%d: cannot parse %r" % (path, n, line.rstrip("\n")))
    return out


def check(acked=(), failed=(), reads=(), final=None, values=None, partitions=None,
          idempotent=False, ordered=False, complete=False, log_start=None):
    """Returns {anomaly kind: [examples]} (empty when the history is clean).

    acked: [(p, o, v)]; failed: [v]; reads: [[(p, o, v) or ('seek', p)]] one list a consumer;
    final: [(p, o, v)] or None; log_start: {p: offset} or None."""
    bad = defaultdict(list)
    log_start = log_start or {}

    def deleted(p, o):
        return o < log_start.get(p, 0)

    # every observation of an offset, from any source
    seen = {}

    def observe(p, o, v, src):
        prev = seen.get((p, o))
        if prev is None:
            seen[(p, o)] = (v, src)
        elif prev[0] != v:
            bad["two-values"].append("partition %d offset %d: %r (%s) and %r (%s)" %
                                     (p, o, prev[0], prev[1], v, src))

    for p, o, v in acked:
        observe(p, o, v, "acked")
    for i, r in enumerate(reads):
        last = {}
        for ev in r:
            if ev[0] == "seek":
                last.pop(ev[1], None)
                continue
            p, o, v = ev
            observe(p, o, v, "reader %d" % i)
            if p in last and o <= last[p]:
                bad["backwards"].append("reader %d partition %d: offset %d after %d" %
                                        (i, p, o, last[p]))
            last[p] = o
    if final is None:
        log = {}
        for r in reads:
            for ev in r:
                if ev[0] != "seek":
                    log[(ev[0], ev[1])] = ev[2]
    else:
        log = {}
        for p, o, v in final:
            observe(p, o, v, "final")
            if deleted(p, o):
                bad["below-start"].append("partition %d offset %d (%r): the log starts at %d" %
                                          (p, o, v, log_start[p]))
            if (p, o) in log:
                bad["backwards"].append("final read: partition %d offset %d twice" % (p, o))
            log[(p, o)] = v

    for p, o, v in acked:
        if deleted(p, o):
            continue
        if log.get((p, o)) != v:
            bad["lost"].append("partition %d offset %d: acknowledged %r, log has %r" %
                               (p, o, v, log.get((p, o))))
    where = defaultdict(list)
    for (p, o), v in log.items():
        where[v].append((p, o))
    if idempotent:
        for v, at in where.items():
            if len(at) > 1:
                bad["duplicate"].append("value %r at %s" % (v, sorted(at)))
    for v in failed:
        if v in where:
            bad["failed-stored"].append("value %r reported failed is at %s" % (v, where[v]))
    if values is not None:
        universe = {str(i) for i in range(values)}
        for v, at in where.items():
            if v not in universe:
                bad["phantom"].append("value %r at %s was never written" % (v, at))
            elif partitions and any(p != int(v) % partitions for p, _ in at):
                bad["phantom"].append("value %r at %s belongs to partition %d" %
                                      (v, at, int(v) % partitions))
        if complete:
            gone = {v for p, o, v in acked if deleted(p, o)}
            for v in sorted(universe - set(where) - gone, key=int):
                bad["missing"].append("value %r" % v)
    if ordered:
        by_part = defaultdict(list)
        for (p, o), v in log.items():
            by_part[p].append((o, v))
        for p, recs in sorted(by_part.items()):
            recs.sort()
            for (o1, v1), (o2, v2) in zip(recs, recs[1:]):
                if not (v1.isdigit() and v2.isdigit() and int(v1) < int(v2)):
                    bad["disorder"].append("partition %d: %r at %d then %r at %d" %
                                           (p, v1, o1, v2, o2))
                    break
    return dict(bad)


def main(argv):
    acked, failed, reads, final = [], [], [], None
    values = partitions = None
    idempotent = ordered = complete = False
    log_start = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--idempotent", "--ordered", "--complete"):
            idempotent |= a == "--idempotent"
            ordered |= a == "--ordered"
            complete |= a == "--complete"
            i += 1
            continue
        if i + 1 >= len(argv):
            raise SystemExit("%s needs a value" % a)
        arg = argv[i + 1]
        if a == "--acked":
            acked += [t for t in parse_triples(arg) if t[0] != "seek"]
        elif a == "--failed":
            failed += [l.strip() for l in open(arg) if l.strip()]
        elif a == "--read":
            reads.append(parse_triples(arg))
        elif a == "--final":
            final = [t for t in parse_triples(arg) if t[0] != "seek"]
        elif a == "--values":
            values = int(arg)
        elif a == "--partitions":
            partitions = int(arg)
        elif a == "--log-start":
            p, _, o = arg.partition("=")
            if not p.isdigit() or not o.isdigit():
                raise SystemExit("--log-start wants P=OFFSET, got " + arg)
            log_start[int(p)] = int(o)
        else:
            raise SystemExit("unknown argument " + a)
        i += 2
    if complete and values is None:
        raise SystemExit("--complete needs --values")
    bad = check(acked, failed, reads, final, values, partitions, idempotent, ordered, complete,
                log_start)
    stored = len(final) if final is not None else len({(t[0], t[1]) for r in reads for t in r
                                                        if t[0] != "seek"})
    for kind in sorted(bad):
        print("%s: %d, e.g. %s" % (kind, len(bad[kind]), "; ".join(bad[kind][:3])))
    print("history: %d acknowledged, %d failed, %d readers, %d records stored: %s" %
          (len(acked), len(failed), len(reads), stored,
           "ANOMALIES" if bad else "no anomalies"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
