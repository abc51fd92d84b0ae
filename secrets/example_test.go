package secrets_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/koder/eventhub/secrets"
)

// Encrypt a webhook secret for its endpoint row; the ciphertext names its key and only
// decrypts for the same row.
func ExampleKeyring() {
	ring, _ := secrets.ParseKeys(secrets.EncodeKey(secrets.GenerateKey())) // os.Getenv(secrets.EnvKey)
	ct, _ := ring.Encrypt("whsec_example", "ep_1")
	fmt.Println(secrets.IsEncrypted(ct), strings.HasPrefix(ct, secrets.Marker+ring.PrimaryID()+":"))
	pt, _ := ring.Decrypt(ct, "ep_1")
	fmt.Println(pt)
	_, err := ring.Decrypt(ct, "ep_2")
	fmt.Println(err)
	legacy, _ := ring.Decrypt("whsec_written_before_encryption", "ep_3")
	fmt.Println(legacy, ring.NeedsReencrypt("whsec_written_before_encryption"))
	// Output:
	// true true
	// whsec_example
	// secrets: encrypted value does not authenticate (tampered, or moved from another row)
	// whsec_written_before_encryption true
}

// The embedded default keeps a key file beside its database, made on first run.
func ExampleLoadOrCreateKeyFile() {
	dir, _ := os.MkdirTemp("", "secrets-example")
	defer os.RemoveAll(dir)
	path := secrets.DefaultKeyFile(filepath.Join(dir, "hub.db"))
	_, created, _ := secrets.LoadOrCreateKeyFile(path)
	st, _ := os.Stat(path)
	fmt.Println(filepath.Base(path), created, st.Mode().Perm())
	_, created, _ = secrets.LoadOrCreateKeyFile(path)
	fmt.Println(created)
	// Output:
	// hub.db.key true -rw-------
	// false
}

// mapRows is a secrets.Rows over a map, for the example; a real one runs two queries.
type mapRows map[string][]string

func (m mapRows) Next(_ context.Context, after string, limit int) ([]secrets.Row, error) {
	var keys []string
	for k := range m {
		if k > after {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []secrets.Row
	for _, k := range keys[:min(limit, len(keys))] {
		out = append(out, secrets.Row{Key: k, Context: k, Values: m[k]})
	}
	return out, nil
}

func (m mapRows) Update(_ context.Context, row secrets.Row, values []string) (bool, error) {
	m[row.Key] = values
	return true, nil
}

// Rotation: a new key first, the old one kept to decrypt, then every row moved over.
func ExampleReencrypt() {
	oldKey, newKey := secrets.GenerateKey(), secrets.GenerateKey()
	old, _ := secrets.NewKeyring(oldKey)
	ct, _ := old.Encrypt("whsec_a", "ep_1")
	rows := mapRows{"ep_1": {ct}, "ep_2": {"whsec_plaintext_b"}}

	ring, _ := secrets.NewKeyring(newKey, oldKey)
	res, err := secrets.Reencrypt(context.Background(), ring, rows, secrets.ReencryptOptions{})
	fmt.Println(res.Scanned, res.Updated, res.Last, err)
	for _, k := range []string{"ep_1", "ep_2"} {
		kid, _ := secrets.KeyOf(rows[k][0])
		fmt.Println(k, kid == ring.PrimaryID())
	}
	// Output:
	// 2 2 ep_2 <nil>
	// ep_1 true
	// ep_2 true
}
