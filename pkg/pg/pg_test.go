package pg

import "testing"

// A pool gets DefaultMaxConns connections unless the URL says otherwise, and the schema on its
// search_path.
func TestParsePoolConfigSetsConnsAndSearchPathAndRefusesBadSchemas(t *testing.T) {
	cfg, err := ParsePoolConfig("postgres://u@localhost/db", "merchant")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns != DefaultMaxConns || cfg.ConnConfig.RuntimeParams["search_path"] != "merchant,public" {
		t.Errorf("max conns %d, search_path %q", cfg.MaxConns, cfg.ConnConfig.RuntimeParams["search_path"])
	}
	if cfg, err = ParsePoolConfig("postgres://u@localhost/db?pool_max_conns=3", ""); err != nil || cfg.MaxConns != 3 {
		t.Errorf("pool_max_conns=3 gave %d (%v)", cfg.MaxConns, err)
	}
	if _, err := ParsePoolConfig("postgres://u@localhost/db", "Bad-Schema"); err == nil {
		t.Error("an invalid schema name was accepted")
	}
}
