// sarama_produce: one 100-byte record to each partition of many, through Debian's sarama 1.22
// (bench/scale/run, beside partition_roundtrip's librdkafka produce).
//
// librdkafka 2.0.2 sends one ProduceRequest per partition and its broker thread walks every
// partition at each wakeup, so with thousands of partitions the client's own CPU bounds the run
// (bench/scale/run prints the client's CPU time to show it). sarama, like the Java client, puts
// the batches of every partition led by one broker into one ProduceRequest, so this run shows
// what the broker itself takes for a produce that touches every partition once.
//
// The records go to PREFIX-0000 .. PREFIX-(TOPICS-1), partitions 0 .. PARTS-1, with acks=all
// (WaitForAll), the manual partitioner, Version 2.0 (record batches), and flushes of at most
// 10 ms or 10,000 records. The payload names the partition as partition_roundtrip's does
// ("T/P/I" padded with 'x'), so its consume step checks these records too.
//
// Prints `produce ms=F records=N per_s=F` (the first send to the last acknowledgement); exit 1
// if any record failed or not all were acknowledged within 120 s, 2 on bad usage.
//
// usage: sarama_produce BROKER PREFIX TOPICS PARTS
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/Shopify/sarama"
)

const recordBytes = 100

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: sarama_produce BROKER PREFIX TOPICS PARTS")
		os.Exit(2)
	}
	topics, err1 := strconv.Atoi(os.Args[3])
	parts, err2 := strconv.Atoi(os.Args[4])
	if err1 != nil || err2 != nil || topics < 1 || parts < 1 {
		fmt.Fprintln(os.Stderr, "sarama_produce: TOPICS and PARTS are counts")
		os.Exit(2)
	}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_0_0_0
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.Flush.Frequency = 10 * time.Millisecond
	cfg.Producer.Flush.MaxMessages = 10000
	cfg.Producer.Timeout = 60 * time.Second
	cfg.Net.ReadTimeout = 120 * time.Second
	cfg.ChannelBufferSize = 65536
	cfg.Metadata.Full = false
	p, err := sarama.NewAsyncProducer([]string{os.Args[1]}, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sarama_produce:", err)
		os.Exit(1)
	}
	names := make([]string, topics)
	for t := range names {
		names[t] = fmt.Sprintf("%s-%04d", os.Args[2], t)
	}
	// the metadata first, so the timing is the produce path and not the client's discovery
	client, err := sarama.NewClient([]string{os.Args[1]}, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sarama_produce:", err)
		os.Exit(1)
	}
	if err := client.RefreshMetadata(names...); err != nil {
		fmt.Fprintln(os.Stderr, "sarama_produce: metadata:", err)
		os.Exit(1)
	}
	client.Close()
	total := topics * parts
	done := make(chan struct{})
	failed, acked := 0, 0
	var last time.Time
	go func() {
		for acked+failed < total {
			select {
			case <-p.Successes():
				acked++
			case e := <-p.Errors():
				if failed < 5 {
					fmt.Fprintln(os.Stderr, "sarama_produce:", e.Err)
				}
				failed++
			}
			last = time.Now()
		}
		close(done)
	}()
	t0 := time.Now()
	for i := 0; i < total; i++ {
		t, part := i/parts, i%parts
		v := make([]byte, recordBytes)
		for k := range v {
			v[k] = 'x'
		}
		copy(v, fmt.Sprintf("%d/%d/%d", t, part, i))
		p.Input() <- &sarama.ProducerMessage{Topic: names[t], Partition: int32(part),
			Value: sarama.ByteEncoder(v)}
	}
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		fmt.Fprintf(os.Stderr, "sarama_produce: %d of %d acknowledged after 120 s\n", acked, total)
		os.Exit(1)
	}
	p.Close()
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "sarama_produce: %d of %d records failed\n", failed, total)
		os.Exit(1)
	}
	ms := float64(last.Sub(t0).Microseconds()) / 1e3
	fmt.Printf("produce ms=%.1f records=%d per_s=%.1f\n", ms, total, float64(total)*1e3/ms)
}
