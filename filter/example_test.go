package filter_test

import (
	"errors"
	"fmt"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/filter"
)

func ExampleCompile() {
	f, err := filter.Compile("tenantid = 'acme' AND data.plan = 'pro'")
	if err != nil {
		panic(err)
	}
	ev := cloudevent.New("/billing", "subscription.changed").SetTenantID("acme")
	_ = ev.SetData("application/json", map[string]string{"plan": "pro"})
	fmt.Println(f.Match(ev))

	_, err = filter.Compile("tenantid = 'acme' AND\ndata.plan = = 'pro'")
	var fe *filter.Error
	if errors.As(err, &fe) {
		fmt.Printf("line %d, column %d\n", fe.Line, fe.Col)
	}
	// Output:
	// true
	// line 2, column 13
}
