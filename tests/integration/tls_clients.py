"""confluent-kafka (librdkafka) and kafka-python over TLS and/or SASL: produce records and consume
them back in a consumer group (so FindCoordinator must name this listener's address), or, with
--expect fail, check that the client fails with its normal error.

usage: tls_clients.py CLIENT BOOTSTRAP TOPIC [--ca CA [--cert CERT --key KEY]] [--plaintext]
                      [--sasl MECHANISM --user NAME --password PW] [--expect ok|fail]
CLIENT: confluent | kafka-python. --plaintext: connect without TLS (for the refusal checks, and
SASL_PLAINTEXT). --sasl: authenticate with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (SASL_SSL with
--ca, else SASL_PLAINTEXT)."""
import argparse
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("client", choices=["confluent", "kafka-python"])
ap.add_argument("bootstrap")
ap.add_argument("topic")
ap.add_argument("--ca")
ap.add_argument("--cert")
ap.add_argument("--key")
ap.add_argument("--expect", default="ok", choices=["ok", "fail"])
ap.add_argument("--plaintext", action="store_true")
ap.add_argument("--sasl")
ap.add_argument("--user")
ap.add_argument("--password")
args = ap.parse_args()
N = 200


def transport():
    t = "plaintext" if args.plaintext else "TLS"
    return t + (" with SASL " + args.sasl if args.sasl else "")


def values():
    return [("%s-%d-" % (args.client, i)).encode() + bytes(i % 251 for _ in range(i * 7))
            for i in range(N)]


def confluent_conf():
    c = {"bootstrap.servers": args.bootstrap}
    if not args.plaintext:
        c["security.protocol"] = "ssl"
        c["ssl.ca.location"] = args.ca
        if args.cert:
            c["ssl.certificate.location"] = args.cert
            c["ssl.key.location"] = args.key
    if args.sasl:
        c["security.protocol"] = "sasl_plaintext" if args.plaintext else "sasl_ssl"
        c.update({"sasl.mechanisms": args.sasl, "sasl.username": args.user,
                  "sasl.password": args.password})
    return c


def run_confluent():
    from confluent_kafka import Consumer, KafkaException, Producer
    from confluent_kafka.admin import AdminClient
    if args.expect == "fail":
        errors = []
        conf = confluent_conf()
        conf["error_cb"] = lambda e: errors.append(e)
        admin = AdminClient(conf)
        # the refusal reaches error_cb as soon as the connection fails: wait for it (at most
        # 10 s), then Metadata must fail too
        deadline = time.monotonic() + 10
        while not errors and time.monotonic() < deadline:
            admin.poll(0.1)
        if not errors:
            sys.exit("confluent: no connection error reported within 10 s")
        try:
            admin.list_topics(timeout=1)
        except KafkaException as e:
            print("ok: confluent refused as expected: %s; errors: %s" % (e, errors[:2]))
            return
        sys.exit("confluent: metadata succeeded but should have failed")
    # Metadata names this listener's address for the broker
    md = AdminClient(confluent_conf()).list_topics(timeout=10)
    brokers = ["%s:%d" % (b.host, b.port) for b in md.brokers.values()]
    assert brokers == [args.bootstrap], "advertised %s, bootstrapped on %s" % (brokers, args.bootstrap)
    p = Producer(dict(confluent_conf(), **{"acks": "all", "linger.ms": 5}))
    failed = []
    for v in values():
        p.produce(args.topic, v, on_delivery=lambda err, msg: err and failed.append(err))
        p.poll(0)
    assert p.flush(30) == 0 and not failed, failed
    c = Consumer(dict(confluent_conf(), **{"group.id": "g-" + args.topic,
                                            "auto.offset.reset": "earliest"}))
    c.subscribe([args.topic])
    got = []
    deadline = time.time() + 30
    while len(got) < N and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        assert not m.error(), m.error()
        got.append(m.value())
    c.commit(asynchronous=False)
    c.close()
    assert got == values(), "consumed %d of %d (or different bytes)" % (len(got), N)
    print("ok: confluent produced and consumed %d records in a group over %s" % (N, transport()))


def kp_conf():
    c = {"bootstrap_servers": args.bootstrap}
    if not args.plaintext:
        c.update(security_protocol="SSL", ssl_cafile=args.ca, ssl_check_hostname=True)
        if args.cert:
            c.update(ssl_certfile=args.cert, ssl_keyfile=args.key)
    if args.sasl:
        c.update(security_protocol="SASL_PLAINTEXT" if args.plaintext else "SASL_SSL",
                 sasl_mechanism=args.sasl, sasl_plain_username=args.user,
                 sasl_plain_password=args.password)
    return c


def run_kafka_python():
    import ssl
    import kafka
    from kafka.errors import KafkaError, NoBrokersAvailable
    if args.expect == "fail":
        try:
            # api_version given: kafka-python 2.0.2's version probe trips over a connection the
            # broker closes (ValueError in check_version) instead of reporting it
            p = kafka.KafkaProducer(request_timeout_ms=1500, api_version=(2, 5, 0),
                                    max_block_ms=1500, **kp_conf())
            p.send(args.topic, b"x").get(timeout=5)
        except (NoBrokersAvailable, KafkaError, ssl.SSLError, ConnectionError) as e:
            # kafka-python lets a failed certificate check through as ssl.SSLCertVerificationError
            print("ok: kafka-python refused as expected: %r" % e)
            return
        sys.exit("kafka-python: produce succeeded but should have failed")
    p = kafka.KafkaProducer(acks="all", **kp_conf())
    futures = [p.send(args.topic, v) for v in values()]
    p.flush(30)
    for f in futures:
        f.get(timeout=10)
    p.close()
    c = kafka.KafkaConsumer(args.topic, group_id="g-" + args.topic, auto_offset_reset="earliest",
                            enable_auto_commit=False, consumer_timeout_ms=20000, **kp_conf())
    got = []
    for m in c:
        got.append(m.value)
        if len(got) == N:
            break
    c.commit()
    # Metadata names this listener's address for the broker
    brokers = ["%s:%d" % (b.host, b.port) for b in c._client.cluster.brokers()]
    c.close()
    assert brokers == [args.bootstrap], "advertised %s, bootstrapped on %s" % (brokers, args.bootstrap)
    assert got == values(), "consumed %d of %d (or different bytes)" % (len(got), N)
    print("ok: kafka-python produced and consumed %d records in a group over %s" %
          (N, transport()))


if args.client == "confluent":
    run_confluent()
else:
    run_kafka_python()
