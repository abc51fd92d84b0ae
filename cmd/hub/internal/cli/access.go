package cli

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/secrets"
)

// The access commands: API keys, the audit trail, link tokens and secrets at rest are
// admin API clients like the others; generating a token or a key and rotating a key file
// are local, so they work before a hub runs.

func newKeysCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Publisher API keys: create, list, get, revoke, rotate",
		Long: `keys manages the API keys publishers present to the ingress (Authorization: Bearer
ehk_...). Each key is bound to one tenant (events for another tenant are refused with 403)
and optionally to type patterns. The key is printed once, at create and rotate: the hub
stores only its hash. A revoked key stops at once on the hub that revoked it and within
auth.api_keys.cache_ttl (10s) on the others; after a rotation the previous key keeps
working for --grace (default auth.api_keys.rotate_grace, 24h).`,
		Example: `  hub keys create --tenant acme --name billing --types 'billing.#'
  hub keys list --tenant acme
  hub keys rotate k2jdq7w3mafp5x4n --grace 1h
  hub keys revoke k2jdq7w3mafp5x4n`,
	}
	c := adminFlags(cmd, env)
	var tenant, name, expiresIn, expiresAt, grace, after string
	var types []string
	var revoked bool
	var limit int
	create := sub("create", "Make a key (printed once)", "  hub keys create --tenant acme --types 'billing.#' --expires-in 2160h", cobra.NoArgs,
		func(cmd *cobra.Command, a []string) error {
			if tenant == "" {
				return exitf(ExitUsage, "--tenant is required: every key publishes for one tenant")
			}
			b := map[string]any{"tenant": tenant, "name": name, "types": types}
			if expiresIn != "" {
				b["expires_in"] = expiresIn
			}
			if expiresAt != "" {
				b["expires_at"] = expiresAt
			}
			return c.do(cmd, http.MethodPost, "/keys", nil, b)
		})
	create.Flags().StringVar(&tenant, "tenant", "", "the tenant the key publishes for (required)")
	create.Flags().StringVar(&name, "name", "", "a label for people")
	create.Flags().StringSliceVar(&types, "types", nil, "event type patterns the key may publish (default: every type)")
	create.Flags().StringVar(&expiresIn, "expires-in", "", "end the key after this long (e.g. 2160h)")
	create.Flags().StringVar(&expiresAt, "expires-at", "", "end the key at this RFC 3339 time")
	var output string
	list := sub("list", "List keys in creation order (never their secrets)", "  hub keys list --tenant acme --include-revoked\n  hub keys list -o table", cobra.NoArgs,
		func(cmd *cobra.Command, a []string) error {
			q := query("tenant", tenant, "after", after, "limit", strconv.Itoa(limit))
			if revoked {
				q.Set("include_revoked", "true")
			}
			return c.list(cmd, output, keysTable, "/keys", q)
		})
	outputFlag(list, &output)
	list.Flags().StringVar(&tenant, "tenant", "", "only this tenant's keys")
	list.Flags().BoolVar(&revoked, "include-revoked", false, "list revoked keys too")
	list.Flags().IntVar(&limit, "limit", 100, "keys per page")
	list.Flags().StringVar(&after, "after", "", "the next cursor of the previous page")
	rotate := sub("rotate <id>", "Give a key a new secret (printed once); the old one works for --grace", "  hub keys rotate k2jdq7w3mafp5x4n --grace 1h", cobra.ExactArgs(1),
		func(cmd *cobra.Command, a []string) error {
			return c.do(cmd, http.MethodPost, "/keys/"+url.PathEscape(a[0])+"/rotate", nil, map[string]any{"grace": grace})
		})
	rotate.Flags().StringVar(&grace, "grace", "", "how long the previous secret keeps working; 0s ends it at once (default: auth.api_keys.rotate_grace)")
	cmd.AddCommand(create, list, rotate,
		sub("get <id>", "Show one key", "  hub keys get k2jdq7w3mafp5x4n", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
			return c.do(cmd, http.MethodGet, "/keys/"+url.PathEscape(a[0]), nil, nil)
		}),
		sub("revoke <id>", "End a key at once", "  hub keys revoke k2jdq7w3mafp5x4n", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
			return c.do(cmd, http.MethodPost, "/keys/"+url.PathEscape(a[0])+"/revoke", nil, nil)
		}))
	return cmd
}

func newAuditCmd(env *Env) *cobra.Command {
	var tenant, actor, action, object, since, until, before, output string
	var limit int
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "The audit trail of admin actions, newest first",
		Long: `audit lists admin actions: who (the credential's kind and id, never its value), what
(endpoint.create, key.revoke, ...), when, on which object, for which tenant, and the
outcome (ok, denied, error). A tenant-scoped token sees its own tenant's records only.
Page on with --before (the "next" of the previous answer).`,
		Example: `  hub audit --limit 20
  hub audit -o table
  hub audit --tenant acme --action key.create
  hub audit --object endpoint/ep_01J... --since 2026-01-01T00:00:00Z`,
		Args: cobra.NoArgs,
	}
	c := adminFlags(cmd, env)
	cmd.RunE = func(cmd *cobra.Command, a []string) error {
		return c.list(cmd, output, auditTable, "/audit", query("tenant", tenant, "actor", actor, "action", action, "object", object,
			"since", since, "until", until, "before", before, "limit", strconv.Itoa(limit)))
	}
	outputFlag(cmd, &output)
	fl := cmd.Flags()
	fl.StringVar(&tenant, "tenant", "", "records concerning this tenant")
	fl.StringVar(&actor, "actor", "", "records of this credential id (a token id, a key id)")
	fl.StringVar(&action, "action", "", "e.g. endpoint.create, key.revoke, delivery.resend")
	fl.StringVar(&object, "object", "", "e.g. endpoint/ep_01J..., key/k2jd...")
	fl.StringVar(&since, "since", "", "RFC 3339 time")
	fl.StringVar(&until, "until", "", "RFC 3339 time (exclusive)")
	fl.StringVar(&before, "before", "", "the next cursor of the previous page")
	fl.IntVar(&limit, "limit", 100, "records per page")
	return cmd
}

func newLinksCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "links",
		Short: "Link tokens: signed, expiring admin credentials for one tenant",
		Long: `links issues link tokens (ehl_...): credentials for the admin API scoped to one tenant,
which see and manage that tenant's endpoints, deliveries and dead letters only, valid
for --ttl (at most 720h), for URLs handed to a tenant (?link=ehl_...). They are signed
with a key derived from the hub's secret key; rotating that key ends every link.`,
		Example: `  hub links create --tenant acme --ttl 1h
  hub links create --tenant acme --scopes read,write --ttl 15m`,
	}
	c := adminFlags(cmd, env)
	var tenant, ttl string
	var scopes []string
	create := sub("create", "Issue a link token (printed once)", "  hub links create --tenant acme --ttl 1h", cobra.NoArgs,
		func(cmd *cobra.Command, a []string) error {
			if tenant == "" {
				return exitf(ExitUsage, "--tenant is required")
			}
			return c.do(cmd, http.MethodPost, "/links", nil, map[string]any{"tenant": tenant, "scopes": scopes, "ttl": ttl})
		})
	create.Flags().StringVar(&tenant, "tenant", "", "the tenant (required)")
	create.Flags().StringSliceVar(&scopes, "scopes", nil, "read (default), write")
	create.Flags().StringVar(&ttl, "ttl", "", "life of the link (default auth.links.ttl, else 24h)")
	cmd.AddCommand(create)
	return cmd
}

func newSecretsCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secrets",
		Short: "Secrets at rest: status, re-encrypt, generate and rotate keys",
		Long: `Webhook signing secrets, endpoints' static header values and mTLS client keys are
encrypted in the store with the hub's secret key ring: $HUB_SECRET_KEY (base64 keys,
comma-separated, the first encrypting) and secrets.key_file.

Rotate: 'hub secrets rotate-key --key-file F' (or put a 'generate-key' key first in
HUB_SECRET_KEY, keeping the old ones), restart the hub, run 'hub secrets reencrypt',
then drop the old keys. Reencrypt also encrypts rows stored in plaintext before a key
was configured. It is resumable: after an error it prints "last"; pass it to --after.`,
		Example: `  hub secrets status
  hub secrets reencrypt
  hub secrets generate-key
  hub secrets rotate-key --key-file ./data/hub.db.key`,
	}
	c := adminFlags(cmd, env)
	var after, keyFile string
	var batch int
	reencrypt := sub("reencrypt", "Move every stored secret to the primary key (plaintexts too)", "  hub secrets reencrypt\n  hub secrets reencrypt --after ep_01J...", cobra.NoArgs,
		func(cmd *cobra.Command, a []string) error {
			return c.do(cmd, http.MethodPost, "/secrets/reencrypt", nil, map[string]any{"after": after, "batch_size": batch})
		})
	reencrypt.Flags().StringVar(&after, "after", "", "resume after this endpoint id (the last of an interrupted run)")
	reencrypt.Flags().IntVar(&batch, "batch", 0, "rows per read (default 100)")
	rotate := &cobra.Command{
		Use:     "rotate-key",
		Short:   "Put a new key first in a key file (local; restart the hub, then reencrypt)",
		Example: "  hub secrets rotate-key --key-file ./data/hub.db.key",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, a []string) error {
			if keyFile == "" {
				return exitf(ExitUsage, "--key-file is required")
			}
			r, err := secrets.RotateKeyFile(keyFile)
			if err != nil {
				return exitf(ExitFailure, "%v", err)
			}
			fmt.Fprintf(env.Stdout, "%s: new primary key %s (keys: %v); restart the hub, then run hub secrets reencrypt\n", keyFile, r.PrimaryID(), r.IDs())
			return nil
		},
	}
	rotate.Flags().StringVar(&keyFile, "key-file", "", "the key file (the embedded default's: ./data/hub.db.key)")
	cmd.AddCommand(reencrypt, rotate,
		sub("status", "Key ids and how the endpoints' secrets are stored", "  hub secrets status", cobra.NoArgs, func(cmd *cobra.Command, a []string) error {
			return c.do(cmd, http.MethodGet, "/secrets", nil, nil)
		}),
		&cobra.Command{
			Use:     "generate-key",
			Short:   "Print a new random key for HUB_SECRET_KEY (local)",
			Example: "  export HUB_SECRET_KEY=$(hub secrets generate-key)",
			Args:    cobra.NoArgs,
			RunE: func(cmd *cobra.Command, a []string) error {
				fmt.Fprintln(env.Stdout, secrets.EncodeKey(secrets.GenerateKey()))
				return nil
			},
		})
	return cmd
}

func newTokenCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "token",
		Short:   "Admin tokens",
		Example: "  hub token generate",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "generate",
		Short: "Print a new random admin token (256 bits; local)",
		Long: `generate prints a token for admin.token, HUB_ADMIN_TOKEN or a line of admin.token_file
("<token> tenant=acme" scopes it to a tenant, "<token> scopes=read" to reading). The hub
names it in logs and the audit trail by its id, the first 8 hex digits of its SHA-256.`,
		Example: "  hub token generate >> /etc/hub/admin-tokens",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, a []string) error {
			fmt.Fprintln(env.Stdout, auth.GenerateAdminToken())
			return nil
		},
	})
	return cmd
}
