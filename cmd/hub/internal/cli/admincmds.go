package cli

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"
)

func addAdminCommands(root *cobra.Command, env *Env) {
	root.AddCommand(newStatusCmd(env), newDLQCmd(env), newEndpointsCmd(env), newDeliveriesCmd(env), newOutboxCmd(env),
		newKeysCmd(env), newAuditCmd(env), newLinksCmd(env), newSecretsCmd(env), newTokenCmd(env),
		newPortalCmd(env))
}

func newDLQCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "Dead-letter queues of stream transports and sources: list, inspect, replay, purge",
		Long: `dlq calls the admin API of a running hub. <transport> is the name of a transport or a
source in the config (redisstream, kdbstream, bus, or a rabbitmq source; e.g. redis). Its
DLQ is the <stream>:dlq stream (events.dlq for per-category streams) or the RabbitMQ
dead-letter queue, which can only be purged whole (--all).`,
		Example: `  hub dlq list redis
  hub dlq inspect redis 1717171717171-0
  hub dlq replay redis 1717171717171-0 1717171717172-0
  hub dlq replay redis --all
  hub dlq purge redis --all`,
	}
	c := adminFlags(cmd, env)
	var limit int
	var all bool
	var output string
	list := sub("list <transport>", "List dead-lettered entries", "  hub dlq list redis --limit 20\n  hub dlq list redis -o table", cobra.ExactArgs(1),
		func(cmd *cobra.Command, a []string) error {
			return c.list(cmd, output, dlqTable, "/dlq/"+url.PathEscape(a[0]), query("limit", strconv.Itoa(limit)))
		})
	list.Flags().IntVar(&limit, "limit", 100, "maximum entries")
	outputFlag(list, &output)
	inspect := sub("inspect <transport> <id>", "Show one dead-lettered entry with its error", "  hub dlq inspect redis 1717171717171-0", cobra.ExactArgs(2),
		func(cmd *cobra.Command, a []string) error {
			return c.do(cmd, http.MethodGet, "/dlq/"+url.PathEscape(a[0])+"/"+url.PathEscape(a[1]), nil, nil)
		})
	idsOrAll := func(cmd *cobra.Command, a []string) (map[string]any, error) {
		if len(a) == 1 && !all {
			return nil, exitf(ExitUsage, "give entry ids or --all")
		}
		return map[string]any{"ids": a[1:], "all": all}, nil
	}
	replay := sub("replay <transport> [id...]", "Append entries back to their source stream (a new delivery) and remove them from the DLQ",
		"  hub dlq replay redis 1717171717171-0\n  hub dlq replay redis --all", cobra.MinimumNArgs(1),
		func(cmd *cobra.Command, a []string) error {
			body, err := idsOrAll(cmd, a)
			if err != nil {
				return err
			}
			return c.do(cmd, http.MethodPost, "/dlq/"+url.PathEscape(a[0])+"/replay", nil, body)
		})
	replay.Flags().BoolVar(&all, "all", false, "every entry")
	purge := sub("purge <transport> [id...]", "Delete entries from the DLQ", "  hub dlq purge redis --all", cobra.MinimumNArgs(1),
		func(cmd *cobra.Command, a []string) error {
			body, err := idsOrAll(cmd, a)
			if err != nil {
				return err
			}
			return c.do(cmd, http.MethodPost, "/dlq/"+url.PathEscape(a[0])+"/purge", nil, body)
		})
	purge.Flags().BoolVar(&all, "all", false, "every entry")
	cmd.AddCommand(list, inspect, replay, purge)
	return cmd
}

func newEndpointsCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "endpoints",
		Short: "Webhook endpoints: list, get, create, update, delete, rotate the secret",
		Example: `  hub endpoints create --url https://example.com/hooks --types 'identity.#'
  hub endpoints list
  hub endpoints rotate ep_01J...
  hub endpoints update ep_01J... --disable`,
	}
	c := adminFlags(cmd, env)
	var epURL, tenant, secret string
	var types []string
	var enable, disable bool
	var output string
	var ctl controlFlags
	var ctlErr error
	body := func(cmd *cobra.Command) map[string]any {
		b := map[string]any{}
		c, err := ctl.body(cmd)
		ctlErr = err
		if len(c) > 0 {
			b["controls"] = c
		}
		if epURL != "" {
			b["url"] = epURL
		}
		if cmd.Flags().Changed("types") {
			b["types"] = types
		}
		if tenant != "" {
			b["tenant"] = tenant
		}
		if secret != "" {
			b["secret"] = secret
		}
		if enable {
			b["enabled"] = true
		}
		if disable {
			b["enabled"] = false
		}
		return b
	}
	addFields := func(sc *cobra.Command) {
		sc.Flags().StringVar(&epURL, "url", "", "receiver URL (http or https)")
		sc.Flags().StringSliceVar(&types, "types", nil, "event type patterns (default \"*\": every event but the hub's own hub.* ones)")
		sc.Flags().StringVar(&tenant, "tenant", "", "deliver only this tenant's events")
		ctl.add(sc)
	}
	create := sub("create", "Register an endpoint (it receives events published from now on)",
		"  hub endpoints create --url https://example.com/hooks --types 'identity.#'", cobra.NoArgs,
		func(cmd *cobra.Command, a []string) error {
			if epURL == "" {
				return exitf(ExitUsage, "--url is required")
			}
			b := body(cmd)
			if ctlErr != nil {
				return ctlErr
			}
			return c.do(cmd, http.MethodPost, "/endpoints", nil, b)
		})
	addFields(create)
	create.Flags().StringVar(&secret, "secret", "", "signing secret (default: generated and printed once; to change it later: hub endpoints rotate)")
	update := sub("update <id>", "Change an endpoint's URL, types, tenant, enabled flag or delivery controls",
		"  hub endpoints update ep_01J... --types 'billing.#'\n  hub endpoints update ep_01J... --disable", cobra.ExactArgs(1),
		func(cmd *cobra.Command, a []string) error {
			if enable && disable {
				return exitf(ExitUsage, "--enable and --disable exclude each other")
			}
			b := body(cmd)
			if ctlErr != nil {
				return ctlErr
			}
			return c.do(cmd, http.MethodPatch, "/endpoints/"+url.PathEscape(a[0]), nil, b)
		})
	addFields(update)
	update.Flags().BoolVar(&enable, "enable", false, "enable the endpoint")
	update.Flags().BoolVar(&disable, "disable", false, "disable the endpoint")
	var grace string
	rotate := sub("rotate <id>", "Add a new signing secret; the old one keeps signing during the grace period",
		"  hub endpoints rotate ep_01J... --grace 24h", cobra.ExactArgs(1),
		func(cmd *cobra.Command, a []string) error {
			return c.do(cmd, http.MethodPost, "/endpoints/"+url.PathEscape(a[0])+"/rotate", nil, map[string]any{"grace": grace})
		})
	rotate.Flags().StringVar(&grace, "grace", "", "how long the old secret keeps signing (default: the transport's)")
	list := sub("list", "List endpoints", "  hub endpoints list\n  hub endpoints list -o table", cobra.NoArgs, func(cmd *cobra.Command, a []string) error {
		return c.list(cmd, output, endpointsTable, "/endpoints", nil)
	})
	outputFlag(list, &output)
	cmd.AddCommand(list,
		sub("get <id>", "Show one endpoint", "  hub endpoints get ep_01J...", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
			return c.do(cmd, http.MethodGet, "/endpoints/"+url.PathEscape(a[0]), nil, nil)
		}),
		create, update, rotate,
		sub("delete <id>", "Delete an endpoint", "  hub endpoints delete ep_01J...", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
			return c.do(cmd, http.MethodDelete, "/endpoints/"+url.PathEscape(a[0]), nil, nil)
		}),
	)
	return cmd
}

func newDeliveriesCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deliveries",
		Short: "Webhook deliveries: list, get, resend one or in bulk",
		Example: `  hub deliveries list --status dead
  hub deliveries get 42
  hub deliveries resend 42 43
  hub deliveries resend --endpoint ep_01J... --since 2026-01-01T00:00:00Z`,
	}
	c := adminFlags(cmd, env)
	var endpoint, status, since, until, output string
	var limit int
	list := sub("list", "List deliveries, newest first", "  hub deliveries list --endpoint ep_01J... --status dead\n  hub deliveries list --status retrying -o table", cobra.NoArgs,
		func(cmd *cobra.Command, a []string) error {
			return c.list(cmd, output, deliveriesTable, "/deliveries", query("endpoint", endpoint, "status", status, "since", since, "until", until, "limit", strconv.Itoa(limit)))
		})
	outputFlag(list, &output)
	list.Flags().StringVar(&endpoint, "endpoint", "", "endpoint id")
	list.Flags().StringVar(&status, "status", "", "pending, running, retrying, delivered, dead")
	list.Flags().StringVar(&since, "since", "", "RFC 3339 time")
	list.Flags().StringVar(&until, "until", "", "RFC 3339 time")
	list.Flags().IntVar(&limit, "limit", 100, "maximum deliveries")
	resend := sub("resend [id...]", "Deliver again: given deliveries, or every dead one of an endpoint in a time range",
		"  hub deliveries resend 42\n  hub deliveries resend --endpoint ep_01J... --since 2026-01-01T00:00:00Z", cobra.ArbitraryArgs,
		func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 && endpoint == "" {
				return exitf(ExitUsage, "give delivery ids or --endpoint (with --since/--until)")
			}
			return c.do(cmd, http.MethodPost, "/deliveries/resend", nil, map[string]any{"ids": a, "endpoint": endpoint, "since": since, "until": until})
		})
	resend.Flags().StringVar(&endpoint, "endpoint", "", "endpoint id (bulk)")
	resend.Flags().StringVar(&since, "since", "", "RFC 3339 time (bulk)")
	resend.Flags().StringVar(&until, "until", "", "RFC 3339 time (bulk)")
	cmd.AddCommand(list, resend,
		sub("get <id>", "Show one delivery with its attempts and last response", "  hub deliveries get 42", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
			return c.do(cmd, http.MethodGet, "/deliveries/"+url.PathEscape(a[0]), nil, nil)
		}))
	return cmd
}

func newOutboxCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "outbox",
		Short: "The transactional outbox: counts, dead rows, resend",
		Example: `  hub outbox counts
  hub outbox dead --destination redis
  hub outbox resend 17 18
  hub outbox resend --destination redis --all`,
	}
	c := adminFlags(cmd, env)
	var dest, output string
	var all bool
	var limit int
	dead := sub("dead", "List dead rows with their errors", "  hub outbox dead --destination redis\n  hub outbox dead -o table", cobra.NoArgs,
		func(cmd *cobra.Command, a []string) error {
			return c.list(cmd, output, outboxDeadTable, "/outbox/dead", query("destination", dest, "limit", strconv.Itoa(limit)))
		})
	outputFlag(dead, &output)
	dead.Flags().StringVar(&dest, "destination", "", "transport name")
	dead.Flags().IntVar(&limit, "limit", 100, "maximum rows")
	resend := sub("resend [id...]", "Deliver dead rows again", "  hub outbox resend 17\n  hub outbox resend --destination redis --all", cobra.ArbitraryArgs,
		func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 && !all {
				return exitf(ExitUsage, "give row ids or --all")
			}
			return c.do(cmd, http.MethodPost, "/outbox/resend", nil, map[string]any{"ids": a, "destination": dest, "all": all})
		})
	resend.Flags().StringVar(&dest, "destination", "", "transport name (with --all)")
	resend.Flags().BoolVar(&all, "all", false, "every dead row (of --destination)")
	counts := sub("counts", "Pending and dead rows per destination", "  hub outbox counts\n  hub outbox counts -o table", cobra.NoArgs, func(cmd *cobra.Command, a []string) error {
		return c.list(cmd, output, outboxCountsTable, "/outbox", nil)
	})
	outputFlag(counts, &output)
	cmd.AddCommand(counts, dead, resend)
	return cmd
}
