package trace

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestParseBad: every malformed trace is an *Error naming the file, the
// line and the column.
func TestParseBad(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		line       int
		field, msg string
	}{
		{"no header", "", 1, "", "no header"},
		{"unknown column", "offset_s,delay\n0.1,2\n", 1, "delay", "unknown column"},
		{"no offset column", "kind,id\nemail,a\n", 1, "offset_s", "lacks the required offset_s"},
		{"bad offset", "offset_s,kind\n0.5,a\nsoon,b\n", 3, "offset_s", `"soon"`},
		{"negative delay", "offset_s,delay_s\n0.5,-1\n", 2, "delay_s", "seconds >= 0"},
		{"offsets go back", "offset_s\n1.0\n0.5\n", 3, "offset_s", "must not decrease"},
		{"payload too big", "offset_s,payload_bytes\n1,99999999\n", 2, "payload_bytes", "0..1048576"},
		{"duplicate id", "offset_s,id\n1,a\n2,b\n3,a\n", 4, "id", "line 2's id too"},
		{"short line", "offset_s,kind\n1\n", 2, "", "1 fields, the header names 2"},
		{"empty", "offset_s\n", 0, "", "no arrivals"},
		{"json not an object", "{\"offset_s\": 1}\n[1]\n", 2, "", "not a JSON object"},
		{"json unknown key", "{\"offset_s\": 1, \"wait\": 2}\n", 1, "wait", "unknown key"},
		{"json missing offset", "{\"offset_s\": 1}\n{\"kind\": \"a\"}\n", 2, "offset_s", "is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.csv", []byte(tc.data), 256)
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("error %v, want a *trace.Error", err)
			}
			if te.File != "t.csv" || te.Line != tc.line || te.Field != tc.field || !strings.Contains(te.Msg, tc.msg) {
				t.Errorf("got %+v, want line %d field %q and %q", te, tc.line, tc.field, tc.msg)
			}
		})
	}
}

// TestParseGood: CSV and JSON lines read the same arrivals; missing
// columns take their defaults.
func TestParseGood(t *testing.T) {
	csvText := "# a comment\noffset_s,delay_s,kind\n0.25,,email\n1.5,0.75,report\n"
	jsonText := "{\"offset_s\": 0.25, \"kind\": \"email\"}\n\n{\"offset_s\": \"1.5\", \"delay_s\": 0.75, \"kind\": \"report\"}\n"
	for _, data := range []string{csvText, jsonText} {
		tr, err := Parse("t", []byte(data), 64)
		if err != nil {
			t.Fatal(err)
		}
		want := []Arrival{{Offset: 250 * time.Millisecond, Payload: 64, Kind: "email"}, {Offset: 1500 * time.Millisecond, Delay: 750 * time.Millisecond, Payload: 64, Kind: "report"}}
		if len(tr.Arrivals) != 2 || tr.Arrivals[0] != want[0] || tr.Arrivals[1] != want[1] || tr.Span() != 2*time.Second {
			t.Errorf("%q: %+v span %s", data, tr.Arrivals, tr.Span())
		}
	}
}

// TestSynth: the same settings write the same trace; it parses, and its
// arrivals follow the mean rate.
func TestSynth(t *testing.T) {
	s := DefaultSynth()
	s.Duration, s.Bursts = 20*time.Second, 1
	var a, b bytes.Buffer
	n, err := s.Write(&a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(&b); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two writes of one Synth differ")
	}
	tr, err := Parse("synth.csv", a.Bytes(), 0)
	if err != nil || len(tr.Arrivals) != n {
		t.Fatalf("parse: %v, %d of %d arrivals", err, len(tr.Arrivals), n)
	}
	// The first third of the sine's period (its high side: x1.36 on
	// average) and one 5x burst of 3s in 20s (+60%): about 2.2x the rate.
	mean := float64(n) / s.Duration.Seconds()
	if mean < s.Rate*1.8 || mean > s.Rate*2.6 || math.IsNaN(mean) {
		t.Errorf("mean rate %.0f/s for a synth of %g/s", mean, s.Rate)
	}
	if err := (Synth{}).Check(); err == nil || !strings.Contains(err.Error(), "--duration") {
		t.Errorf("a zero Synth: %v, want the --duration named", err)
	}
}
