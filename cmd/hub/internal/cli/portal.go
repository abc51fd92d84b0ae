package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// newPortalCmd is `hub portal link`: a signed, expiring URL of the tenant portal (the
// console's /ui/portal, scoped to one tenant), through the admin API's POST /links.
func newPortalCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "portal",
		Short: "The tenant portal: signed, expiring links for one tenant",
		Long: `portal link issues a link to the tenant portal of a running hub: a page where one
tenant sees and manages its own webhook endpoints, their deliveries and attempts
(resend, secret rotation, new endpoints), and nothing of any other tenant. The link
carries a signed token that expires after --ttl (at most 720h). portal revoke ends one
link before that, on every replica, by the id 'portal link -o json' printed (the audit
log lists it too, as object link/<id>). Embed a link in an iframe on the tenant's own
site after listing that site's origin in admin.ui.frame_ancestors.`,
		Example: `  hub portal link --tenant acme --ttl 1h
  hub portal link --tenant acme --ttl 15m --read-only
  hub portal link --tenant acme --ttl 1h -o json
  hub portal revoke 7Q2M4K3J5ZC6XH8N9TB0VYWDRA`,
	}
	c := adminFlags(cmd, env)
	var tenant, ttl, output string
	var readOnly bool
	link := &cobra.Command{
		Use:     "link",
		Short:   "Issue a portal link for a tenant (printed once)",
		Example: "  hub portal link --tenant acme --ttl 1h",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tenant == "" {
				return exitf(ExitUsage, "--tenant is required")
			}
			if output != "text" && output != "json" {
				return exitf(ExitUsage, "-o must be text or json")
			}
			scopes := []string{"read", "write"}
			if readOnly {
				scopes = []string{"read"}
			}
			return c.portalLink(cmd, map[string]any{"tenant": tenant, "scopes": scopes, "ttl": ttl}, output)
		},
	}
	link.Flags().StringVar(&tenant, "tenant", "", "the tenant (required)")
	link.Flags().StringVar(&ttl, "ttl", "1h", "life of the link (at most 720h)")
	link.Flags().BoolVar(&readOnly, "read-only", false, "the portal shows, but changes nothing")
	link.Flags().StringVarP(&output, "output", "o", "text", "text (the URL and its expiry) or json (the API's answer)")
	revoke := &cobra.Command{
		Use:     "revoke ID",
		Short:   "Revoke a portal link by its id, before it expires",
		Example: "  hub portal revoke 7Q2M4K3J5ZC6XH8N9TB0VYWDRA",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.do(cmd, http.MethodDelete, "/links/"+url.PathEscape(args[0]), nil, nil)
		},
	}
	cmd.AddCommand(link, revoke)
	return cmd
}

// portalLink posts to /links and prints the portal URL.
func (c *adminClient) portalLink(cmd *cobra.Command, body map[string]any, output string) error {
	if output == "json" {
		return c.do(cmd, http.MethodPost, "/links", nil, body)
	}
	status, raw, err := c.send(cmd, http.MethodPost, "/links", nil, body)
	if err != nil {
		return err
	}
	if status != http.StatusCreated {
		fmt.Fprintln(c.env.Stderr, strings.TrimSpace(string(raw)))
		if err := statusErr(status); err != nil {
			return err
		}
		return exitf(ExitFailure, "admin API: %d %s, want 201 Created", status, http.StatusText(status))
	}
	var r struct {
		Portal    string    `json:"portal"`
		ExpiresAt time.Time `json:"expires_at"`
		Scopes    string    `json:"scopes"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Portal == "" {
		return exitf(ExitFailure, "the hub issued a link but serves no console (admin.ui.enabled is false)")
	}
	fmt.Fprintln(c.env.Stdout, strings.TrimRight(c.url("", nil), "/")+r.Portal)
	fmt.Fprintf(c.env.Stderr, "expires %s (%s)\n", r.ExpiresAt.Format(time.RFC3339), r.Scopes)
	return nil
}
