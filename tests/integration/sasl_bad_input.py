"""Bad SASL input on a SASL_PLAINTEXT listener, sent raw: each case must get Kafka's error or a
closed connection, and the broker keeps serving (a good SCRAM-less request on a fresh
connection still gets its ApiVersions answer) without its memory growing.

Cases: a request other than ApiVersions/SaslHandshake before authentication; SaslAuthenticate
before a handshake; an unknown mechanism; a handshake twice; malformed and oversized SCRAM
client-first tokens (v1 flow and the raw v0 flow); a client-final with a wrong proof; garbage
bytes as a raw token.

usage: sasl_bad_input.py HOST PORT BROKER_PID ROUNDS
       sasl_bad_input.py --delay HOST PORT MS: failed attempts from one address are answered no
       sooner than MS, 2 x MS, 3 x MS later (connection.failed.authentication.delay.ms = MS)
       sasl_bad_input.py --reauth HOST PORT MS USER PASSWORD: with connections.max.reauth.ms =
       MS, SaslAuthenticate v1 gives that session lifetime; once it has passed a Metadata
       request closes the connection, while one that authenticated again keeps being served"""
import socket
import struct
import sys

from kwire import request, string

import time

if sys.argv[1] in ("--delay", "--reauth"):
    HOST, PORT, MS = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
else:
    HOST, PORT, PID, ROUNDS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])


def rss_kb():
    for line in open("/proc/%d/status" % PID):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def conn():
    s = socket.create_connection((HOST, PORT), timeout=5)
    return s


def read_frame(s):
    """A frame's body, or None if the broker closed the connection."""
    hdr = b""
    while len(hdr) < 4:
        chunk = s.recv(4 - len(hdr))
        if not chunk:
            return None
        hdr += chunk
    (n,) = struct.unpack(">i", hdr)
    body = b""
    while len(body) < n:
        chunk = s.recv(n - len(body))
        if not chunk:
            return None
        body += chunk
    return body


def closed(s):
    try:
        return read_frame(s) is None
    except (ConnectionResetError, socket.timeout):
        return True


def handshake(s, mech, version=1):
    s.sendall(request(17, version, string(mech)))
    body = read_frame(s)
    assert body is not None, "handshake answered by a close"
    (err,) = struct.unpack(">h", body[4:6])
    return err


def authenticate(s, token, version=1):
    s.sendall(request(36, version, struct.pack(">i", len(token)) + token))
    body = read_frame(s)
    if body is None:
        return None
    (err,) = struct.unpack(">h", body[4:6])
    return err


def api_versions_ok():
    s = conn()
    s.sendall(request(18, 0, b""))
    body = read_frame(s)
    s.close()
    return body is not None and struct.unpack(">h", body[4:6])[0] == 0


def case_metadata_first():
    s = conn()
    s.sendall(request(3, 1, struct.pack(">i", 0)))
    assert closed(s), "Metadata before authentication was answered"


def case_authenticate_first():
    s = conn()
    err = authenticate(s, b"n,,n=a,r=b")
    assert err == 34, "SaslAuthenticate before a handshake: %r, want ILLEGAL_SASL_STATE 34" % err
    s.close()


def case_unknown_mechanism():
    s = conn()
    assert handshake(s, "GSSAPI") == 33, "unknown mechanism: want UNSUPPORTED_SASL_MECHANISM"
    assert handshake(s, "X" * 5000) == 33, "oversized mechanism name"
    s.close()


def case_handshake_twice():
    s = conn()
    assert handshake(s, "SCRAM-SHA-256") == 0
    assert handshake(s, "SCRAM-SHA-256") == 34, "a second handshake mid-exchange"
    s.close()


def case_bad_tokens():
    for tok in (b"", b"garbage", b"p=tls-unique,,n=a,r=b", b"n,,n=a", b"n,,n=a=ZZ,r=b",
                b"n,,n=" + b"u" * 300 + b",r=b", b"n,,n=a,r=" + b"x" * 5000, b"\x00" * 64):
        s = conn()
        assert handshake(s, "SCRAM-SHA-256") == 0
        err = authenticate(s, tok)
        assert err == 58, "token %r: %r, want SASL_AUTHENTICATION_FAILED 58" % (tok[:20], err)
        s.close()
    s = conn()  # after a failure nothing more is served on the connection
    assert handshake(s, "SCRAM-SHA-256") == 0
    assert authenticate(s, b"garbage") == 58
    s.sendall(request(18, 0, b""))
    assert closed(s), "a request after a failed authentication was answered"


