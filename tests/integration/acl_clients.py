"""ACLs as Kafka users meet them, through real clients on a SASL_PLAINTEXT listener: confluent-kafka
(librdkafka) produces and consumes, kafka-python's KafkaAdminClient creates, lists and removes
ACLs and tries the admin operations. Users alice, bob and admin (SCRAM-SHA-256, password
NAME-secret) exist; admin is a super user.

usage: acl_clients.py PHASE SASL_BOOTSTRAP [ENFORCE_BOOTSTRAP]
  setup    as admin: topics orders-1, orders-2 and secret (replication factor $ACL_RF, default 1);
           ACLs: alice may WRITE topics prefixed orders-, bob may READ them and group g1
  check    alice produces (idempotent) to orders-1 and orders-2 and is refused secret and
           reading; bob reads orders-1 in g1 and commits, and is refused g2; neither may create
           or delete topics or alter configs, neither sees secret or __consumer_offsets in
           Metadata, nor can list or create ACLs, nor elect leaders (ElectLeaders v1, kafka-python
           has no call for it: CLUSTER_AUTHORIZATION_FAILED at the top and for the partition);
           admin can do everything
  deny     a DENY WRITE of alice on orders-1 (LITERAL) beats her PREFIXED ALLOW: her writes to
           orders-1 fail, to orders-2 still succeed; the DENY is removed again. With
           ENFORCE_BOOTSTRAP (another node) the DENY is added through SASL_BOOTSTRAP and must be
           enforced at ENFORCE_BOOTSTRAP within a second (the time is printed)
  acls     the ACLs of setup are all there (after restarts)"""
import os
import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ConfigResource,
                         ConfigResourceType, KafkaAdminClient, NewTopic, ResourcePattern,
                         ResourcePatternFilter, ResourceType)
from kafka.admin.acl_resource import ACLResourcePatternType
from kafka.errors import (ClusterAuthorizationFailedError, TopicAuthorizationFailedError,
                          KafkaError as PyKafkaError)
from kafka.protocol.api import Request, Response
from kafka.protocol.types import Array, Int8, Int16, Int32, Schema, String

PHASE, BOOT = sys.argv[1], sys.argv[2]
OTHER = sys.argv[3] if len(sys.argv) > 3 else None
RF = int(os.environ.get("ACL_RF", "1"))


def sasl(user, boot=BOOT):
    return {"bootstrap.servers": boot, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": user,
            "sasl.password": user + "-secret"}


def admin(user, boot=BOOT):
    return KafkaAdminClient(bootstrap_servers=boot, security_protocol="SASL_PLAINTEXT",
                            sasl_mechanism="SCRAM-SHA-256", sasl_plain_username=user,
                            sasl_plain_password=user + "-secret", request_timeout_ms=10000)


def produce(user, topic, n, boot=BOOT, idempotent=True):
    """the delivery errors of n acks=all records (a list of n codes, 0: delivered), or the
    fatal error's code when the producer cannot get a producer id"""
    cfg = sasl(user, boot)
    cfg.update({"enable.idempotence": idempotent, "acks": "all", "message.timeout.ms": 8000})
    p = Producer(cfg)
    codes = []
    for i in range(n):
        try:
            p.produce(topic, value=b"%s-%d" % (user.encode(), i),
                      on_delivery=lambda err, msg: codes.append(err.code() if err else 0))
        except KafkaException as e:  # a topic librdkafka already knows is refused
            codes.append(e.args[0].code())
    try:
        p.flush(15)
    except KafkaException as e:
        return e.args[0].code()
    assert len(codes) == n, "%s: %d of %d deliveries reported" % (user, len(codes), n)
    return codes


def consume(user, group, topic, want=None, secs=15):
    """(records read, first error code or None, next offset), reading topic in group from its
    committed offset (else the start) until want records, or (want None) its end"""
    cfg = sasl(user)
    cfg.update({"group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False,
                "enable.partition.eof": True})
    c = Consumer(cfg)
    c.subscribe([topic])
    got, err, nxt = [], None, None
    deadline = time.time() + secs
    while (want is None or len(got) < want) and err is None and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                if want is None:
                    break
                continue
            err = m.error().code()
            continue
        got.append(m.value())
        nxt = m.offset() + 1
    if got and err is None:
        c.commit(asynchronous=False)
    c.close()
    return got, err, nxt


def topic_names(user, boot=BOOT):
    c = Consumer(dict(sasl(user, boot), **{"group.id": "md"}))
    names = set(c.list_topics(timeout=10).topics)
    c.close()
    return names


def acl(principal, op, perm, rtype, name, pattern):
    return ACL(principal=principal, host="*", operation=op, permission_type=perm,
               resource_pattern=ResourcePattern(rtype, name, pattern))


