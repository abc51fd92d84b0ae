package rabbitmq

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/koder/eventhub/hub"
)

// URL schemes the opener accepts.
const (
	Scheme    = "amqp"
	SchemeTLS = "amqps"
	EnvURL    = "KODER_RABBITMQ_URL" // read by Open and OpenConsumer only when given no URL
)

// ParseURL turns an amqp:// or amqps:// URL into a Config. Each query parameter sets the
// Config field of the same YAML name (patterns is comma-separated, durations are Go
// durations); an unknown parameter is an error rather than silently ignored, so a typo
// never ships. The parameters are stripped from Config.URL before dialling. Errors show
// the URL with its password redacted.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, hub.Errorf(hub.InvalidArgument, "rabbitmq: invalid URL %q", redact(raw))
	}
	if u.Scheme != Scheme && u.Scheme != SchemeTLS {
		return Config{}, hub.Errorf(hub.InvalidArgument, "rabbitmq: URL %s: scheme %q, want %s or %s", u.Redacted(), u.Scheme, Scheme, SchemeTLS)
	}
	var cfg Config
	var errs []error
	q := u.Query()
	for key, vals := range q {
		v := vals[len(vals)-1]
		if err := setParam(&cfg, key, v); err != nil {
			errs = append(errs, hub.Errorf(hub.InvalidArgument, "rabbitmq: URL %s: parameter %s: %v", u.Redacted(), key, err))
		}
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	u.RawQuery = ""
	cfg.URL = u.String()
	return cfg, nil
}

func setParam(c *Config, key, v string) error {
	dur := func(p *time.Duration) error {
		d, err := time.ParseDuration(v)
		*p = d
		return err
	}
	num := func(p *int) error {
		n, err := strconv.Atoi(v)
		*p = n
		return err
	}
	switch key {
	case "exchange":
		c.Exchange = v
	case "mode":
		c.Mode = v
	case "mandatory":
		b, err := strconv.ParseBool(v)
		c.Mandatory = &b
		return err
	case "channels":
		return num(&c.Channels)
	case "max_in_flight":
		return num(&c.MaxInFlight)
	case "confirm_timeout":
		return dur(&c.ConfirmTimeout)
	case "queue":
		c.Queue = v
	case "patterns":
		c.Patterns = strings.Split(v, ",")
	case "queue_type":
		c.QueueType = v
	case "prefetch":
		return num(&c.Prefetch)
	case "concurrency":
		return num(&c.Concurrency)
	case "max_retries":
		return num(&c.MaxRetries)
	case "retry_delay":
		return dur(&c.RetryDelay)
	case "drain_timeout":
		return dur(&c.DrainTimeout)
	case "consumer_name":
		c.ConsumerName = v
	case "connect_in_background":
		b, err := strconv.ParseBool(v)
		c.ConnectInBackground = b
		return err
	case "dial_timeout":
		return dur(&c.DialTimeout)
	case "reconnect_min":
		return dur(&c.ReconnectMin)
	case "reconnect_max":
		return dur(&c.ReconnectMax)
	default:
		return errors.New("unknown parameter")
	}
	return nil
}

// parseOrEnv is ParseURL, with an empty rawURL meaning $KODER_RABBITMQ_URL, read now
// (at open time, never in init or New) so that tests and the binary can set it late.
func parseOrEnv(rawURL string) (Config, error) {
	if rawURL == "" {
		rawURL = os.Getenv(EnvURL)
		if rawURL == "" {
			return Config{}, hub.Errorf(hub.InvalidArgument, "rabbitmq: no URL given and %s is not set", EnvURL)
		}
	}
	return ParseURL(rawURL)
}

// Open parses rawURL (see ParseURL; "" means $KODER_RABBITMQ_URL) and returns a
// connected publisher.
func Open(ctx context.Context, rawURL string) (*Transport, error) {
	cfg, err := parseOrEnv(rawURL)
	if err != nil {
		return nil, err
	}
	return New(ctx, cfg)
}

// OpenConsumer parses rawURL (see ParseURL; queue= is required; "" means
// $KODER_RABBITMQ_URL) and returns a consumer.
func OpenConsumer(ctx context.Context, rawURL string) (*Consumer, error) {
	cfg, err := parseOrEnv(rawURL)
	if err != nil {
		return nil, err
	}
	return NewConsumer(ctx, cfg)
}

// redact hides the password of a URL that may not even parse.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	if i := strings.Index(raw, "@"); i >= 0 {
		if j := strings.Index(raw, "://"); j >= 0 && j < i {
			return raw[:j+3] + "xxxxx" + raw[i:]
		}
	}
	return raw
}

// redactErr replaces any occurrence of the URL's password in err's text.
func redactErr(err error, raw string) error {
	if err == nil {
		return nil
	}
	u, perr := url.Parse(raw)
	if perr != nil || u.User == nil {
		return err
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" || !strings.Contains(err.Error(), pw) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), pw, "xxxxx"), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
