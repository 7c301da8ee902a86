"""Minimal hand-rolled Kafka wire encoding for tests that must send what no client would:
malformed frames, bad CRCs, lying counts. Not a client library."""
import socket
import struct
import time


def _crc32c_table():
    poly = 0x82F63B78
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = (c >> 8) ^ _T[(c ^ b) & 0xFF]
    return c ^ 0xFFFFFFFF


def zigzag(n):
    return (n << 1) ^ (n >> 63)


def varint(n):
    n = zigzag(n)
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def uvarint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def string(s):
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode() if isinstance(s, str) else s
    return struct.pack(">h", len(b)) + b


def record(value, key=None, offset_delta=0, headers=()):
    body = b"\x00" + varint(0) + varint(offset_delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    body += varint(len(headers))
    for hk, hv in headers:
        body += varint(len(hk)) + hk + varint(len(hv)) + hv
    return varint(len(body)) + body


def batch(values, records_count=None, last_offset_delta=None, corrupt_crc=False, ts=None):
    """A magic-2 batch; records_count / last_offset_delta may be forced to lie."""
    recs = b"".join(record(v, offset_delta=i) for i, v in enumerate(values))
    n = len(values)
    ts = int(time.time() * 1000) if ts is None else ts
    after_crc = struct.pack(">hiqqqhii", 0,
                            n - 1 if last_offset_delta is None else last_offset_delta,
                            ts, ts, -1, -1, -1,
                            n if records_count is None else records_count) + recs
    crc = crc32c(after_crc)
    if corrupt_crc:
        crc ^= 0x1
    body = struct.pack(">ibI", -1, 2, crc) + after_crc   # leader epoch, magic, crc
    return struct.pack(">qi", 0, len(body)) + body


def request(api_key, version, body, corr=1, client_id="kwire", flexible=False):
    hdr = struct.pack(">hhi", api_key, version, corr) + string(client_id)
    if flexible:
        hdr += b"\x00"
    payload = hdr + body
    return struct.pack(">i", len(payload)) + payload


def produce_v3(topic, partition, records, acks=-1, timeout=5000, version=3):
    body = string(None) if version >= 3 else b""   # transactional_id exists from v3
    body += struct.pack(">hi", acks, timeout)
    body += struct.pack(">i", 1) + string(topic) + struct.pack(">i", 1)
    body += struct.pack(">ii", partition, len(records)) + records
    return body


class Conn:
    def __init__(self, host, port, timeout=10):
        self.s = socket.create_connection((host, port), timeout=timeout)

    def send(self, data):
        self.s.sendall(data)

    def recv_frame(self):
        hdr = self._read(4)
        if hdr is None:
            return None
        (n,) = struct.unpack(">i", hdr)
        return self._read(n)

    def _read(self, n):
        buf = b""
        while len(buf) < n:
            try:
                chunk = self.s.recv(n - len(buf))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            buf += chunk
        return buf

    def closed_by_peer(self, wait=5):
        """True if the broker closes the connection (EOF or reset) within `wait` seconds."""
        self.s.settimeout(wait)
        try:
            return self.s.recv(1) == b""
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False

    def close(self):
        self.s.close()


def parse_produce_v3_errors(frame):
    """Returns [(topic, partition, error_code, base_offset)] from a Produce v3 response."""
    off = 4  # correlation id
    out = []
    (nt,) = struct.unpack_from(">i", frame, off)
    off += 4
    for _ in range(nt):
        (ln,) = struct.unpack_from(">h", frame, off)
        off += 2
        name = frame[off:off + ln].decode()
        off += ln
        (np_,) = struct.unpack_from(">i", frame, off)
        off += 4
        for _ in range(np_):
            p, err, base, _lat = struct.unpack_from(">ihqq", frame, off)
            off += 22
            out.append((name, p, err, base))
    return out
