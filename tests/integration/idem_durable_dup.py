"""A duplicate must not be acknowledged under acks=all before its original is durable.

  idem_durable_dup.py PORT TOPIC DELAY_S

Run while every fdatasync of the broker takes DELAY_S longer (strace fault injection): sends a
batch with acks=all, then its duplicate with acks=all on a second connection and with acks=1
on a third. The acks=1 duplicate is answered at once with the original's offset; the acks=all
duplicate only after the original's sync, at the original's offset."""
import sys
import time

import kwire
from idem_wire import ibatch, produce_request_bytes, read_produce_response

port, topic, delay = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
conns = [kwire.Conn("127.0.0.1", port, timeout=30) for _ in range(3)]
batch = ibatch(3, 4242, 0, 0, b"durable")
t0 = time.monotonic()
conns[0].send(produce_request_bytes(topic, batch, -1))
time.sleep(0.2)  # appended by now; its sync is held up
conns[1].send(produce_request_bytes(topic, batch, -1))
conns[2].send(produce_request_bytes(topic, batch, 1))
err1, off1 = read_produce_response(conns[2])
t_acks1 = time.monotonic() - t0
err_all, off_all = read_produce_response(conns[1])
t_dup = time.monotonic() - t0
err0, off0 = read_produce_response(conns[0])
t_orig = time.monotonic() - t0
print("original (acks=all) answered after %.2f s at offset %d; duplicate acks=1 after %.2f s at "
      "%d; duplicate acks=all after %.2f s at %d" % (t_orig, off0, t_acks1, off1, t_dup, off_all))
assert (err0, err1, err_all) == (0, 0, 0), (err0, err1, err_all)
assert off0 == off1 == off_all == 1, "a duplicate got another offset"
assert t_acks1 < delay / 2, "the acks=1 duplicate should not wait for the sync"
assert t_orig >= delay * 0.8, "the fsync delay did not take effect (%.2f s)" % t_orig
assert t_dup >= delay * 0.8, "the acks=all duplicate was answered before the original was durable"
print("ok: the acks=all duplicate waited for the sync, the acks=1 one did not")
