"""InitProducerId and idempotent Produce over the raw wire (kwire.py), for t_idempotence_wire.sh.

  idem_wire.py PORT TOPIC STATE_FILE phase1|phase2

phase1 checks InitProducerId (every version, KIP-360 re-init, transactional ids, bad pairs) and
the produce rules (duplicates answered with the original offset under acks=1, acks=all and
acks=0, gaps, epochs, invalid fields), then writes what phase2 needs to STATE_FILE. phase2 runs
after the broker restarted (it may run again after another restart: it appends nothing):
producer ids keep growing, the old id still bumps, the last batches are still recognised as
duplicates and the sequence and epoch checks still hold."""
import json
import struct
import sys
import time

import kwire

INIT_PRODUCER_ID = 22
NONE, NOT_COORDINATOR, INVALID_REQUEST = 0, 16, 42
OUT_OF_ORDER, INVALID_EPOCH, INVALID_RECORD = 45, 47, 87


def init_producer_id(conn, version, txn_id=None, pid=-1, epoch=-1, corr=7):
    flex = version >= 2
    if flex:
        body = kwire.uvarint(0) if txn_id is None else kwire.uvarint(len(txn_id) + 1) + txn_id
    else:
        body = kwire.string(txn_id)
    body += struct.pack(">i", 60000 if txn_id is not None else -1)
    if version >= 3:
        body += struct.pack(">qh", pid, epoch)
    if flex:
        body += b"\x00"
    conn.send(kwire.request(INIT_PRODUCER_ID, version, body, corr=corr, flexible=flex))
    frame = conn.recv_frame()
    assert frame is not None, "no InitProducerId v%d response" % version
    (got_corr,) = struct.unpack_from(">i", frame, 0)
    assert got_corr == corr
    off = 5 if flex else 4  # response header v1 has a tag section
    _throttle, err, rpid, repoch = struct.unpack_from(">ihqh", frame, off)
    rest = frame[off + 16:]
    assert rest == (b"\x00" if flex else b""), "v%d trailing bytes %r" % (version, rest)
    return err, rpid, repoch


def ibatch(n, pid, epoch, seq, tag):
    recs = b"".join(kwire.record(b"%s-%d" % (tag, i), offset_delta=i) for i in range(n))
    ts = int(time.time() * 1000)
    after = struct.pack(">hiqqqhii", 0, n - 1, ts, ts, pid, epoch, seq, n) + recs
    body = struct.pack(">ibI", -1, 2, kwire.crc32c(after)) + after
    return struct.pack(">qi", 0, len(body)) + body


def produce_request_bytes(topic, batch, acks):
    return kwire.request(0, 7, kwire.produce_v3(topic, 0, batch, acks=acks, version=7))


def produce(conn, topic, batch, acks=-1):
    conn.send(produce_request_bytes(topic, batch, acks))
    if acks == 0:
        return None
    return read_produce_response(conn)


def read_produce_response(conn):
    frame = conn.recv_frame()
    assert frame is not None
    # Produce v7: per partition index, error, base offset, log append time, log start offset
    off = 4
    (nt,) = struct.unpack_from(">i", frame, off)
    off += 4
    (ln,) = struct.unpack_from(">h", frame, off)
    off += 2 + ln + 4
    _p, err, base, _lat, _lso = struct.unpack_from(">ihqqq", frame, off)
    return err, base


def expect(got, want, what):
    assert got == want, "%s: got %r, want %r" % (what, got, want)
    print("ok: %s -> %r" % (what, got))


