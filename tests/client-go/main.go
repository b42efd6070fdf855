// Command client-go runs one RocketMQ Go client (rocketmq-client-go/v2) scenario and reports it the way
// the Java scenario programs (tests/client-src, io.rmqgw.scenarios.ScenarioMain) do: one JSON object per
// line on stdout ("start", "sent", "send-error", "received", a final "summary" with "ok"); the client's
// own log goes to a file (--log-dir, else a temporary directory), never to stdout. Exit status: 0 ok,
// 1 the scenario's expectation failed, 2 bad usage, 3 the scenario could not run (client start, panic).
//
//	client-go SCENARIO --namesrv HOST:PORT --topic T [--count N] [--timeout-ms MS] [...]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

const usage = `usage: client-go SCENARIO --namesrv HOST:PORT --topic TOPIC [--option value]...
scenarios:
  sync-send      send --count messages with SendSync, one at a time
  batch-send     send one batch of --count messages (one SendSync call)
  fanout-send    one batch of --count messages to a gateway's fan-out topic (--topic), message i naming
                 the i-th of --destinations "A|B|A,B" (cycled) in --destination-property
  push-consume   clustering push consumer until --count distinct messages (0: until the deadline), then
                 --linger-ms more`

// exit statuses, as the Java scenario programs
const (
	exitOK        = 0
	exitFailed    = 1
	exitUsage     = 2
	exitException = 3
)

type options struct {
	scenario, namesrv, topic, group, producerGroup, keyPrefix, tag, instance, logDir string
	destinations, destinationProperty                                             string
	count, bodySize, retries                                                       int
	timeout, sendTimeout, linger                                                   time.Duration
}

// out writes the result lines; one mutex, so consumer goroutines never interleave lines.
type out struct {
	mu    sync.Mutex
	start time.Time
}

type line map[string]interface{}

func (o *out) line(kind string) line {
	return line{"type": kind, "t": time.Since(o.start).Milliseconds()}
}

