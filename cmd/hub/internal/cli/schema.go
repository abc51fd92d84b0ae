package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/app"
	"github.com/koder/eventhub/schema"
)

func newSchemaCmd(env *Env) *cobra.Command {
	var cfgPath string
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "List the payload schemas, or check data against them",
		Example: `  hub schema list
  hub schema list -c hub.yaml
  hub schema check --type identity.user.erased --data '{"erasure_id":"era_1","user_id":"u1"}'
  hub schema check --file event.json`,
	}
	cmd.PersistentFlags().StringVarP(&cfgPath, "config", "c", "", "config file whose schemas to add (default: the embedded default's)")
	registry := func() (*schema.Registry, error) {
		f, ps := app.LoadConfig(cfgPath, env.Lookup)
		if len(ps) > 0 {
			return nil, exitf(ExitInvalid, "config:\n%v", ps)
		}
		reg, sps := app.LoadSchemas(f)
		if len(sps) > 0 {
			return nil, exitf(ExitInvalid, "schemas:\n%v", sps)
		}
		return reg, nil
	}
	list := &cobra.Command{
		Use:     "list",
		Short:   "List every registered event type with its versions",
		Example: "  hub schema list\n  hub schema list --json",
		Args:    cobra.NoArgs,
	}
	asJSON := list.Flags().Bool("json", false, "print JSON")
	list.RunE = func(cmd *cobra.Command, args []string) error {
		reg, err := registry()
		if err != nil {
			return err
		}
		types := reg.Types()
		if *asJSON {
			return json.NewEncoder(env.Stdout).Encode(types)
		}
		w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "TYPE\tVERSIONS\tBUILTIN")
		for _, t := range types {
			fmt.Fprintf(w, "%s\t%s\t%v\n", t.Type, strings.Join(t.Versions, ","), t.Builtin)
		}
		return w.Flush()
	}
	var typ, data, version, file string
	check := &cobra.Command{
		Use:   "check",
		Short: "Validate event data (or a CloudEvent JSON file) against its schema",
		Long: `check validates data against the registered schema of its type and version, the check
Publish and the ingress make, and prints every failing field. Exit 0 valid, 1 invalid.`,
		Example: `  hub schema check --type identity.user.erased --data '{"erasure_id":"era_1","user_id":"u1","erased_at":"2026-01-01T00:00:00Z"}'
  hub schema check --file event.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := registry()
			if err != nil {
				return err
			}
			var evs []*cloudevent.Event
			switch {
			case file != "":
				b, err := os.ReadFile(file)
				if err != nil {
					return exitf(ExitUsage, "%v", err)
				}
				evs, err = parseEventsJSON(b)
				if err != nil {
					return exitf(ExitInvalid, "%s: %v", file, err)
				}
			case typ != "":
				ev := &cloudevent.Event{ID: cloudevent.NewID(), Source: "hub-cli", SpecVersion: cloudevent.SpecVersion, Type: typ, DataContentType: "application/json", Data: []byte(data)}
				if version != "" {
					ev.SetExtension(cloudevent.ExtDataVersion, version)
				}
				evs = append(evs, ev)
			default:
				return exitf(ExitUsage, "give --type and --data, or --file")
			}
			bad := 0
			for _, ev := range evs {
				err := reg.CheckVersion(ev)
				if err == nil {
					err = reg.Validate(ev)
				}
				if err != nil {
					bad++
					fmt.Fprintf(env.Stdout, "%s %s: %v\n", ev.Type, ev.ID, err)
					continue
				}
				fmt.Fprintf(env.Stdout, "%s %s: ok\n", ev.Type, ev.ID)
			}
			if bad > 0 {
				return silent(ExitInvalid)
			}
			return nil
		},
	}
	check.Flags().StringVarP(&typ, "type", "t", "", "event type")
	check.Flags().StringVarP(&data, "data", "d", "", "data JSON")
	check.Flags().StringVar(&version, "data-version", "", "dataversion (default: the newest registered)")
	check.Flags().StringVarP(&file, "file", "f", "", "CloudEvent JSON file (object or batch array)")
	cmd.AddCommand(list, check)
	return cmd
}
