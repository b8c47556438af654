package page

import (
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/verdict"
)

func TestInlineSVG(t *testing.T) {
	ff := &fontFaces{}
	for _, tc := range []struct{ in, err string }{
		{`<?xml version="1.0"?><!-- x --><svg width="1"><defs><style>@font-face{font-family:"A";src:url(data:x)}</style></defs></svg>`, ""},
		{`<svg><defs><style>@font-face{font-family:"A";src:url(data:x)}</style></defs></svg>`, ""},
		{`<svg><script>alert(1)</script></svg>`, "script"},
		{`<html></html>`, "not an SVG"},
	} {
		h, err := ff.inline([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(string(h), `<svg class="plot"`) || strings.Contains(string(h), "@font-face") {
			t.Errorf("%q -> %q, %v", tc.in, h, err)
		}
	}
	if len(ff.rules) != 1 {
		t.Errorf("font rules %v, want the one rule once", ff.rules)
	}
}

// A cell in which a store ran served says so under its headline, once per
// backend; a cell without one says nothing.
func TestServedIn(t *testing.T) {
	s := &verdict.Set{Runs: []verdict.Run{
		{Cell: 1, Label: "zset"}, {Cell: 1, Label: "asynq", Served: true}, {Cell: 1, Label: "asynq", Served: true},
		{Cell: 2, Label: "zset"},
	}}
	if got := servedIn(s, 1); !strings.HasPrefix(got, "asynq: served") || strings.Count(got, "asynq") != 1 {
		t.Errorf("cell 1: %q", got)
	}
	if got := servedIn(s, 2); got != "" {
		t.Errorf("cell 2: %q, want nothing", got)
	}
}