func (o *out) emit(l line) {
	data, err := json.Marshal(l)
	if err != nil {
		data, _ = json.Marshal(line{"type": "error", "error": err.Error()})
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	os.Stdout.Write(append(data, '\n'))
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(argv []string) int {
	o := &out{start: time.Now()}
	if len(argv) == 0 || argv[0] == "--help" || argv[0] == "-h" {
		fmt.Fprintln(os.Stderr, usage)
		if len(argv) == 0 {
			return exitUsage
		}
		return exitOK
	}
	opts, err := parse(argv[0], argv[1:])
	if err != nil {
		o.emit(line{"type": "summary", "scenario": argv[0], "ok": false, "error": "usage: " + err.Error()})
		fmt.Fprintln(os.Stderr, err)
		fmt.Fprintln(os.Stderr, usage)
		return exitUsage
	}
	logFile, err := clientLog(opts.logDir)
	if err != nil {
		o.emit(line{"type": "summary", "scenario": opts.scenario, "ok": false, "error": err.Error()})
		return exitException
	}
	o.emit(o.line("start").with("scenario", opts.scenario).with("client", "rocketmq-client-go/v2").
		with("pid", os.Getpid()).with("namesrv", opts.namesrv).with("topic", opts.topic).
		with("producerGroup", opts.producerGroup).with("consumerGroup", opts.group).
		with("instance", opts.instance).with("logFile", logFile))
	summary := o.line("summary").with("scenario", opts.scenario).with("client", "rocketmq-client-go/v2")
	status := exitOK
	func() {
		defer func() {
			if r := recover(); r != nil {
				summary["ok"] = false
				summary["error"] = fmt.Sprint("panic: ", r)
				status = exitException
			}
		}()
		ok, err := scenario(opts, o, summary)
		switch {
		case err != nil:
			summary["ok"] = false
			summary["error"] = err.Error()
			status = exitException
		case !ok:
			summary["ok"] = false
			status = exitFailed
		default:
			summary["ok"] = true
		}
	}()
	summary["t"] = time.Since(o.start).Milliseconds()
	summary["elapsedMs"] = summary["t"]
	o.emit(summary)
	return status
}

func (l line) with(k string, v interface{}) line {
	l[k] = v
	return l
}

func parse(scenario string, args []string) (*options, error) {
	fs := flag.NewFlagSet(scenario, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	opts := &options{scenario: scenario}
	id := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano()&0xFFFFFFF, 36)
	safe := strings.ReplaceAll(scenario, "-", "_")
	fs.StringVar(&opts.namesrv, "namesrv", "", "name server address (required)")
	fs.StringVar(&opts.topic, "topic", "", "topic (required)")
	fs.StringVar(&opts.group, "group", "rmqgw_cg_"+safe+"_"+id, "consumer group")
	fs.StringVar(&opts.producerGroup, "producer-group", "rmqgw_pg_"+safe+"_"+id, "producer group")
	fs.StringVar(&opts.keyPrefix, "key-prefix", scenario+"-"+id, "message key prefix")
	fs.StringVar(&opts.tag, "tag", "rmqgw", "message tag")
	fs.StringVar(&opts.instance, "instance", "rmqgw-"+scenario+"-"+id, "client instance name")
	fs.StringVar(&opts.logDir, "log-dir", "", "directory of the client's log (default: a new temporary directory)")
	fs.StringVar(&opts.destinations, "destinations", "", "fanout-send: destinations per message, '|'-separated")
	fs.StringVar(&opts.destinationProperty, "destination-property", "RMQGW_DESTINATIONS", "fanout-send: property naming the destinations")
	fs.IntVar(&opts.count, "count", 10, "messages to send or to receive")
	fs.IntVar(&opts.bodySize, "body-size", 64, "body size in bytes")
	fs.IntVar(&opts.retries, "retries", 2, "producer retries")
	timeoutMs := fs.Int64("timeout-ms", 60000, "the scenario's deadline")
	sendTimeoutMs := fs.Int64("send-timeout-ms", 5000, "send timeout")
	lingerMs := fs.Int64("linger-ms", 0, "push-consume: keep consuming this long after --count was reached")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if opts.namesrv == "" || opts.topic == "" {
		return nil, errors.New("--namesrv and --topic are required")
	}
	if opts.count < 0 || opts.bodySize < 0 || *timeoutMs <= 0 {
		return nil, errors.New("--count and --body-size must be >= 0, --timeout-ms > 0")
	}
	if scenario == "fanout-send" && opts.destinations == "" {
		return nil, errors.New("fanout-send needs --destinations")
	}
	opts.timeout = time.Duration(*timeoutMs) * time.Millisecond
	opts.sendTimeout = time.Duration(*sendTimeoutMs) * time.Millisecond
	opts.linger = time.Duration(*lingerMs) * time.Millisecond
	switch scenario {
	case "sync-send", "batch-send", "fanout-send", "push-consume":
		return opts, nil
	default:
		return nil, fmt.Errorf("unknown scenario %q", scenario)
	}
}

// clientLog points the Go client's logger (logrus, stderr by default) at a file.
func clientLog(dir string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "rmqgw-client-go-logs-")
		if err != nil {
			return "", err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "rocketmq-client-go.log")
	return path, rlog.SetOutputPath(path)
}

func scenario(opts *options, o *out, summary line) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opts.timeout)
	defer cancel()
	switch opts.scenario {
	case "push-consume":
		return pushConsume(ctx, opts, o, summary)
	default:
		return send(ctx, opts, o, summary)
	}
}

func key(opts *options, seq int) string {
	return opts.keyPrefix + "-" + strconv.Itoa(seq)
}

// body: "key|seq|" padded with dots to --body-size bytes, as the Java scenarios.
func body(k string, seq int, size int) []byte {
	b := []byte(k + "|" + strconv.Itoa(seq) + "|")
	for len(b) < size {
		b = append(b, '.')
	}
	return b
}

func message(opts *options, seq int) *primitive.Message {
	k := key(opts, seq)
	m := primitive.NewMessage(opts.topic, body(k, seq, opts.bodySize))
	m.WithTag(opts.tag)
	m.WithKeys([]string{k})
	return m
}

