"""Hostile input on a TLS listener: garbage instead of a ClientHello, a Kafka request in the
clear, half a ClientHello, clients that connect and send nothing, an oversized TLS record and
an oversized Kafka frame after a good handshake. Each connection must be closed by the broker
(silent ones within the handshake deadline), a healthy TLS connection opened first keeps being
answered, and the broker's RSS does not grow over ROUNDS rounds.

usage: tls_bad_input.py HOST TLS_PORT CA BROKER_PID HANDSHAKE_TIMEOUT_MS ROUNDS"""
import os
import socket
import ssl
import struct
import sys
import time

import kwire

host, port, ca, pid = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
hs_timeout = int(sys.argv[5]) / 1000.0
rounds = int(sys.argv[6])
ctx = ssl.create_default_context(cafile=ca)
failures = []


def check(cond, what):
    if not cond:
        print("FAIL " + what)
        failures.append(what)


def rss_kb():
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def closed_by_peer(sock, within):
    """True if the broker closes sock (EOF or reset) within `within` seconds."""
    sock.settimeout(within)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
        return True
    except socket.timeout:
        return False


def tls_conn():
    return ctx.wrap_socket(socket.create_connection((host, port), timeout=10),
                           server_hostname=host)


def api_versions(sock, corr):
    sock.sendall(kwire.request(18, 0, b"", corr=corr))
    hdr = b""
    while len(hdr) < 4:
        chunk = sock.recv(4 - len(hdr))
        if not chunk:
            return False
        hdr += chunk
    size = struct.unpack(">i", hdr)[0]
    body = b""
    while len(body) < size:
        chunk = sock.recv(size - len(body))
        if not chunk:
            return False
        body += chunk
    return struct.unpack(">ih", body[:6]) == (corr, 0)


def raw(payload):
    s = socket.create_connection((host, port), timeout=10)
    if payload:
        s.sendall(payload)
    return s


HELLO_HALF = bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03])
KAFKA = kwire.request(18, 0, b"")
GARBAGE = bytes((i * 37 + 11) % 256 for i in range(4096))


def one_round(r, budget):
    # garbage, a request in the clear, an HTTP request: refused at once
    for what, payload in (("garbage", GARBAGE), ("plaintext Kafka", KAFKA),
                          ("http", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")):
        s = raw(payload)
        check(closed_by_peer(s, budget), "round %d: %s closed" % (r, what))
        s.close()
    # half a ClientHello, and a client that sends nothing: closed at the handshake deadline
    silent = [raw(HELLO_HALF), raw(b"")]
    t0 = time.time()
    for s in silent:
        check(closed_by_peer(s, hs_timeout + budget), "round %d: stalled handshake closed" % r)
        s.close()
    check(time.time() - t0 >= hs_timeout * 0.8, "round %d: closed before the deadline" % r)
    # after a good handshake: an oversized TLS record header, then an oversized Kafka frame
    s = tls_conn()
    os.write(s.fileno(), bytes([0x17, 0x03, 0x03, 0xff, 0xff]) + bytes(64))
    check(closed_by_peer(s, budget), "round %d: oversized TLS record closed" % r)
    s.close()
    s = tls_conn()
    s.sendall(struct.pack(">i", 0x7ffffff0) + b"x" * 100)
    check(closed_by_peer(s, budget), "round %d: oversized frame closed" % r)
    s.close()


healthy = tls_conn()
check(api_versions(healthy, 1), "healthy TLS connection answers")
# warm-up: the first rounds settle allocator pools and OpenSSL's lazily made tables
for r in range(3):
    one_round(r, 5.0)
rss_before = rss_kb()
for r in range(3, 3 + rounds):
    one_round(r, 5.0)
    check(api_versions(healthy, 100 + r), "round %d: the healthy connection still answers" % r)
rss_after = rss_kb()
print("rss before=%d KiB after=%d KiB over %d rounds (%d hostile connections)" %
      (rss_before, rss_after, rounds, rounds * 7))
check(rss_after - rss_before < 2048, "RSS growth under 2 MiB (%d -> %d KiB)" % (rss_before, rss_after))
healthy.close()
if failures:
    sys.exit("%d checks failed" % len(failures))
print("ok: every hostile TLS connection was closed, the broker kept serving")
