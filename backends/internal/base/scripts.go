package base

import (
	"context"
	"embed"
	"fmt"
	"strings"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

//go:embed lua
var libFS embed.FS

// Scripts is a backend's set of composed scripts for one encoding, by name.
type Scripts map[string]*rclient.Script

// Shared script bodies (lua/shared/) that a backend may take as they are.
const (
	ScriptActivate = "activate" // claim step 2 after a pop that granted leases
	ScriptExtend   = "extend"
	ScriptComplete = "complete"
)

// ComposeScripts builds each body in bodies (read from the backend's embedded
// lua/ folder; the file name without .lua is the script's name) and each
// shared body named in shared, on top of the encoding's record prelude and
// the shared library, and loads them all on c.
func ComposeScripts(ctx context.Context, c rclient.Client, enc jobstore.Encoding, bodies embed.FS, shared ...string) (Scripts, error) {
	prelude, err := libFS.ReadFile("lua/rec_" + string(enc) + ".lua")
	if err != nil {
		return nil, fmt.Errorf("encoding %q has no record prelude: %w", enc, err)
	}
	lib, err := libFS.ReadFile("lua/lib.lua")
	if err != nil {
		return nil, err
	}
	files, err := bodies.ReadDir("lua")
	if err != nil {
		return nil, fmt.Errorf("backend scripts: %w", err)
	}
	out := Scripts{}
	add := func(name string, body []byte) error {
		s := rclient.NewScript(name, string(prelude)+"\n"+string(lib)+"\n"+string(body))
		if err := c.Load(ctx, s); err != nil {
			return fmt.Errorf("load script %s: %w", name, err)
		}
		out[name] = s
		return nil
	}
	for _, name := range shared {
		body, err := libFS.ReadFile("lua/shared/" + name + ".lua")
		if err != nil {
			return nil, fmt.Errorf("no shared script %q: %w", name, err)
		}
		if err := add(name, body); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		name, ok := strings.CutSuffix(f.Name(), ".lua")
		if !ok {
			continue
		}
		body, err := bodies.ReadFile("lua/" + f.Name())
		if err != nil {
			return nil, err
		}
		if err := add(name, body); err != nil {
			return nil, err
		}
	}
	return out, nil
}
