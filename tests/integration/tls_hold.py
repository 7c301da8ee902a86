"""An old TLS connection across a certificate reload: connects to HOST:PORT trusting CA, sends
ApiVersions and reads the answer, prints the serial of the certificate it was shown, writes
READY; once GO exists (at most 30 s) it sends ApiVersions again on the same connection and must
get its answer. Prints "old_serial=SERIAL ok".

usage: tls_hold.py HOST PORT CA READY GO"""
import os
import socket
import ssl
import struct
import sys
import time

import kwire

host, port, ca, ready, go = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
ctx = ssl.create_default_context(cafile=ca)
sock = ctx.wrap_socket(socket.create_connection((host, port), timeout=10), server_hostname=host)


def api_versions(corr):
    sock.sendall(kwire.request(18, 0, b"", corr=corr))
    size = struct.unpack(">i", recv_exact(4))[0]
    body = recv_exact(size)
    got_corr, err = struct.unpack(">ih", body[:6])
    assert got_corr == corr and err == 0, (got_corr, err)


def recv_exact(n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            sys.exit("connection closed after %d of %d bytes" % (len(out), n))
        out += chunk
    return out


api_versions(1)
serial = sock.getpeercert()["serialNumber"]
open(ready, "w").write(serial)
deadline = time.time() + 30
while not os.path.exists(go):
    if time.time() > deadline:
        sys.exit("GO never came")
    time.sleep(0.05)
api_versions(2)
assert sock.getpeercert()["serialNumber"] == serial
print("old_serial=%s ok" % serial)
