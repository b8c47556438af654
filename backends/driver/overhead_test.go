package driver

import "testing"

func TestCompletedAt(t *testing.T) {
	for _, tc := range []struct {
		line string
		t    int64
		ok   bool
	}{
		{`{"e":"completed","id":"D1","a":0,"t":1700000000123456789,"h":5}`, 1700000000123456789, true},
		{`{"e": "completed", "id": "D1", "a": 0, "t": 42, "h": 5}`, 42, true},
		{`{"e":"started","id":"D1","a":0,"t":7}`, 0, false},
		{`{"e":"failed","id":"completed","t":7}`, 0, false},
		{`not json completed`, 0, false},
	} {
		got, ok := completedAt([]byte(tc.line))
		if got != tc.t || ok != tc.ok {
			t.Errorf("completedAt(%s) = %d, %v; want %d, %v", tc.line, got, ok, tc.t, tc.ok)
		}
	}
}
