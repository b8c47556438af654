package page

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/summary"
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

// TestPageFromMemory renders the page of a checked-in summary.json with a
// plot handed in memory, into a buffer: the page reads no file (its set
// names a directory that does not exist) and embeds the plot it is given.
func TestPageFromMemory(t *testing.T) {
	sum, err := summary.Read(filepath.Join("..", "verdict", "testdata", "summary-v2-2026-11-28.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := verdict.FromPlan(sum, filepath.Join(t.TempDir(), "gone"), true)
	if err != nil {
		t.Fatal(err)
	}
	svg := `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>handed-in-memory</text></svg>`
	var buf bytes.Buffer
	if err := Write(&buf, s, nil, []Plot{{Name: "e2e.svg", SVG: []byte(svg)}}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{"handed-in-memory", "crash-recovery", ">complete<"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