SETUP_ACLS = [
    acl("User:alice", ACLOperation.WRITE, ACLPermissionType.ALLOW, ResourceType.TOPIC, "orders-",
        ACLResourcePatternType.PREFIXED),
    acl("User:bob", ACLOperation.READ, ACLPermissionType.ALLOW, ResourceType.TOPIC, "orders-",
        ACLResourcePatternType.PREFIXED),
    acl("User:bob", ACLOperation.READ, ACLPermissionType.ALLOW, ResourceType.GROUP, "g1",
        ACLResourcePatternType.LITERAL),
]
DENY = acl("User:alice", ACLOperation.WRITE, ACLPermissionType.DENY, ResourceType.TOPIC,
           "orders-1", ACLResourcePatternType.LITERAL)
EVERY = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY,
                  permission_type=ACLPermissionType.ANY,
                  resource_pattern=ResourcePatternFilter(ResourceType.ANY, None,
                                                         ACLResourcePatternType.ANY))


def key(a):
    return (a.principal, a.host, a.operation, a.permission_type, a.resource_pattern.resource_type,
            a.resource_pattern.resource_name, a.resource_pattern.pattern_type)


def is_err(e, cls):
    return e is cls or isinstance(e, cls)


def setup():
    a = admin("admin")
    a.create_topics([NewTopic("orders-1", 1, RF), NewTopic("orders-2", 1, RF),
                     NewTopic("secret", 1, RF)], timeout_ms=15000)
    res = a.create_acls(SETUP_ACLS)
    assert not res["failed"] and len(res["succeeded"]) == 3, res
    acls_present()
    a.close()
    print("setup: 3 topics, 3 ACLs")


def acls_present():
    a = admin("admin")
    got, err = a.describe_acls(EVERY)
    a.close()
    assert sorted(map(key, got)) == sorted(map(key, SETUP_ACLS)), got
    print("acls: the 3 bindings are there")


class ElectLeadersResponse_v1(Response):
    API_KEY = 43
    API_VERSION = 1
    SCHEMA = Schema(("throttle_time_ms", Int32), ("error_code", Int16),
                    ("results", Array(("topic", String("utf-8")),
                                      ("partitions", Array(("partition_id", Int32),
                                                           ("error_code", Int16),
                                                           ("error_message", String("utf-8")))))))


class ElectLeadersRequest_v1(Request):
    API_KEY = 43
    API_VERSION = 1
    RESPONSE_TYPE = ElectLeadersResponse_v1
    SCHEMA = Schema(("election_type", Int8),
                    ("topic_partitions", Array(("topic", String("utf-8")), ("partitions", Array(Int32)))),
                    ("timeout_ms", Int32))


def elect(a, topic):
    """A PREFERRED ElectLeaders v1 for topic-0 through admin client a: (top error, [codes])"""
    f = a._send_request_to_node(a._client.least_loaded_node(),
                                ElectLeadersRequest_v1(0, [(topic, [0])], 10000))
    a._wait_for_futures([f])
    r = f.value
    return r.error_code, [p[1] for t in r.results for p in t[1]]


def refused(what, call, code):
    """call() must fail with Kafka error code (kafka-python raises some, returns others)"""
    try:
        res = call()
    except PyKafkaError as e:
        assert e.errno == code, (what, e)
        return
    codes = [t[1] for t in getattr(res, "topic_errors", getattr(res, "topic_error_codes", []))]
    assert codes == [code], (what, res)


def refused_admin(user):
    a = admin(user)
    refused(user + " create", lambda: a.create_topics([NewTopic("orders-new", 1, RF)],
                                                       timeout_ms=10000),
            TopicAuthorizationFailedError.errno)
    refused(user + " delete", lambda: a.delete_topics(["orders-1"], timeout_ms=10000),
            TopicAuthorizationFailedError.errno)
    res = a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "orders-1",
                                          configs={"retention.ms": "1000"})])
    errs = [r[0] for r in res.resources]
    assert errs == [TopicAuthorizationFailedError.errno], (user, "alter configs", res)
    try:
        a.describe_acls(EVERY)
        raise AssertionError("%s listed the ACLs" % user)
    except ClusterAuthorizationFailedError:
        pass
    res = a.create_acls([acl("User:" + user, ACLOperation.ALL, ACLPermissionType.ALLOW,
                             ResourceType.TOPIC, "*", ACLResourcePatternType.LITERAL)])
    assert not res["succeeded"] and is_err(res["failed"][0][1], ClusterAuthorizationFailedError), res
    got = elect(a, "orders-1")
    assert got == (ClusterAuthorizationFailedError.errno, [ClusterAuthorizationFailedError.errno]), got
    a.close()


