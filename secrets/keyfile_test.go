package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koder/eventhub/hub"
)

func TestSEC_KeyFile(t *testing.T) {
	t.Parallel()

	t.Run("GenerateIsPrivateAndNeverOverwrites", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "hub.db.key")
		r, err := GenerateKeyFile(path)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(path)
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, want 0600", st.Mode().Perm())
		}
		loaded, err := LoadKeyFile(path)
		if err != nil || loaded.PrimaryID() != r.PrimaryID() {
			t.Fatalf("%v %v", loaded, err)
		}
		_, err = GenerateKeyFile(path)
		wantCode(t, err, hub.AlreadyExists)
		if again, _ := LoadKeyFile(path); again.PrimaryID() != r.PrimaryID() {
			t.Fatal("the file changed")
		}
	})

	t.Run("LoadOrCreate", func(t *testing.T) {
		t.Parallel()
		path := DefaultKeyFile(filepath.Join(t.TempDir(), "hub.db"))
		r1, created, err := LoadOrCreateKeyFile(path)
		if err != nil || !created {
			t.Fatalf("first run: %v %v", created, err)
		}
		r2, created, err := LoadOrCreateKeyFile(path)
		if err != nil || created || r2.PrimaryID() != r1.PrimaryID() {
			t.Fatalf("second run: %v %v", created, err)
		}
		bad := filepath.Join(t.TempDir(), "bad.key")
		_ = os.WriteFile(bad, []byte("garbage\n"), 0o600)
		if _, _, err := LoadOrCreateKeyFile(bad); hub.Code(err) != hub.InvalidArgument {
			t.Fatalf("a broken file is reported, not replaced: %v", err)
		}
	})

	t.Run("RotatePutsANewKeyFirst", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "k")
		r1, _ := GenerateKeyFile(path)
		ct, _ := r1.Encrypt("s", "row")
		r2, err := RotateKeyFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ids := r2.IDs()
		if len(ids) != 2 || ids[1] != r1.PrimaryID() || ids[0] == r1.PrimaryID() {
			t.Fatalf("ids %v", ids)
		}
		loaded, _ := LoadKeyFile(path)
		if strings.Join(loaded.IDs(), ",") != strings.Join(ids, ",") {
			t.Fatalf("file %v, ring %v", loaded.IDs(), ids)
		}
		if pt, err := loaded.Decrypt(ct, "row"); err != nil || pt != "s" {
			t.Fatalf("%q %v", pt, err)
		}
		st, _ := os.Stat(path)
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v", st.Mode().Perm())
		}
		entries, _ := os.ReadDir(filepath.Dir(path))
		if len(entries) != 1 {
			t.Fatalf("temporary files left: %v", entries)
		}
	})

	t.Run("LoadMergesEnvAndFile", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "k")
		fileRing, _ := GenerateKeyFile(path)
		envKey := GenerateKey()
		r, err := Load(EncodeKey(envKey)+","+EncodeKey(fileRingKey(t, path)), path)
		if err != nil {
			t.Fatal(err)
		}
		if ids := r.IDs(); len(ids) != 2 || ids[0] != KeyID(envKey) || ids[1] != fileRing.PrimaryID() {
			t.Fatalf("ids %v: the environment first, the file's key once", ids)
		}
		_, err = Load("", "")
		wantCode(t, err, hub.InvalidArgument)
		_, err = Load("bad", "")
		wantCode(t, err, hub.InvalidArgument)
		if !strings.Contains(err.Error(), EnvKey) {
			t.Fatal(err)
		}
	})

	t.Run("FileErrorsNameTheLine", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "k")
		_ = os.WriteFile(path, []byte("# header\n"+EncodeKey(GenerateKey())+"\nnot-a-key\n"), 0o600)
		_, err := LoadKeyFile(path)
		if hub.Code(err) != hub.InvalidArgument || !strings.Contains(err.Error(), ":3:") {
			t.Fatal(err)
		}
		_ = os.WriteFile(path, []byte("# only comments\n"), 0o600)
		if _, err := LoadKeyFile(path); hub.Code(err) != hub.InvalidArgument {
			t.Fatal(err)
		}
	})
}

func fileRingKey(t *testing.T, path string) []byte {
	t.Helper()
	r, err := LoadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r.rawKeys()[0]
}
