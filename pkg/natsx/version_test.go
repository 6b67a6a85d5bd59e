package natsx

import "testing"

func TestOlderThanComparesNumerically(t *testing.T) {
	for _, c := range []struct {
		v    string
		want bool
	}{{"2.9.10", true}, {"2.9.99", true}, {"2.10.0", false}, {"2.10.0-beta.1", false}, {"2.15.2", false},
		{"3.0", false}, {"1.99.99", true}, {"2.10", false}} {
		if got := olderThan(c.v, MinServerVersion); got != c.want {
			t.Errorf("olderThan(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}
