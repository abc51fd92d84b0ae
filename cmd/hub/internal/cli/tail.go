package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
	"github.com/koder/eventhub/transports/redisstream"
)

type tailFlags struct {
	stream, kdb, redisURL, from, output string
	count                               int
	poll                                time.Duration
	noFollow, failures                  bool
}

func newTailCmd(env *Env, g *globals) *cobra.Command {
	f := &tailFlags{}
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Follow a stream (kdbstream or Redis) and print each event",
		Long: `tail reads a stream without joining a consumer group (it acknowledges nothing and
changes no state) and prints each entry as a CloudEvent, one JSON object per line, or
as a short text line with -o text.

The stream lives in kdbstream (--kdb: a kdbstream:// / sqlite:// / postgres:// URL or
a SQLite file path; default the embedded default's ./data/hub.db) or in Redis
(--redis URL; --redis "" reads $KODER_REDIS_URL).
By default it starts at the end ($) and follows; --from 0 starts at the beginning,
--no-follow stops at the end.

--failures reads the stream where the hub records each final delivery failure
(hub.transport.failed events, F1): hub.failures, the default; when the config sets
failures.stream or failures.to, give --stream (and --redis) to match. -o text then shows
the failed event's id, route and error.`,
		Example: `  hub tail                                   # the embedded default's "events" stream
  hub tail --stream events --from 0 --no-follow -o text
  hub tail --failures --from 0 -o text       # every recorded delivery failure
  hub tail --redis redis://127.0.0.1:6379/0 --stream koder:events:id
  hub tail --kdb postgres://hub@db/hub --stream events.user`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTail(cmd.Context(), env, f, cmd.Flags().Changed("redis"), cmd.Flags().Changed("stream"))
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.stream, "stream", "s", "events", "stream key")
	fl.StringVar(&f.kdb, "kdb", "", "kdbstream database: URL or SQLite path (default ./data/hub.db, or $HUB_DATA_DIR/hub.db)")
	fl.StringVar(&f.redisURL, "redis", "", "read Redis at this URL instead of kdbstream (empty: $KODER_REDIS_URL)")
	fl.StringVar(&f.from, "from", "$", "start: $ (new entries), 0 (beginning) or an entry id (exclusive)")
	fl.IntVarP(&f.count, "count", "n", 0, "stop after n entries (0: no limit)")
	fl.StringVarP(&f.output, "output", "o", "json", "json (one CloudEvent per line) or text")
	fl.DurationVar(&f.poll, "poll", 200*time.Millisecond, "kdbstream poll interval; Redis XREAD BLOCK time (at least 100ms)")
	fl.BoolVar(&f.noFollow, "no-follow", false, "stop at the end of the stream")
	fl.BoolVar(&f.failures, "failures", false, "read the failure stream ("+config.DefaultFailureStream+", or --stream if given)")
	return cmd
}

// reader yields entries after an id.
type reader interface {
	last(ctx context.Context) (string, error)
	after(ctx context.Context, id string, block time.Duration) ([]entry, error)
	close() error
}

type entry struct {
	id     string
	values map[string]string
}

