"""Userspace TCP proxies between cluster nodes, for t_cluster_faults.sh.

  cluster_proxy.py CONTROL_FILE LISTEN_PORT:TARGET_PORT:NODE ...

Each LISTEN_PORT (127.0.0.1) forwards to TARGET_PORT, the cluster listener of node NODE; the
nodes' controller.quorum.voters name the proxies, so every inter-broker connection to NODE goes
through its proxy. The first frame of such a connection is the transport's HELLO, whose header
names the dialing node (replication/rpc.h: 4-byte size, magic, version, type, flags, i32 from, i32 to).

CONTROL_FILE holds the isolated node ids (whitespace separated; empty = healed), read every
20 ms. A node is isolated when every connection from it or to it is cut: the open ones are
reset when the file changes, and new ones are accepted but blackholed (nothing is forwarded,
the dialer's handshake times out) until it heals. Prints "ready" once every port listens; runs
until killed."""
import socket
import struct
import sys
import threading
import time

lock = threading.Lock()
isolated = set()
conns = []  # [from, to, client socket, upstream socket or None]


def read_control(path):
    try:
        with open(path) as f:
            return {int(x) for x in f.read().split()}
    except (OSError, ValueError):
        return set()


def close(s):
    if s is None:
        return
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass


def pump(src, dst, entry):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    close(src)
    close(dst)
    with lock:
        if entry in conns:
            conns.remove(entry)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        d = s.recv(n - len(buf))
        if not d:
            return None
        buf += d
    return buf


def handle(client, target_port, node):
    try:
        head = recv_exact(client, 12)
    except OSError:
        head = None
    if head is None:
        close(client)
        return
    (frm,) = struct.unpack_from(">i", head, 8)
    with lock:
        cut = frm in isolated or node in isolated
    if cut:  # blackhole: swallow until the dialer gives up
        try:
            while client.recv(65536):
                pass
        except OSError:
            pass
        close(client)
        return
    try:
        up = socket.create_connection(("127.0.0.1", target_port), timeout=2)
        up.settimeout(None)
        up.sendall(head)
    except OSError:
        close(client)
        return
    entry = [frm, node, client, up]
    with lock:
        conns.append(entry)
    threading.Thread(target=pump, args=(client, up, entry), daemon=True).start()
    threading.Thread(target=pump, args=(up, client, entry), daemon=True).start()


def serve(listener, target_port, node):
    while True:
        c, _ = listener.accept()
        threading.Thread(target=handle, args=(c, target_port, node), daemon=True).start()


def main():
    global isolated
    control = sys.argv[1]
    for spec in sys.argv[2:]:
        lp, tp, node = (int(x) for x in spec.split(":"))
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", lp))
        ls.listen(64)
        threading.Thread(target=serve, args=(ls, tp, node), daemon=True).start()
    print("ready", flush=True)
    while True:
        now = read_control(control)
        if now != isolated:
            with lock:
                isolated = now
                cut = [e for e in conns if e[0] in now or e[1] in now]
                for e in cut:
                    conns.remove(e)
            for e in cut:
                close(e[2])
                close(e[3])
            print("isolated %s (%d connections cut)" % (sorted(now), len(cut)), flush=True)
        time.sleep(0.02)


if __name__ == "__main__":
    main()