def check():
    codes = produce("alice", "orders-1", 20) + produce("alice", "orders-2", 5)
    assert codes == [0] * 25, codes
    codes = produce("alice", "secret", 3)
    assert codes == [KafkaError.TOPIC_AUTHORIZATION_FAILED] * 3, codes
    print("alice: wrote orders-1 and orders-2 (idempotent), refused secret")
    got, err, _ = consume("alice", "g1", "orders-1", 1, secs=10)
    assert not got and err in (KafkaError.GROUP_AUTHORIZATION_FAILED,
                               KafkaError.TOPIC_AUTHORIZATION_FAILED), (got, err)
    print("alice: reading refused (%s)" % KafkaError(err).name())
    got, err, nxt = consume("bob", "g1", "orders-1")
    assert len(got) >= 20 and err is None, (len(got), err)
    c = Consumer(dict(sasl("bob"), **{"group.id": "g1"}))
    committed = c.committed([TopicPartition("orders-1", 0)], timeout=10)
    c.close()
    assert committed[0].offset == nxt and not committed[0].error, (committed, nxt)
    got, err, _ = consume("bob", "g2", "orders-1", 1, secs=10)
    assert not got and err == KafkaError.GROUP_AUTHORIZATION_FAILED, (got, err)
    code = produce("bob", "orders-1", 2)
    assert code == KafkaError.CLUSTER_AUTHORIZATION_FAILED, code
    codes = produce("bob", "orders-1", 2, idempotent=False)
    assert codes == [KafkaError.TOPIC_AUTHORIZATION_FAILED] * 2, codes
    print("bob: read orders-1 in g1 to its end and committed it, refused g2, a producer id (no WRITE "
          "anywhere) and writing")
    for user in ("alice", "bob"):
        names = topic_names(user)
        assert names == {"orders-1", "orders-2"}, (user, names)
        refused_admin(user)
    print("alice, bob: Metadata lists orders-1 and orders-2 only; create, delete, alter "
          "configs, DescribeAcls, CreateAcls and ElectLeaders refused")
    names = topic_names("admin")
    assert {"orders-1", "orders-2", "secret", "__consumer_offsets"} <= names, names
    assert produce("admin", "secret", 2) == [0, 0]
    got, err, _ = consume("admin", "any-group", "secret", 2)
    assert len(got) == 2 and err is None, (got, err)
    a = admin("admin")
    a.create_topics([NewTopic("scratch", 1, RF)], timeout_ms=15000)
    res = a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "scratch",
                                          configs={"retention.ms": "60000"})])
    assert [r[0] for r in res.resources] == [0], res
    res = a.delete_topics(["scratch"], timeout_ms=15000)
    assert [e for _, e in res.topic_error_codes] == [0], res
    top, codes = elect(a, "orders-1")  # the preferred replica leads, or is made to
    assert top == 0 and codes in ([0], [84]), (top, codes)
    a.close()
    print("admin (super user): sees every topic, writes and reads secret, creates, alters "
          "and deletes a topic, elects orders-1-0's preferred leader")


def until(what, pred, secs):
    """seconds until pred() held, polled every 20 ms; fails naming what after secs"""
    t0 = time.time()
    while not pred():
        if time.time() - t0 > secs:
            raise AssertionError("not within %.0f s: %s" % (secs, what))
        time.sleep(0.02)
    return time.time() - t0


def deny():
    enforce = OTHER or BOOT
    # one producer kept open at the enforcing node, so that the wait measures ACLs, not logins
    cfg = sasl("alice", enforce)
    cfg.update({"acks": "all", "message.timeout.ms": 3000, "retries": 0})
    p = Producer(cfg)

    def write_fails(topic, producer=None):
        """whether one record to topic is refused with TOPIC_AUTHORIZATION_FAILED: by the
        broker's answer, or at once by librdkafka, which remembers a topic refused to it until
        its metadata is refreshed (so the check that a DENY is gone uses a fresh producer)"""
        prod = producer or p
        codes = []
        try:
            prod.produce(topic, value=b"x",
                         on_delivery=lambda err, m: codes.append(err.code() if err else 0))
        except KafkaException as e:
            return e.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
        prod.flush(5)
        return codes == [KafkaError.TOPIC_AUTHORIZATION_FAILED]

    def fresh_write_fails(topic):
        return write_fails(topic, Producer(cfg))

    assert not write_fails("orders-1"), "alice cannot write orders-1 before the DENY"
    a = admin("admin")
    t0 = time.time()
    res = a.create_acls([DENY])
    assert not res["failed"], res
    took = until("the DENY enforced at " + enforce, lambda: write_fails("orders-1"), 5)
    total = time.time() - t0
    assert not write_fails("orders-2"), "the DENY on orders-1 also stopped orders-2"
    print("deny: DENY WRITE orders-1 beats ALLOW WRITE orders-* (enforced at %s %.0f ms after "
          "CreateAcls returned, %.0f ms after it was sent)" % (enforce, took * 1000, total * 1000))
    if OTHER:
        assert total < 1.0, "the DENY took %.0f ms to reach %s" % (total * 1000, OTHER)
    flt = ACLFilter(principal="User:alice", host="*", operation=ACLOperation.WRITE,
                    permission_type=ACLPermissionType.DENY,
                    resource_pattern=ResourcePatternFilter(ResourceType.TOPIC, "orders-1",
                                                           ACLResourcePatternType.LITERAL))
    res = a.delete_acls([flt])
    assert len(res) == 1 and len(res[0][1]) == 1 and key(res[0][1][0][0]) == key(DENY), res
    until("the DENY removed at " + enforce, lambda: not fresh_write_fails("orders-1"), 10)
    a.close()
    p.flush(5)
    print("deny: removed; alice writes orders-1 again")


{"setup": setup, "check": check, "deny": deny, "acls": acls_present}[PHASE]()