func runTail(ctx context.Context, env *Env, f *tailFlags, useRedis, streamChanged bool) error {
	if f.output != "json" && f.output != "text" {
		return exitf(ExitUsage, "-o must be json or text")
	}
	if f.failures && !streamChanged {
		f.stream = config.DefaultFailureStream
	}
	var r reader
	var err error
	if useRedis {
		r, err = openRedisReader(env, f.redisURL, f.stream)
	} else {
		r, err = openKDBReader(ctx, env, f.kdb, f.stream)
	}
	if err != nil {
		return exitf(ExitUnavailable, "%v", err)
	}
	defer r.close()
	from := f.from
	switch from {
	case "$":
		if from, err = r.last(ctx); err != nil {
			return exitf(ExitUnavailable, "%v", err)
		}
	case "0", "-":
		from = "0-0"
	}
	n := 0
	for {
		es, err := r.after(ctx, from, f.poll)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return exitf(ExitUnavailable, "%v", err)
		}
		for _, e := range es {
			printEntry(env.Stdout, f, e)
			from = e.id
			n++
			if f.count > 0 && n >= f.count {
				return nil
			}
		}
		if len(es) == 0 && f.noFollow {
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

func printEntry(w io.Writer, f *tailFlags, e entry) {
	ev, err := decodeEntry(e.values, f.stream)
	if f.output == "text" {
		if err != nil {
			fmt.Fprintf(w, "%s  (malformed: %v)\n", e.id, err)
			return
		}
		fmt.Fprintf(w, "%s  %s  %s  tenant=%s  %s%s\n", e.id, ev.Time.Format(time.RFC3339), ev.Type, ev.TenantID(), ev.ID, failureText(ev))
		return
	}
	if err != nil {
		b, _ := json.Marshal(map[string]any{"entry_id": e.id, "fields": e.values, "error": err.Error()})
		fmt.Fprintln(w, string(b))
		return
	}
	b, _ := json.Marshal(ev)
	fmt.Fprintln(w, string(b))
}

type kdbReader struct {
	eng    *engine.Engine
	stream string
}

func openKDBReader(ctx context.Context, env *Env, target, stream string) (reader, error) {
	url, path := kdbTarget(env, target)
	if path != "" {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			// Opening it would create an empty database: tail reads, it makes nothing.
			return nil, fmt.Errorf("no kdbstream database at %s (run this where the hub runs, set HUB_DATA_DIR, or give --kdb)", path)
		}
	}
	eng, err := kdbstream.OpenEngine(ctx, url)
	if err != nil {
		return nil, err
	}
	return kdbReader{eng, stream}, nil
}

// kdbTarget is the --kdb flag as an engine URL; path is set when it names a SQLite
// file by its path (the default: the embedded default's $HUB_DATA_DIR/hub.db).
func kdbTarget(env *Env, target string) (url, path string) {
	if target == "" {
		dir, _ := env.Lookup("HUB_DATA_DIR")
		if dir == "" {
			dir = "./data"
		}
		target = filepath.Join(dir, "hub.db")
	}
	if strings.Contains(target, "://") {
		return target, ""
	}
	return "sqlite://" + target, target
}

func (k kdbReader) last(ctx context.Context) (string, error) {
	si, err := k.eng.XInfoStream(ctx, k.stream)
	if hub.Code(err) == hub.NotFound {
		return "0-0", nil // no stream yet: everything that comes is new
	}
	if err != nil {
		return "", err
	}
	return si.LastGeneratedID.String(), nil
}

// after polls: kdbstream's blocking reads are group reads, and tail must not create a
// group (that would change the stream's state).
func (k kdbReader) after(ctx context.Context, id string, poll time.Duration) ([]entry, error) {
	es, err := k.eng.XRange(ctx, k.stream, "("+id, "+", 100)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		select {
		case <-ctx.Done():
		case <-time.After(poll):
		}
		return nil, nil
	}
	out := make([]entry, len(es))
	for i, e := range es {
		vals := make(map[string]string, len(e.Fields)/2)
		for j := 0; j+1 < len(e.Fields); j += 2 {
			vals[e.Fields[j]] = e.Fields[j+1]
		}
		out[i] = entry{e.ID.String(), vals}
	}
	return out, nil
}

func (k kdbReader) close() error { return k.eng.Close() }

type redisReader struct {
	c      redis.UniversalClient
	stream string
}

func openRedisReader(env *Env, url, stream string) (reader, error) {
	if url == "" {
		url, _ = env.Lookup(redisstream.EnvURL)
	}
	if url == "" {
		return nil, fmt.Errorf("no Redis URL: give --redis URL or set %s", redisstream.EnvURL)
	}
	opts, _, err := redisstream.ParseClientURL(url, redisstream.Config{})
	if err != nil {
		return nil, err
	}
	return &redisReader{c: opts.NewClient(), stream: stream}, nil
}

func (r *redisReader) last(ctx context.Context) (string, error) {
	msgs, err := r.c.XRevRangeN(ctx, r.stream, "+", "-", 1).Result()
	if err != nil {
		return "", err
	}
	if len(msgs) == 0 {
		return "0-0", nil
	}
	return msgs[0].ID, nil
}

// after is XREAD BLOCK (no group: tail changes nothing).
func (r *redisReader) after(ctx context.Context, id string, block time.Duration) ([]entry, error) {
	res, err := r.c.XRead(ctx, &redis.XReadArgs{Streams: []string{r.stream, id}, Count: 100, Block: max(block, 100*time.Millisecond)}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, s := range res {
		for _, m := range s.Messages {
			out = append(out, entry{m.ID, toStrings(m.Values)})
		}
	}
	return out, nil
}

func toStrings(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = fmt.Sprint(v)
	}
	return out
}

func (r *redisReader) close() error { return r.c.Close() }

// decodeEntry reads an entry in whichever encoding it is (seed 001's fields have
// event_type and no type), leniently: tail shows what a stream holds, including R2
// entries of older hubs whose empty fields meant unset, which consumers refuse by
// default.
func decodeEntry(values map[string]string, stream string) (*cloudevent.Event, error) {
	if _, r2 := values[cloudevent.FieldType]; !r2 {
		if _, e1 := values[cloudevent.E1EventType]; e1 {
			return cloudevent.DecodeEnvelopeFields(values, cloudevent.WithEnvelopeSource(stream))
		}
	}
	return cloudevent.DecodeFields(values, stream, cloudevent.AllowEmptyFields())
}

// failureText is the text line's tail for a hub.transport.failed event: which event
// failed, on which route, after how many attempts, and why.
func failureText(ev *cloudevent.Event) string {
	if ev.Type != hub.TypeTransportFailed {
		return ""
	}
	var tf hub.TransportFailure
	if json.Unmarshal(ev.Data, &tf) != nil {
		return ""
	}
	return fmt.Sprintf("  failed=%s (%s) route=%s attempts=%d code=%s error=%q", tf.EventID, tf.EventType, tf.Route, tf.Attempts, tf.Code, tf.Error)
}
