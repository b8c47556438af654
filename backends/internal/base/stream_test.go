package base

import "testing"

func TestGroupLag(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want int64
	}{
		{"RESP3 map", []any{map[string]any{"name": "workers", "lag": int64(7)}}, 7},
		{"RESP2 flat list", []any{[]any{"name", "workers", "pending", int64(2), "lag", int64(3)}}, 3},
		{"lag unknown (nil)", []any{map[string]any{"name": "workers", "lag": nil}}, -1},
		{"before Redis 7.0: no lag field", []any{[]any{"name", "workers", "pending", int64(0)}}, -1},
		{"another group only", []any{map[string]any{"name": "other", "lag": int64(5)}}, -1},
		{"the group after another", []any{map[string]any{"name": "other", "lag": int64(5)}, map[string]any{"name": "workers", "lag": int64(0)}}, 0},
		{"no groups", []any{}, -1},
		{"not a list", "ERR", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := groupLag(tc.v, StreamGroup); got != tc.want {
				t.Errorf("groupLag = %d, want %d", got, tc.want)
			}
		})
	}
}