func send(ctx context.Context, opts *options, o *out, summary line) (bool, error) {
	p, err := rocketmq.NewProducer(
		producer.WithNameServer([]string{opts.namesrv}),
		producer.WithGroupName(opts.producerGroup),
		producer.WithInstanceName(opts.instance),
		producer.WithRetry(opts.retries),
		producer.WithSendMsgTimeout(opts.sendTimeout),
	)
	if err != nil {
		return false, err
	}
	if err := p.Start(); err != nil {
		return false, fmt.Errorf("producer start: %w", err)
	}
	defer shutdownBounded("producer", p.Shutdown)
	sent, failed := 0, 0
	summary.with("requested", opts.count).with("producerGroup", opts.producerGroup)
	if opts.scenario == "sync-send" {
		for i := 0; i < opts.count && ctx.Err() == nil; i++ {
			m := message(opts, i)
			r, err := p.SendSync(ctx, m)
			if err != nil || r.Status != primitive.SendOK {
				failed++
				o.emit(sendError(o, key(opts, i), i, r, err))
				continue
			}
			sent++
			o.emit(sentLine(o, key(opts, i), i, r, r.MsgID, r.OffsetMsgID).with("queueOffset", r.QueueOffset))
		}
		summary.with("sent", sent).with("failed", failed)
		return sent == opts.count, nil
	}
	// batch-send and fanout-send: one SendSync call with every message
	var destinations []string
	if opts.scenario == "fanout-send" {
		destinations = strings.Split(opts.destinations, "|")
	}
	batch := make([]*primitive.Message, 0, opts.count)
	for i := 0; i < opts.count; i++ {
		m := message(opts, i)
		if destinations != nil {
			m.WithProperty(opts.destinationProperty, destinations[i%len(destinations)])
			m.WithProperty("seq", strconv.Itoa(i))
			m.WithProperty("origin", "fanout")
		}
		batch = append(batch, m)
	}
	r, err := p.SendSync(ctx, batch...)
	if err != nil || r.Status != primitive.SendOK {
		for i := range batch {
			o.emit(sendError(o, key(opts, i), i, r, err))
		}
		summary.with("sent", 0).with("failed", len(batch))
		return false, nil
	}
	// The Go client gives batch messages no unique key (UNIQ_KEY): MsgID is empty; OffsetMsgID lists the
	// stored copies' ids (for fan-out, each message's ids in its destinations' order).
	offsetIDs := splitIDs(r.OffsetMsgID)
	for i := range batch {
		l := sentLine(o, key(opts, i), i, r, batch[i].GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex), "")
		if destinations != nil {
			l.with("destinations", destinations[i%len(destinations)])
		} else {
			if i < len(offsetIDs) {
				l.with("offsetMsgId", offsetIDs[i])
			}
			l.with("queueOffset", r.QueueOffset+int64(i))
		}
		o.emit(l)
	}
	summary.with("sent", len(batch)).with("failed", 0).with("batchStatus", status(r)).
		with("offsetMsgIds", r.OffsetMsgID).with("batchIds", len(offsetIDs))
	if destinations == nil {
		return len(offsetIDs) == len(batch), nil
	}
	return true, nil
}

