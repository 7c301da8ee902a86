"""Appends hand-made batches to a stopped broker's partition segment, the way Raft's own
entries will sit in a replicated partition log (DESIGN.md §6): a NOOP is a control batch with
no records, covering one offset. For t_control_batches.sh.

  control_batches.py SEGMENT_FILE SPEC EXPECTED_FILE

SPEC is a comma-separated list of noop and data:N (a data batch of N records). The batches
continue the segment's offsets and leader epoch. EXPECTED_FILE gets "offset value" for every
record in the segment afterwards that a client must see (all data records, old and new)."""
import struct
import sys
import time


def crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


TABLE = crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def varint(n):  # zigzag varint
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def unvarint(buf, pos):
    shift = z = 0
    while True:
        b = buf[pos]
        pos += 1
        z |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (z >> 1) ^ -(z & 1), pos


def batch(base, epoch, attributes, records, ts):
    """records: list of values (bytes); attributes: int16."""
    body = bytearray()
    for i, v in enumerate(records):
        r = b"\x00" + varint(0) + varint(i) + varint(-1) + varint(len(v)) + v + varint(0)
        body += varint(len(r)) + r
    last_delta = max(len(records) - 1, 0)
    after_crc = struct.pack(">hiqqqhii", attributes, last_delta, ts, ts, -1, -1, -1,
                            len(records)) + bytes(body)
    head = struct.pack(">qiib", base, 4 + 1 + 4 + len(after_crc), epoch, 2)
    return head + struct.pack(">I", crc32c(after_crc)) + after_crc


def existing(seg):
    """[(offset, value)] of the data records in seg, the next offset and the last epoch."""
    data = open(seg, "rb").read()
    pos, out, nxt, epoch = 0, [], 0, 0
    while pos + 61 <= len(data):
        base, length, ep, magic, crc, attrs, last_delta = struct.unpack_from(">qiibIhi", data, pos)
        count = struct.unpack_from(">i", data, pos + 57)[0]
        assert magic == 2 and attrs & 0x07 == 0, "uncompressed magic-2 batches only"
        p = pos + 61
        if not attrs & 0x20:
            for _ in range(count):
                _, p = unvarint(data, p)          # record length
                p += 1                            # attributes
                _, p = unvarint(data, p)          # timestamp delta
                delta, p = unvarint(data, p)
                klen, p = unvarint(data, p)
                p += max(klen, 0)
                vlen, p = unvarint(data, p)
                out.append((base + delta, data[p:p + vlen].decode()))
                p += vlen
                hcount, p = unvarint(data, p)
                assert hcount == 0
        nxt, epoch = base + last_delta + 1, ep
        pos += 12 + length
    assert pos == len(data), "segment does not end on a batch boundary"
    return out, nxt, epoch


def main():
    seg, spec, expected = sys.argv[1], sys.argv[2], sys.argv[3]
    recs, off, epoch = existing(seg)
    ts = int(time.time() * 1000)
    out = bytearray()
    n = 0
    for item in spec.split(","):
        if item == "noop":
            out += batch(off, epoch, 0x20, [], ts)  # control, no records
            off += 1
        else:
            count = int(item.split(":")[1])
            vals = [("injected-%d" % (n + i)).encode() for i in range(count)]
            n += count
            out += batch(off, epoch, 0, vals, ts)
            recs += [(off + i, v.decode()) for i, v in enumerate(vals)]
            off += count
    with open(seg, "ab") as f:
        f.write(out)
    with open(expected, "w") as f:
        for o, v in recs:
            f.write("%d %s\n" % (o, v))
    print("appended %s: log end offset now %d, %d data records" % (spec, off, len(recs)))


if __name__ == "__main__":
    main()
