package pglocal

import (
	"os"
	"path/filepath"
	"testing"
)

// A directory under one the postgres user cannot enter is reported unreachable, naming it; one
// under directories it can enter is not.
func TestCheckReachableNamesADirectoryTheUserCannotEnter(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	private := filepath.Join(base, "private")
	inner := filepath.Join(private, "inner")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	const nobody = 65534
	if err := checkReachable(filepath.Join(inner, "pg"), nobody, []uint32{nobody}); err == nil {
		t.Fatal("a 0700 directory of another user reported reachable")
	}
	if err := os.Chmod(private, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkReachable(filepath.Join(inner, "pg"), uint32(os.Getuid()), nil); err != nil {
		t.Fatal(err)
	}
}