func splitIDs(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func status(r *primitive.SendResult) string {
	if r == nil {
		return ""
	}
	switch r.Status {
	case primitive.SendOK:
		return "SEND_OK"
	case primitive.SendFlushDiskTimeout:
		return "FLUSH_DISK_TIMEOUT"
	case primitive.SendFlushSlaveTimeout:
		return "FLUSH_SLAVE_TIMEOUT"
	case primitive.SendSlaveNotAvailable:
		return "SLAVE_NOT_AVAILABLE"
	default:
		return "UNKNOWN_ERROR"
	}
}

func sentLine(o *out, k string, seq int, r *primitive.SendResult, msgID, offsetMsgID string) line {
	l := o.line("sent").with("key", k).with("seq", seq).with("msgId", msgID).with("status", status(r))
	if offsetMsgID != "" {
		l.with("offsetMsgId", offsetMsgID)
	}
	if r.MessageQueue != nil {
		l.with("broker", r.MessageQueue.BrokerName).with("queueId", r.MessageQueue.QueueId)
	}
	return l
}

// sendError: the Go client reports a broker's refusal as the error "CODE: n, DESC: remark".
func sendError(o *out, k string, seq int, r *primitive.SendResult, err error) line {
	l := o.line("send-error").with("key", k).with("seq", seq)
	if err != nil {
		l.with("error", err.Error())
		msg := err.Error()
		if strings.HasPrefix(msg, "CODE: ") {
			if i := strings.Index(msg, ", DESC: "); i > 0 {
				if code, convErr := strconv.Atoi(msg[len("CODE: "):i]); convErr == nil {
					l.with("brokerCode", code).with("brokerRemark", msg[i+len(", DESC: "):])
				}
			}
		}
	} else {
		l.with("error", "status "+status(r))
	}
	return l
}

// receipts: what the consumer received, distinct by client message id (UNIQ_KEY, else the offset id).
type receipts struct {
	mu         sync.Mutex
	distinct   map[string]bool
	keys       map[string]bool
	perQueue   map[string][]int64
	deliveries int
	duplicates int
	enough     chan struct{}
	want       int
}

func (r *receipts) add(o *out, m *primitive.MessageExt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deliveries++
	fresh := !r.distinct[m.MsgId]
	r.distinct[m.MsgId] = true
	if !fresh {
		r.duplicates++
	}
	if k := m.GetKeys(); k != "" {
		r.keys[k] = true
	}
	broker := ""
	if m.Queue != nil {
		broker = m.Queue.BrokerName
	}
	queue := m.Topic + "@" + broker + ":" + strconv.Itoa(int(m.Queue.QueueId))
	r.perQueue[queue] = append(r.perQueue[queue], m.QueueOffset)
	props := m.GetProperties()
	user := map[string]string{}
	for k, v := range props {
		if !systemProperty(k) {
			user[k] = v
		}
	}
	b := string(m.Body)
	if i := strings.Index(b, "|."); i >= 0 {
		b = b[:i+1]
	} else if len(b) > 80 {
		b = b[:80]
	}
	o.emit(o.line("received").with("key", m.GetKeys()).with("msgId", m.MsgId).with("offsetMsgId", m.OffsetMsgId).
		with("topic", m.Topic).with("broker", broker).with("queueId", m.Queue.QueueId).
		with("queueOffset", m.QueueOffset).with("reconsumeTimes", m.ReconsumeTimes).with("tags", m.GetTags()).
		with("storeHost", m.StoreHost).with("bornHost", m.BornHost).with("body", b).with("bodySize", len(m.Body)).
		with("userProperties", user).with("duplicate", !fresh))
	if r.want > 0 && len(r.distinct) >= r.want {
		select {
		case <-r.enough:
		default:
			close(r.enough)
		}
	}
}

// systemProperty: the property names RocketMQ itself sets (MessageConst), kept out of "userProperties".
func systemProperty(k string) bool {
	switch k {
	case primitive.PropertyKeys, primitive.PropertyTags, primitive.PropertyUniqueClientMessageIdKeyIndex,
		primitive.PropertyMinOffset, primitive.PropertyMaxOffset, primitive.PropertyWaitStoreMsgOk,
		primitive.PropertyMsgRegion, primitive.PropertyTraceSwitch, primitive.PropertyConsumeStartTime,
		primitive.PropertyRealTopic, primitive.PropertyRealQueueId, primitive.PropertyRetryTopic:
		return true
	}
	return false
}

func (r *receipts) summarize(summary line) {
	r.mu.Lock()
	defer r.mu.Unlock()
	per := map[string]interface{}{}
	names := make([]string, 0, len(r.perQueue))
	for q := range r.perQueue {
		names = append(names, q)
	}
	sort.Strings(names)
	allInOrder := true
	for _, q := range names {
		offsets := r.perQueue[q]
		inOrder := true
		for i := 1; i < len(offsets); i++ {
			if offsets[i] <= offsets[i-1] {
				inOrder = false
			}
		}
		allInOrder = allInOrder && inOrder
		per[q] = line{"count": len(offsets), "inOrder": inOrder, "offsets": offsets}
	}
	summary.with("received", len(r.distinct)).with("deliveries", r.deliveries).with("duplicates", r.duplicates).
		with("distinctKeys", len(r.keys)).with("perQueue", per).with("queuesInOrder", allInOrder)
}

func pushConsume(ctx context.Context, opts *options, o *out, summary line) (bool, error) {
	r := &receipts{distinct: map[string]bool{}, keys: map[string]bool{}, perQueue: map[string][]int64{},
		enough: make(chan struct{}), want: opts.count}
	c, err := rocketmq.NewPushConsumer(
		consumer.WithNameServer([]string{opts.namesrv}),
		consumer.WithGroupName(opts.group),
		consumer.WithInstance(opts.instance),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumeMessageBatchMaxSize(1),
	)
	if err != nil {
		return false, err
	}
	err = c.Subscribe(opts.topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			r.add(o, m)
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		return false, fmt.Errorf("subscribe: %w", err)
	}
	if err := c.Start(); err != nil {
		return false, fmt.Errorf("consumer start: %w", err)
	}
	defer shutdownBounded("consumer", c.Shutdown)
	reached := opts.count == 0
	select {
	case <-r.enough:
		reached = true
	case <-ctx.Done():
	}
	if opts.linger > 0 {
		select {
		case <-time.After(opts.linger):
		case <-ctx.Done():
		}
	}
	r.summarize(summary)
	summary.with("requested", opts.count).with("consumerGroup", opts.group)
	return reached, nil
}

// shutdownBounded: a client's shutdown (offsets persisted, unregistering) may take at most 5 s.
func shutdownBounded(what string, stop func() error) {
	done := make(chan error, 1)
	go func() { done <- stop() }()
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s shutdown: %v\n", what, err)
		}
	case <-time.After(5 * time.Second):
		fmt.Fprintf(os.Stderr, "%s shutdown still running after 5 s; exiting anyway\n", what)
	}
}
