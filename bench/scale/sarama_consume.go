// sarama_consume: every partition of many read from its start, through Debian's sarama 1.22
// (bench/scale/run, beside partition_roundtrip's librdkafka consume).
//
// librdkafka 2.0.2 with tens of thousands of partitions assigned spends its own CPU walking them
// (measured at 50,000: 130 s of client CPU to read 20,903 records, the broker 4.6 s), so its
// consume shows the client's limit; sarama, like the Java client, asks for every partition a
// broker leads in one FetchRequest, so this run shows what the broker takes to serve them.
//
// Reads PREFIX-0000 .. PREFIX-(TOPICS-1), partitions 0 .. PARTS-1, from the oldest offset, until
// RECORDS records arrived; checks each record's payload names its partition ("T/P/..." as
// partition_roundtrip and sarama_produce write) and that each partition got RECORDS/partitions
// of them. Prints `consume ms=F records=N` (from the first partition's start, offset lookups
// included, to the last record); exit 1 on a mismatch or after 120 s, 2 on bad usage.
//
// usage: sarama_consume BROKER PREFIX TOPICS PARTS RECORDS
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/Shopify/sarama"
)

const (
	starters = 16 // partitions started at once (each start asks for the partition's offsets)
	waitMax  = 120 * time.Second
)

type got struct {
	index int // topic * parts + partition, or -1 for a record that names another partition
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: sarama_consume BROKER PREFIX TOPICS PARTS RECORDS")
		os.Exit(2)
	}
	topics, err1 := strconv.Atoi(os.Args[3])
	parts, err2 := strconv.Atoi(os.Args[4])
	records, err3 := strconv.Atoi(os.Args[5])
	if err1 != nil || err2 != nil || err3 != nil || topics < 1 || parts < 1 || records < 1 {
		fmt.Fprintln(os.Stderr, "sarama_consume: TOPICS, PARTS and RECORDS are counts")
		os.Exit(2)
	}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_0_0_0
	cfg.ChannelBufferSize = 4 // per partition: tens of thousands of them
	cfg.Consumer.Return.Errors = false
	cfg.Net.ReadTimeout = 120 * time.Second
	cfg.Metadata.Full = false
	c, err := sarama.NewConsumer([]string{os.Args[1]}, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sarama_consume:", err)
		os.Exit(1)
	}
	total := topics * parts
	out := make(chan got, 65536)
	t0 := time.Now()
	deadline := time.After(waitMax)
	jobs := make(chan int, total)
	for i := 0; i < total; i++ {
		jobs <- i
	}
	close(jobs)
	var startErr sync.Once
	failed := make(chan struct{})
	for w := 0; w < starters; w++ {
		go func() {
			for i := range jobs {
				t, p := i/parts, i%parts
				name := fmt.Sprintf("%s-%04d", os.Args[2], t)
				pc, err := c.ConsumePartition(name, int32(p), sarama.OffsetOldest)
				if err != nil {
					startErr.Do(func() {
						fmt.Fprintf(os.Stderr, "sarama_consume: %s [%d]: %v\n", name, p, err)
						close(failed)
					})
					return
				}
				go func(i, t, p int) {
					for m := range pc.Messages() {
						var mt, mp int
						if n, _ := fmt.Sscanf(string(m.Value), "%d/%d/", &mt, &mp); n != 2 ||
							mt != t || mp != p {
							out <- got{-1}
						} else {
							out <- got{i}
						}
					}
				}(i, t, p)
			}
		}()
	}
	seen := make([]int, total)
	n, bad := 0, 0
	var last time.Time
	for n < records {
		select {
		case g := <-out:
			n++
			last = time.Now()
			if g.index < 0 {
				bad++
			} else {
				seen[g.index]++
			}
		case <-failed:
			os.Exit(1)
		case <-deadline:
			fmt.Fprintf(os.Stderr, "sarama_consume: %d of %d records after %v\n", n, records, waitMax)
			os.Exit(1)
		}
	}
	per, wrong := records/total, 0
	for i, s := range seen {
		want := per
		if i < records%total {
			want++
		}
		if s != want {
			wrong++
		}
	}
	if bad > 0 || wrong > 0 {
		fmt.Fprintf(os.Stderr, "sarama_consume: %d records, %d unexpected, %d partitions with the wrong count\n",
			n, bad, wrong)
		os.Exit(1)
	}
	ms := float64(last.Sub(t0).Microseconds()) / 1e3
	fmt.Printf("consume ms=%.1f records=%d\n", ms, n)
}