def case_wrong_proof():
    s = conn()
    assert handshake(s, "SCRAM-SHA-256") == 0
    s.sendall(request(36, 1, struct.pack(">i", 22) + b"n,,n=alice,r=abcdefgh0"))
    body = read_frame(s)
    assert body is not None and struct.unpack(">h", body[4:6])[0] == 0, "client-first refused"
    # the server-first carries r=<our nonce><its nonce>; answer it with a proof of 'A's
    i = body.find(b"r=abcdefgh0")
    nonce = body[i + 2:body.find(b",", i)]
    final = b"c=biws,r=" + nonce + b",p=" + b"A" * 43 + b"="
    assert authenticate(s, final) == 58, "a wrong proof was accepted"
    s.close()


def case_raw_garbage():
    s = conn()
    assert handshake(s, "SCRAM-SHA-256", version=0) == 0
    s.sendall(struct.pack(">i", len(b"garbage")) + b"garbage")
    assert closed(s), "a garbage raw token was answered"
    s = conn()
    assert handshake(s, "PLAIN", version=0) == 0
    tok = b"a\x00b\x00"  # no password
    s.sendall(struct.pack(">i", len(tok)) + tok)
    assert closed(s), "a malformed raw PLAIN token was answered"


def check_delay():
    for k in (1, 2, 3):
        s = conn()
        assert handshake(s, "PLAIN") == 0
        t0 = time.monotonic()
        err = authenticate(s, b"\x00nobody\x00wrong")
        took = time.monotonic() - t0
        s.close()
        assert err == 58, "PLAIN of an unknown user: %r" % err
        # (less 5 ms: the broker's timers count whole milliseconds from an earlier clock read)
        assert took >= (k * MS - 5) / 1000.0, "failure %d answered after %.3f s, want >= %.3f s" % (
            k, took, k * MS / 1000.0)
    print("ok: the 1st, 2nd and 3rd failure from one address were held >= %d, %d, %d ms" %
          (MS, 2 * MS, 3 * MS))


def plain_login(s, user, password):
    """SaslHandshake v1 + SaslAuthenticate v1 with PLAIN; returns the session lifetime."""
    assert handshake(s, "PLAIN") == 0
    tok = b"\x00" + user.encode() + b"\x00" + password.encode()
    s.sendall(request(36, 1, struct.pack(">i", len(tok)) + tok))
    body = read_frame(s)
    assert body is not None and struct.unpack(">h", body[4:6])[0] == 0, "PLAIN login refused"
    (lifetime,) = struct.unpack(">q", body[-8:])
    return lifetime


def metadata_ok(s):
    s.sendall(request(3, 1, struct.pack(">i", 0)))
    return not closed_after_request(s)


def closed_after_request(s):
    try:
        return read_frame(s) is None
    except (ConnectionResetError, socket.timeout):
        return True


def check_reauth(user, password):
    lapsed, renewed = conn(), conn()
    assert plain_login(lapsed, user, password) == MS, "session lifetime is not %d ms" % MS
    plain_login(renewed, user, password)
    assert metadata_ok(lapsed) and metadata_ok(renewed), "Metadata refused in a fresh session"
    time.sleep(MS / 2000.0)
    plain_login(renewed, user, password)  # re-authenticates halfway through its session
    time.sleep(MS / 2000.0 + 0.2)  # the first sessions have now lapsed (200 ms past)
    assert not metadata_ok(lapsed), "a lapsed session was served"
    assert metadata_ok(renewed), "a session that authenticated again was refused"
    print("ok: a session lapses after %d ms unless it authenticates again" % MS)


if sys.argv[1] == "--delay":
    check_delay()
    sys.exit(0)
if sys.argv[1] == "--reauth":
    check_reauth(sys.argv[5], sys.argv[6])
    sys.exit(0)

cases = [case_metadata_first, case_authenticate_first, case_unknown_mechanism,
         case_handshake_twice, case_bad_tokens, case_wrong_proof, case_raw_garbage]
before = None
for rnd in range(ROUNDS):
    for c in cases:
        c()
    assert api_versions_ok(), "the broker stopped answering after round %d" % rnd
    if rnd == 0:
        before = rss_kb()
after = rss_kb()
assert after - before < 4096, "RSS grew from %d to %d KiB over %d rounds" % (before, after, ROUNDS)
print("ok: %d rounds of %d bad-SASL cases; RSS %d -> %d KiB" % (ROUNDS, len(cases), before, after))
