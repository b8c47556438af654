// Package trace reads and writes arrival traces: yesterday's traffic, a
// line per job, that producers.trace replays against a store (docs/traces.md
// has the format). It holds the parsed trace, its parser with errors that
// name the file, line and column, and a synthetic trace generator for
// people without one (aebench trace synth).
package trace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Arrival is one line of a trace: a job arriving Offset after the trace's
// start, delayed by Delay (0: immediate), of Payload bytes and a kind.
type Arrival struct {
	Offset  time.Duration
	Delay   time.Duration
	Payload int
	Kind    string
	ID      string
}

// Trace is a parsed trace, in arrival order.
type Trace struct {
	// Source is the file it came from.
	Source   string
	Arrivals []Arrival
	// SHA256 identifies the file's bytes, for the run's record.
	SHA256 string
}

// Span is the trace's length: its last arrival's offset, rounded up to a
// whole second (one arrival at 0 still spans a second).
func (t *Trace) Span() time.Duration {
	if t == nil || len(t.Arrivals) == 0 {
		return 0
	}
	return (t.Arrivals[len(t.Arrivals)-1].Offset/time.Second + 1) * time.Second
}

// MaxPayload is the largest payload of the trace (0 for none).
func (t *Trace) MaxPayload() int {
	if t == nil {
		return 0
	}
	m := 0
	for _, a := range t.Arrivals {
		m = max(m, a.Payload)
	}
	return m
}

// PerSecond counts the arrivals of each second of the trace.
func (t *Trace) PerSecond() []int {
	out := make([]int, int(t.Span()/time.Second))
	for _, a := range t.Arrivals {
		out[int(a.Offset/time.Second)]++
	}
	return out
}

// Error is a malformed trace line: the file, its line and column (field).
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Msg
}

// Columns lists a trace's fields in order; offset_s is required, the rest
// optional.
func Columns() []string { return []string{"offset_s", "delay_s", "payload_bytes", "kind", "id"} }

// MaxPayload bounds a line's payload, as producers.payload is bounded.
const MaxPayload = 1 << 20

// Parse reads a trace from data: CSV with a header naming its Columns(), or
// JSON lines (the first non-blank byte is '{'). defaultPayload fills lines
// that give none. Offsets must not decrease; ids, where given, must be
// unique.
func Parse(file string, data []byte, defaultPayload int) (*Trace, error) {
	sum := sha256.Sum256(data)
	t := &Trace{Source: file, SHA256: hex.EncodeToString(sum[:])}
	var err error
	if b := bytes.TrimLeft(data, " \t\r\n"); len(b) > 0 && b[0] == '{' {
		err = t.parseJSONLines(file, data, defaultPayload)
	} else {
		err = t.parseCSV(file, data, defaultPayload)
	}
	if err != nil {
		return nil, err
	}
	if len(t.Arrivals) == 0 {
		return nil, &Error{File: file, Msg: "the trace has no arrivals"}
	}
	return t, nil
}

// parseCSV reads a CSV trace: a header line, then one arrival a line.
func (t *Trace) parseCSV(file string, data []byte, defaultPayload int) error {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment, r.FieldsPerRecord, r.TrimLeadingSpace = '#', -1, true
	head, err := r.Read()
	if err != nil {
		return &Error{File: file, Line: 1, Msg: "no header: the first line names the Columns(), e.g. " + strings.Join(Columns(), ",")}
	}
	idx := map[string]int{}
	for i, h := range head {
		h = strings.TrimSpace(h)
		if !slices.Contains(Columns(), h) {
			return &Error{File: file, Line: 1, Field: h, Msg: fmt.Sprintf("unknown column; allowed: %s (offset_s required)", strings.Join(Columns(), ", "))}
		}
		idx[h] = i
	}
	if _, ok := idx["offset_s"]; !ok {
		return &Error{File: file, Line: 1, Field: "offset_s", Msg: "the header lacks the required offset_s column"}
	}
	ids := map[string]int{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			return &Error{File: file, Line: line, Msg: err.Error()}
		}
		if len(rec) != len(head) {
			return &Error{File: file, Line: line, Msg: fmt.Sprintf("%d fields, the header names %d", len(rec), len(head))}
		}
		get := func(c string) string {
			if i, ok := idx[c]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		if err := t.line(file, line, get, defaultPayload, ids); err != nil {
			return err
		}
	}
}

