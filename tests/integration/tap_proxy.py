"""A recording TCP relay between cluster nodes, for t_cluster_tls.sh: what a wiretap on the
inter-broker network would see.

  tap_proxy.py relay OUT_DIR LISTEN_PORT:TARGET_PORT ...
      Each LISTEN_PORT (127.0.0.1) forwards to 127.0.0.1:TARGET_PORT; the nodes'
      controller.quorum.voters name the LISTEN_PORTs, so every inter-broker connection to a
      voter passes here. The bytes of each direction of each connection are appended, as they
      pass, to a file of their own in OUT_DIR (<listen>-<n>-up: dialer to node; -down: back).
      Prints "ready" once every port listens; runs until killed.

  tap_proxy.py scan OUT_DIR MARKER
      Reads every file of OUT_DIR and prints one line:
        bytes=N streams=N tls_streams=N frame_streams=N other_streams=N marker_hits=N
      A TLS stream is one that parses, from its first byte to its end (a torn last record
      allowed), as TLS records (content type 20-23, version 3.1-3.3, length <= 2^14 + 2048);
      a frame stream one that parses as the transport's plaintext frames (4-byte size, then
      the magic byte 0xA7: src/replication/rpc.h). marker_hits counts the occurrences of
      MARKER in all the bytes."""
import os
import socket
import struct
import sys
import threading

MAGIC = 0xA7


def pump(src, dst, path):
    try:
        with open(path, "ab", buffering=0) as out:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                out.write(data)
                dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


def serve(lsock, listen, target, out_dir):
    n = 0
    while True:
        client, _ = lsock.accept()
        n += 1
        try:
            upstream = socket.create_connection(("127.0.0.1", target), timeout=5)
            upstream.settimeout(None)
        except OSError:
            client.close()
            continue
        base = os.path.join(out_dir, "%d-%d" % (listen, n))
        threading.Thread(target=pump, args=(client, upstream, base + "-up"), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client, base + "-down"), daemon=True).start()


def relay(out_dir, specs):
    os.makedirs(out_dir, exist_ok=True)
    threads = []
    for spec in specs:
        listen, target = (int(x) for x in spec.split(":"))
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", listen))
        s.listen(64)
        t = threading.Thread(target=serve, args=(s, listen, target, out_dir), daemon=True)
        t.start()
        threads.append(t)
    print("ready", flush=True)
    for t in threads:
        t.join()


def parses_as_tls(data):
    off = 0
    while len(data) - off >= 5:
        ctype, major, minor, length = struct.unpack(">BBBH", data[off:off + 5])
        if ctype not in (20, 21, 22, 23) or major != 3 or minor not in (1, 2, 3) or \
                length > 16384 + 2048:
            return False
        off += 5 + length
    return True


def parses_as_frames(data):
    off = 0
    if len(data) < 5:
        return False
    while len(data) - off >= 5:
        size = struct.unpack(">I", data[off:off + 4])[0]
        if data[off + 4] != MAGIC or size > 100 << 20:
            return False
        off += 4 + size
    return True


def scan(out_dir, marker):
    total = streams = tls = frames = other = hits = 0
    for name in sorted(os.listdir(out_dir)):
        with open(os.path.join(out_dir, name), "rb") as f:
            data = f.read()
        if not data:
            continue
        streams += 1
        total += len(data)
        hits += data.count(marker.encode())
        if parses_as_tls(data):
            tls += 1
        elif parses_as_frames(data):
            frames += 1
        else:
            other += 1
    print("bytes=%d streams=%d tls_streams=%d frame_streams=%d other_streams=%d marker_hits=%d"
          % (total, streams, tls, frames, other, hits))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "relay":
        relay(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == "scan":
        scan(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
