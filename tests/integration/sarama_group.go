// Debian's sarama 1.22 against StreamPulse: a SyncProducer writes N records, then a consumer
// group with sarama's default configuration consumes them and leaves.
//
// The configuration is sarama.NewConfig() but for what a consumer group cannot do without:
// Version (groups need >= 0.10.2; record batches, which is all the broker stores, need 0.11:
// V2_0_0_0, a common choice) and Consumer.Offsets.Initial = OffsetOldest, so a new group reads
// the records already there. Consumer.Offsets.Retention stays 0, so sarama commits with
// OffsetCommit v1 (and reads commits with OffsetFetch v1); Return.Errors is turned on only so that
// an error the group meets is reported here rather than dropped.
//
// Checks, then exits 0: every record arrives exactly once with its value; no error surfaced.
// Whether the commits arrived is for the caller to check after this exits (the group has left by
// then: Close flushes the offsets, then sends LeaveGroup).
//
// usage: sarama_group BROKER TOPIC GROUP N
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/Shopify/sarama"
)

type handler struct {
	mu   sync.Mutex
	seen map[string]string // "partition:offset" -> value
	dups int
	want int
	done chan struct{}
	once sync.Once
}

func (h *handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *handler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		k := fmt.Sprintf("%d:%d", msg.Partition, msg.Offset)
		h.mu.Lock()
		if _, ok := h.seen[k]; ok {
			h.dups++
		}
		h.seen[k] = string(msg.Value)
		n := len(h.seen)
		h.mu.Unlock()
		sess.MarkMessage(msg, "")
		if n >= h.want {
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 5 {
		fail("usage: sarama_group BROKER TOPIC GROUP N")
	}
	broker, topic, group := os.Args[1], os.Args[2], os.Args[3]
	n, err := strconv.Atoi(os.Args[4])
	if err != nil {
		fail("N: %v", err)
	}
	brokers := []string{broker}

	pc := sarama.NewConfig()
	pc.Version = sarama.V2_0_0_0
	pc.Producer.Return.Successes = true
	pc.Producer.RequiredAcks = sarama.WaitForAll
	pc.Producer.Partitioner = sarama.NewManualPartitioner
	producer, err := sarama.NewSyncProducer(brokers, pc)
	if err != nil {
		fail("producer: %v", err)
	}
	want := map[string]string{}
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("value-%d", i)
		p, off, err := producer.SendMessage(&sarama.ProducerMessage{
			Topic: topic, Partition: int32(i % 3), Value: sarama.StringEncoder(v)})
		if err != nil {
			fail("send %d: %v", i, err)
		}
		want[fmt.Sprintf("%d:%d", p, off)] = v
	}
	if err := producer.Close(); err != nil {
		fail("producer close: %v", err)
	}

	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_0_0_0
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Return.Errors = true
	cg, err := sarama.NewConsumerGroup(brokers, group, cfg)
	if err != nil {
		fail("consumer group: %v", err)
	}
	var errs []error
	var errMu sync.Mutex
	go func() {
		for e := range cg.Errors() {
			errMu.Lock()
			errs = append(errs, e)
			errMu.Unlock()
		}
	}()
	h := &handler{seen: map[string]string{}, want: n, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	consumed := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, h); err != nil {
				consumed <- err
				return
			}
		}
		consumed <- nil
	}()
	select {
	case <-h.done:
	case err := <-consumed:
		fail("consume ended early: %v", err)
	case <-time.After(60 * time.Second):
		h.mu.Lock()
		fail("consumed %d of %d records in 60 s", len(h.seen), n)
	}
	cancel()
	if err := <-consumed; err != nil {
		fail("consume: %v", err)
	}
	if err := cg.Close(); err != nil { // flushes the offsets, then leaves the group
		fail("close: %v", err)
	}
	errMu.Lock()
	defer errMu.Unlock()
	if len(errs) > 0 {
		fail("the consumer group reported errors: %v", errs)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dups != 0 {
		fail("%d records delivered twice", h.dups)
	}
	if len(h.seen) != n {
		fail("consumed %d records, want %d", len(h.seen), n)
	}
	for k, v := range want {
		if h.seen[k] != v {
			fail("record %s: got %q, want %q", k, h.seen[k], v)
		}
	}
	fmt.Printf("ok: %d records once each\n", n)
}