// parseJSONLines reads a JSON-lines trace: an object a line with the
// columns' names as keys.
func (t *Trace) parseJSONLines(file string, data []byte, defaultPayload int) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4*MaxPayload)
	ids := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			return &Error{File: file, Line: line, Msg: "not a JSON object: " + err.Error()}
		}
		for k := range m {
			if !slices.Contains(Columns(), k) {
				return &Error{File: file, Line: line, Field: k, Msg: fmt.Sprintf("unknown key; allowed: %s (offset_s required)", strings.Join(Columns(), ", "))}
			}
		}
		get := func(c string) string {
			switch v := m[c].(type) {
			case nil:
				return ""
			case string:
				return v
			case float64:
				return strconv.FormatFloat(v, 'f', -1, 64)
			default:
				return fmt.Sprint(v)
			}
		}
		if err := t.line(file, line, get, defaultPayload, ids); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &Error{File: file, Msg: err.Error()}
	}
	return nil
}

// line reads one data line through get and appends its arrival; the
// error names the file, the line and the column.
func (t *Trace) line(file string, line int, get func(string) string, defaultPayload int, ids map[string]int) error {
	a, err := arrival(get, defaultPayload)
	if err == nil {
		err = t.add(a, ids, line)
	}
	if err == nil {
		return nil
	}
	var fe *fieldErr
	if errors.As(err, &fe) {
		return &Error{File: file, Line: line, Field: fe.field, Msg: fe.msg}
	}
	return &Error{File: file, Line: line, Msg: err.Error()}
}

// fieldErr is a bad value in one column.
type fieldErr struct{ field, msg string }

func (e *fieldErr) Error() string { return e.field + ": " + e.msg }

// arrival reads one line's columns.
func arrival(get func(string) string, defaultPayload int) (Arrival, error) {
	a := Arrival{Payload: defaultPayload, Kind: get("kind"), ID: get("id")}
	secs := func(c string, required bool) (time.Duration, error) {
		v := get(c)
		if v == "" {
			if required {
				return 0, &fieldErr{c, "is required (seconds from the trace's start, e.g. 12.250)"}
			}
			return 0, nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 7*24*3600 {
			return 0, &fieldErr{c, fmt.Sprintf("%q: allowed: seconds >= 0, at most a week (12.250)", v)}
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	var err error
	if a.Offset, err = secs("offset_s", true); err != nil {
		return a, err
	}
	if a.Delay, err = secs("delay_s", false); err != nil {
		return a, err
	}
	if v := get("payload_bytes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxPayload {
			return a, &fieldErr{"payload_bytes", fmt.Sprintf("%q: allowed: an integer 0..%d", v, MaxPayload)}
		}
		a.Payload = n
	}
	if strings.ContainsAny(a.Kind, " \t,") {
		return a, &fieldErr{"kind", fmt.Sprintf("%q: a kind is one word", a.Kind)}
	}
	return a, nil
}

// add appends a, checking the order of offsets and that an id is new.
func (t *Trace) add(a Arrival, ids map[string]int, line int) error {
	if n := len(t.Arrivals); n > 0 && a.Offset < t.Arrivals[n-1].Offset {
		return &fieldErr{"offset_s", fmt.Sprintf("%.3f is before the line above's %.3f: offsets must not decrease", a.Offset.Seconds(), t.Arrivals[n-1].Offset.Seconds())}
	}
	if a.ID != "" {
		if first, dup := ids[a.ID]; dup {
			return &fieldErr{"id", fmt.Sprintf("%q is line %d's id too: ids must be unique", a.ID, first)}
		}
		ids[a.ID] = line
	}
	t.Arrivals = append(t.Arrivals, a)
	return nil
}
