"""A process that knows a cluster's id and its nodes' cluster listeners, but not the inter-broker
secret (cluster.secret.file), tries to take part: it speaks the transport's own frames
(src/replication/rpc.h), written here from that description. Each attempt must be refused
with an ERROR frame of code 5 (RPC_ERR_AUTH) and a closed connection:
  1. a HELLO without a nonce (as a node without a secret sends it);
  2. a HELLO with a nonce, then an AUTH with a guessed proof;
  3. a HELLO with a nonce, then a VOTE for the metadata group at a far higher term, in place
     of the AUTH (to take over the quorum);
  4. a HELLO with a nonce, then an APPEND of one entry for the metadata group;
  5. a QUORUM_DESCRIBE without a nonce.
Prints one line per attempt.

With --tls-listener the nodes' cluster listeners speak TLS (cluster.ssl.*) and this process,
in plaintext, must get nothing back: no frame at all (at most a TLS alert record) and a closed
connection, for each of the same five attempts.

usage: fake_peer.py [--tls-listener] CLUSTER_ID FROM_NODE TO_NODE:HOST:PORT..."""
import os
import socket
import struct
import sys

from kwire import crc32c, uvarint  # tests/integration/kwire.py

MAGIC, VERSION = 0xA7, 1
HELLO, HELLO_OK, ERROR, RAFT = 1, 2, 3, 4
QUORUM_DESCRIBE, AUTH = 10, 12
RAFT_MSG_APPEND, RAFT_MSG_VOTE = 1, 7
ERR_AUTH = 5


def frame(ftype, frm, to, body):
    head = struct.pack(">BBBBii", MAGIC, VERSION, ftype, 0, frm, to)
    crc = crc32c(head + body)
    whole = head + struct.pack(">I", crc) + body
    return struct.pack(">I", len(whole)) + whole


def hello(frm, to, cluster_id, nonce=None):
    cid = cluster_id.encode()
    return frame(HELLO, frm, to, struct.pack(">HH", VERSION, len(cid)) + cid + (nonce or b""))


def raft_frame(frm, to, mtype, term, entries=()):
    topic = b"__cluster_metadata"
    body = uvarint(1) + bytes([len(topic)]) + topic + struct.pack(">I", 1)
    body += uvarint(0) + struct.pack(">iBB", 0, mtype, 0)
    body += struct.pack(">qqqqq", term, 1000, term, 1000, 1000 + len(entries))
    if mtype == RAFT_MSG_APPEND:
        body += struct.pack(">I", len(entries))
        for i, payload in enumerate(entries):
            body += struct.pack(">qqqBI", 1001 + i, 1001 + i, term, 0, len(payload)) + payload
    return frame(RAFT, frm, to, body)


def read_all(s):
    """every byte until the node closes the connection (bounded by the socket timeout)"""
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            raise AssertionError("the node kept the connection open")
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return data


def read_frames(s):
    """every frame until the node closes the connection (bounded by the socket timeout)"""
    data = read_all(s)
    frames = []
    while len(data) >= 4:
        n = struct.unpack(">I", data[:4])[0]
        frames.append(data[4:4 + n])
        data = data[4 + n:]
    return frames


def attempt(addr, payload):
    s = socket.create_connection(addr, timeout=5)
    s.sendall(payload)
    frames = read_frames(s)
    s.close()
    return frames


def refused_auth(frames):
    last = frames[-1] if frames else b""
    return len(last) >= 18 and last[2] == ERROR and struct.unpack(">h", last[16:18])[0] == ERR_AUTH


tls_listener = len(sys.argv) > 1 and sys.argv[1] == "--tls-listener"
if tls_listener:
    del sys.argv[1]


def attempt_tls_listener(addr, payload):
    """a plaintext attempt on a TLS listener: the bytes the node sent back"""
    s = socket.create_connection(addr, timeout=5)
    try:
        s.sendall(payload)
    except (BrokenPipeError, ConnectionResetError):
        pass  # closed already: nothing came back
    data = read_all(s)
    s.close()
    return data


cluster_id, me = sys.argv[1], int(sys.argv[2])
for target in sys.argv[3:]:
    node, host, port = target.split(":")
    node, addr = int(node), (host, int(port))
    nonce = os.urandom(16)
    tries = {
        "hello without a nonce": hello(me, node, cluster_id),
        "a guessed AUTH proof": hello(me, node, cluster_id, nonce) +
        frame(AUTH, me, node, os.urandom(32)),
        "a VOTE at term 1000000 instead of AUTH": hello(me, node, cluster_id, nonce) +
        raft_frame(me, node, RAFT_MSG_VOTE, 1000000),
        "an APPEND instead of AUTH": hello(me, node, cluster_id, nonce) +
        raft_frame(me, node, RAFT_MSG_APPEND, 1000000, [b"x" * 100]),
        "QUORUM_DESCRIBE without a nonce": frame(QUORUM_DESCRIBE, me, 0, struct.pack(">H", VERSION)),
    }
    for what, payload in tries.items():
        if tls_listener:
            data = attempt_tls_listener(addr, payload)
            # nothing, or one TLS alert record (content type 21): never a frame of the transport
            assert data == b"" or (data[0] == 21 and len(data) <= 7), (node, what, data[:64])
            print("node %d: %s: closed at the TLS handshake (%d bytes back)" % (node, what,
                                                                              len(data)))
            continue
        frames = attempt(addr, payload)
        assert refused_auth(frames), (node, what, frames)
        if "instead of AUTH" in what or "guessed" in what:
            assert frames[0][2] == HELLO_OK, (node, what, "no HELLO_OK first")
        print("node %d: %s: refused (RPC_ERR_AUTH), connection closed" % (node, what))
