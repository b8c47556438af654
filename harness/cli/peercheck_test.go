package cli

import "testing"

func TestPeerCheckHelpers(t *testing.T) {
	for _, tc := range []struct{ addr, pw, want string }{
		{"127.0.0.1:4000", "", "redis://127.0.0.1:4000"},
		{"127.0.0.1:4000", "s3cr:t", "redis://:s3cr%3At@127.0.0.1:4000"},
	} {
		if got := redisURL(tc.addr, tc.pw); got != tc.want {
			t.Errorf("redisURL(%q, %q) = %q, want %q", tc.addr, tc.pw, got, tc.want)
		}
	}
	if got := rangeOf([]float64{1.2, 0.95, 1.04}); got != "0.95-1.20" {
		t.Errorf("rangeOf = %q", got)
	}
	if got := lastLineOf([]byte("a\nb\n")); got != "b" {
		t.Errorf("lastLineOf = %q", got)
	}
}