def phase1(port, topic, state_path):
    c = kwire.Conn("127.0.0.1", port)
    pids = []
    for v in range(5):
        err, pid, epoch = init_producer_id(c, v)
        expect((err, epoch), (NONE, 0), "InitProducerId v%d for an idempotent producer" % v)
        assert not pids or pid > pids[-1], "producer ids must grow: %r then %d" % (pids, pid)
        pids.append(pid)
    pid = pids[-1]
    expect(init_producer_id(c, 3, pid=pid, epoch=0), (NONE, pid, 1), "KIP-360 re-init bumps")
    expect(init_producer_id(c, 4, pid=pid, epoch=1), (NONE, pid, 2), "and again")
    err, fresh, epoch = init_producer_id(c, 4, pid=10 ** 15, epoch=3)
    expect((err, epoch, fresh > pid), (NONE, 0, True), "an id never handed out gets a fresh one")
    err, rotated, epoch = init_producer_id(c, 3, pid=pid, epoch=32766)
    expect((err, epoch, rotated not in (pid, fresh)), (NONE, 0, True),
           "an exhausted epoch gets a fresh id")
    expect(init_producer_id(c, 1, txn_id=b"txn-a"), (NOT_COORDINATOR, -1, -1),
           "a transactional id (no transaction coordinator here)")
    expect(init_producer_id(c, 4, txn_id=b"txn-a", pid=pid, epoch=2), (NOT_COORDINATOR, -1, -1),
           "a transactional id, v4")
    expect(init_producer_id(c, 2, txn_id=b""), (INVALID_REQUEST, -1, -1), "an empty one")
    expect(init_producer_id(c, 3, pid=pid, epoch=-1), (INVALID_REQUEST, -1, -1),
           "an id without an epoch")
    expect(init_producer_id(c, 3, pid=-1, epoch=4), (INVALID_REQUEST, -1, -1),
           "an epoch without an id")

    # the produce rules, producer `pid` at epoch 2
    expect(produce(c, topic, ibatch(3, pid, 2, 0, b"a")), (NONE, 0), "first batch")
    expect(produce(c, topic, ibatch(3, pid, 2, 0, b"a")), (NONE, 0), "its duplicate, acks=all")
    expect(produce(c, topic, ibatch(3, pid, 2, 0, b"a"), acks=1), (NONE, 0), "again, acks=1")
    expect(produce(c, topic, ibatch(2, pid, 2, 3, b"b")), (NONE, 3), "the next batch")
    produce(c, topic, ibatch(2, pid, 2, 3, b"b"), acks=0)  # a duplicate nobody hears about
    expect(produce(c, topic, ibatch(2, pid, 2, 3, b"b"), acks=1), (NONE, 3), "duplicate of it")
    expect(produce(c, topic, ibatch(1, pid, 2, 6, b"c"))[0], OUT_OF_ORDER, "a gap")
    expect(produce(c, topic, ibatch(1, pid, 2, 4, b"c"))[0], OUT_OF_ORDER, "an overlap")
    expect(produce(c, topic, ibatch(1, pid, 3, 5, b"c"))[0], OUT_OF_ORDER,
           "a new epoch not starting at 0")
    expect(produce(c, topic, ibatch(1, pid, 1, 5, b"c"))[0], INVALID_EPOCH, "an older epoch")
    expect(produce(c, topic, ibatch(1, pid, -1, 5, b"c"))[0], INVALID_RECORD, "no epoch")
    expect(produce(c, topic, ibatch(1, pid, 2, -1, b"c"))[0], INVALID_RECORD, "no sequence")
    expect(produce(c, topic, ibatch(4, pid, 2, 5, b"d")), (NONE, 5), "in sequence again")
    expect(produce(c, topic, ibatch(1, pid, 3, 0, b"e")), (NONE, 9), "a new epoch from 0")
    expect(produce(c, topic, ibatch(4, pid, 2, 9, b"f"))[0], INVALID_EPOCH, "the old epoch")
    # two more producers interleaved, and a producer-less batch
    other = pids[0]
    expect(produce(c, topic, ibatch(2, other, 0, 7, b"g")), (NONE, 10), "an unknown producer")
    expect(produce(c, topic, ibatch(1, pid, 3, 1, b"h")), (NONE, 12), "first producer again")
    expect(produce(c, topic, kwire.batch([b"plain"])), (NONE, 13), "no producer id")
    expect(produce(c, topic, ibatch(2, other, 0, 7, b"g")), (NONE, 10), "old duplicate")
    c.close()
    json.dump({"pids": pids + [fresh, rotated], "pid": pid, "other": other},
              open(state_path, "w"))


def phase2(port, topic, state_path):
    st = json.load(open(state_path))
    c = kwire.Conn("127.0.0.1", port)
    err, pid, epoch = init_producer_id(c, 4)
    expect((err, epoch, pid > max(st["pids"])), (NONE, 0, True),
           "after a restart, ids start past every id handed out before")
    expect(init_producer_id(c, 3, pid=st["pid"], epoch=3), (NONE, st["pid"], 4),
           "an id from before the restart still bumps")
    expect(produce(c, topic, ibatch(1, st["pid"], 3, 1, b"h")), (NONE, 12),
           "the last batch is still a duplicate")
    expect(produce(c, topic, ibatch(2, st["other"], 0, 7, b"g")), (NONE, 10),
           "and the other producer's")
    expect(produce(c, topic, ibatch(1, st["pid"], 3, 4, b"j"))[0], OUT_OF_ORDER, "a gap")
    expect(produce(c, topic, ibatch(1, st["pid"], 2, 9, b"j"))[0], INVALID_EPOCH, "an old epoch")
    c.close()
    st["pids"].append(pid)
    json.dump(st, open(state_path, "w"))


if __name__ == "__main__":
    port, topic, state, phase = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    (phase1 if phase == "phase1" else phase2)(port, topic, state)
