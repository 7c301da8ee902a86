"""A loopback TCP proxy between Kafka clients and the broker that reads the frames going by and
loses Produce responses on purpose, so that clients resend batches the broker already has.

  kproxy.py LISTEN_PORT BROKER_PORT EVENTS_FILE [--cut-every N] [--max-cuts M]
            [--freeze-file PATH]

  --cut-every N       the response to every N-th Produce request (counted over all connections)
                      is not forwarded: the proxy closes both sides of that connection instead,
                      once the broker has answered, so the batch is in the log but the client
                      never hears of it (at most M times; default: never)
  --freeze-file PATH  while PATH exists, responses are held instead of forwarded (until the next
                      response after PATH is gone); the first Produce response held is reported
                      as "holding ...". When the broker's side of the connection ends (kill -9),
                      what is held is lost with it, so the client resends batches the broker had
                      appended and answered.

The broker must advertise the proxy's port (advertised.listeners), or clients go around it.
Events go to EVENTS_FILE, one per line ("cut ...", "holding ...", "lost ..."). Runs until
killed.
"""
import os
import socket
import struct
import sys
import threading

PRODUCE = 0


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return buf


def read_frame(sock):
    hdr = read_exact(sock, 4)
    if hdr is None:
        return None
    (n,) = struct.unpack(">i", hdr)
    body = read_exact(sock, n)
    return None if body is None else hdr + body


class Proxy:
    def __init__(self, broker_port, events, cut_every, max_cuts, freeze_file):
        self.broker_port = broker_port
        self.events = events
        self.cut_every = cut_every
        self.max_cuts = max_cuts
        self.freeze_file = freeze_file
        self.lock = threading.Lock()
        self.produce_seen = 0
        self.cuts = 0

    def log(self, line):
        with self.lock:
            with open(self.events, "a") as f:
                f.write(line + "\n")

    def frozen(self):
        return self.freeze_file is not None and os.path.exists(self.freeze_file)

    def serve(self, client):
        try:
            broker = socket.create_connection(("127.0.0.1", self.broker_port), timeout=5)
            broker.settimeout(None)
        except OSError:
            client.close()
            return
        for s in (client, broker):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        keys = {}    # correlation id -> (api key, api version) of requests in flight
        doomed = set()  # correlation ids of Produce requests whose answer is to be lost
        state = {"closed": False}

        def close_both():
            state["closed"] = True
            for s in (client, broker):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        def upstream():
            while not state["closed"]:
                frame = read_frame(client)
                if frame is None:
                    break
                key, version, corr = struct.unpack_from(">hhi", frame, 4)
                keys[corr] = (key, version)
                if key == PRODUCE and self.cut_every:
                    with self.lock:
                        self.produce_seen += 1
                        if self.produce_seen % self.cut_every == 0 and self.cuts < self.max_cuts:
                            self.cuts += 1
                            doomed.add(corr)
                try:
                    broker.sendall(frame)
                except OSError:
                    break
            close_both()

        def downstream():
            held = []  # (api key, frame) of responses not forwarded while frozen
            while not state["closed"]:
                frame = read_frame(broker)
                if frame is None:
                    break
                (corr,) = struct.unpack_from(">i", frame, 4)
                key, version = keys.pop(corr, (-1, -1))
                if corr in doomed:
                    self.log("cut correlation_id=%d api_version=%d" % (corr, version))
                    break
                if self.frozen():
                    if key == PRODUCE and all(k != PRODUCE for k, _ in held):
                        self.log("holding produce response correlation_id=%d" % corr)
                    held.append((key, frame))
                    continue
                try:
                    for _, f in held:
                        client.sendall(f)
                    held = []
                    client.sendall(frame)
                except OSError:
                    break
            if held:
                self.log("lost %d held responses with the connection" % len(held))
            close_both()

        t = threading.Thread(target=upstream, daemon=True)
        t.start()
        downstream()
        t.join()
        client.close()
        broker.close()


def main():
    listen_port, broker_port, events = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    opts = {"--cut-every": 0, "--max-cuts": 1 << 30, "--freeze-file": None}
    args = sys.argv[4:]
    for i in range(0, len(args), 2):
        opts[args[i]] = args[i + 1]
    proxy = Proxy(broker_port, events, int(opts["--cut-every"]), int(opts["--max-cuts"]),
                  opts["--freeze-file"])
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", listen_port))
    ls.listen(64)
    open(events, "a").close()
    while True:
        c, _ = ls.accept()
        threading.Thread(target=proxy.serve, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
