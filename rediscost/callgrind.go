package rediscost

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Instructions metering: a redis-server run under valgrind's callgrind
// (redisserver.Options.Callgrind starts it with --instr-atstart=no) counts
// the instructions it executes between Start and Stop, which switch
// instrumentation on with callgrind_control and dump it at the end. On a
// shared, noisy machine the count is stable where time is not (two windows
// of 10,000 LPUSHes: 57.72M and 57.64M instructions), so a gate can read it
// from a single repeat. valgrind slows Redis about fifty-fold: timings of a
// metered run are distorted and never compared with unmetered ones.
//
// The dump is read by ParseCallgrind; the format is valgrind's "Callgrind
// format specification" (docs/callgrind-format.html in valgrind): name
// compression "(id) name", "calls=" lines followed by the call's inclusive
// cost, "summary:"/"totals:" for the whole.

// ErrNoValgrind is returned when valgrind or callgrind_control is missing.
var ErrNoValgrind = errors.New("valgrind not installed (apt-get install valgrind)")

// Profile is one callgrind dump of Redis, in instructions (Ir).
type Profile struct {
	// Total is every instruction Redis executed in the window.
	Total int64
	// Inclusive is, per function, the inclusive cost of all calls to it
	// (recursion counts once per edge: a function reached through itself,
	// such as call() under EXEC or a script, is counted at each level).
	Inclusive map[string]int64
	// Commands is the inclusive cost of each command implementation
	// (lpushCommand -> "lpush") as call() ran it; a command run inside a
	// script or MULTI/EXEC counts here and in its script's or EXEC's cost.
	Commands map[string]int64
}

// Costs is a window's instructions with the parts that depend on time
// rather than on work taken out: serverCron runs hz times a second, so its
// share grows with the window's length (and valgrind stretches it); the
// meter's own INFO commands are not the jobs' either.
type Costs struct {
	// Work is Total minus serverCron and the excluded commands.
	Work int64
	// CommandWork is processCommand's inclusive cost minus the excluded
	// commands: the instructions spent inside commands and their dispatch.
	CommandWork int64
	// Commands are Profile.Commands without the excluded ones.
	Commands map[string]int64
	Total    int64
}

// Split removes serverCron and the named commands (e.g. "info") from p.
func (p Profile) Split(exclude ...string) Costs {
	c := Costs{Total: p.Total, Commands: map[string]int64{}}
	var excluded int64
	for name, n := range p.Commands {
		if containsFold(exclude, name) {
			excluded += n
			continue
		}
		c.Commands[name] = n
	}
	c.Work = p.Total - p.Inclusive["serverCron"] - excluded
	c.CommandWork = p.Inclusive["processCommand"] - excluded
	return c
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// ParseCallgrind reads a callgrind dump with one event (Ir).
func ParseCallgrind(r io.Reader) (Profile, error) {
	p := Profile{Inclusive: map[string]int64{}, Commands: map[string]int64{}}
	names := map[string]string{} // "(id)" -> name, for fn= and cfn=
	npos := 1                    // position columns before the costs
	var fn, callee string
	inCall := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		switch {
		case t == "" || t[0] == '#':
		case strings.HasPrefix(t, "positions:"):
			npos = len(strings.Fields(strings.TrimPrefix(t, "positions:")))
		case strings.HasPrefix(t, "events:"):
			if ev := strings.Fields(strings.TrimPrefix(t, "events:")); len(ev) != 1 || ev[0] != "Ir" {
				return p, fmt.Errorf("callgrind dump line %d: events %v; only Ir is read", line, ev)
			}
		case strings.HasPrefix(t, "summary:"), strings.HasPrefix(t, "totals:"):
			_, v, _ := strings.Cut(t, ":")
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return p, fmt.Errorf("callgrind dump line %d: %q: %w", line, t, err)
			}
			p.Total = max(p.Total, n)
		case strings.HasPrefix(t, "fn="):
			fn = resolveName(names, t[3:])
		case strings.HasPrefix(t, "cfn="):
			callee = resolveName(names, t[4:])
		case strings.HasPrefix(t, "calls="):
			inCall = true
		case isCostLine(t):
			if !inCall {
				continue
			}
			inCall = false
			f := strings.Fields(t)
			if len(f) <= npos {
				continue // a call line without cost: nothing executed
			}
			n, err := strconv.ParseInt(f[npos], 10, 64)
			if err != nil {
				return p, fmt.Errorf("callgrind dump line %d: cost %q: %w", line, f[npos], err)
			}
			p.Inclusive[callee] += n
			if fn == "call" && strings.HasSuffix(callee, "Command") {
				p.Commands[strings.ToLower(strings.TrimSuffix(callee, "Command"))] += n
			}
		}
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("callgrind dump: %w", err)
	}
	if p.Total == 0 {
		return p, errors.New("callgrind dump: no summary or totals line")
	}
	return p, nil
}

func isCostLine(t string) bool {
	c := rune(t[0])
	return unicode.IsDigit(c) || c == '+' || c == '-' || c == '*'
}

// resolveName reads "(id) name" (defines id) or "(id)" (refers to it).
func resolveName(names map[string]string, s string) string {
	if !strings.HasPrefix(s, "(") {
		return s
	}
	id, rest, ok := strings.Cut(s, ")")
	if !ok {
		return s
	}
	id += ")"
	if rest = strings.TrimSpace(rest); rest != "" {
		names[id] = rest
		return rest
	}
	return names[id]
}

// Callgrind controls the callgrind instance that runs one redis-server.
type Callgrind struct {
	// PID is redis-server's process id (valgrind runs it in place).
	PID int
	// OutFile is the --callgrind-out-file the server was started with;
	// dumps are written beside it as OutFile.1, OutFile.2, ...
	OutFile string
}

// CheckValgrind says whether valgrind and callgrind_control are on PATH.
func CheckValgrind() error {
	for _, b := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNoValgrind, b, err)
		}
	}
	return nil
}

func (c Callgrind) control(ctx context.Context, arg string) error {
	out, err := exec.CommandContext(ctx, "callgrind_control", arg, strconv.Itoa(c.PID)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("callgrind_control %s %d: %w: %s", arg, c.PID, err, strings.TrimSpace(string(out)))
	}
	if !strings.Contains(string(out), "OK") {
		return fmt.Errorf("callgrind_control %s %d: %s", arg, c.PID, strings.TrimSpace(string(out)))
	}
	return nil
}

// Start zeroes the counters and switches instrumentation on.
func (c Callgrind) Start(ctx context.Context) error {
	if err := c.control(ctx, "--zero"); err != nil {
		return err
	}
	return c.control(ctx, "--instr=on")
}

// Stop dumps the window, switches instrumentation off and parses the dump.
func (c Callgrind) Stop(ctx context.Context) (Profile, error) {
	before := dumps(c.OutFile)
	if err := c.control(ctx, "--dump=aebench-window"); err != nil {
		return Profile{}, err
	}
	_ = c.control(ctx, "--instr=off")
	// callgrind_control returns once the dump is requested; the file is
	// complete when its "totals:" line is there.
	deadline := time.Now().Add(30 * time.Second)
	for {
		for f := range dumps(c.OutFile) {
			if before[f] {
				continue
			}
			if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte("\ntotals:")) {
				return ParseCallgrind(bytes.NewReader(b))
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return Profile{}, fmt.Errorf("callgrind: no complete dump beside %s within 30s", c.OutFile)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func dumps(out string) map[string]bool {
	m := map[string]bool{}
	fs, _ := filepath.Glob(out + ".*")
	for _, f := range fs {
		m[f] = true
	}
	return m
}
