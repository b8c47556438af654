package analysis

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aebench/aebench/harness/summary"
)

// CensusHeader heads the key census table (CensusRow), in the terminal
// and on the page.
func CensusHeader() []string {
	return []string{"backend", "keys", "memory", "records", "open", "kept", "awaiting trim", "leaks", "keys by role"}
}

// CensusRow is one run's census: what its queue left in Redis after the
// drain. ok is false when the run has none.
func CensusRow(name string, r summary.RunSummary) (row []string, ok bool) {
	c := r.Census
	if c == nil {
		return nil, false
	}
	var keys, bytes int64
	roles := make([]string, 0, len(c.Keys))
	for _, g := range c.Keys {
		keys, bytes = keys+g.Count, bytes+g.Bytes
		role := fmt.Sprintf("%s %s %d", g.Role, g.Type, g.Count)
		if g.Members > 0 {
			role += fmt.Sprintf(" (%d)", g.Members)
		}
		if g.Expiring > 0 {
			role += fmt.Sprintf(" [%d with a TTL]", g.Expiring)
		}
		roles = append(roles, role)
	}
	leaks := "none"
	if c.Partial != "" {
		leaks = "not read: " + c.Partial
	}
	if n := c.LeakCount(); n > 0 {
		kinds := slices.Sorted(maps.Keys(c.Leaks))
		parts := make([]string, len(kinds))
		for i, k := range kinds {
			parts[i] = fmt.Sprintf("%s %d", k, c.Leaks[k])
		}
		leaks = strings.Join(parts, ", ")
	}
	return []string{name, fmt.Sprint(keys), fmt.Sprintf("%.1fKiB", float64(bytes)/1024), fmt.Sprint(c.Records), fmt.Sprint(c.Open), fmt.Sprint(c.Kept),
		fmt.Sprint(c.AwaitingTrim), leaks, strings.Join(roles, ", ")}, true
}

// CensusNote explains the table once.
const CensusNote = "Key census after the drain: every key under the queue's hash tag (SCAN), with MEMORY USAGE; records open (queued, scheduled, running) and kept (finished, within retention); " +
	"stream entries read and done with that a trim by whole listpack nodes still holds (awaiting trim); and leaks: what nothing will read or remove " +
	"(an index entry without its record, an open record in no index, a pending entry of a finished job, read entries beyond a node, an empty bucket, a finished record kept forever or past its expiry)."
