package base

// The key census after a run (jobstore.Censuser): every key under the
// queue's prefix, found with SCAN, by role and type with MEMORY USAGE,
// and what of it nothing will read or remove. It reads members by their
// shape, the same for every strategy: a lease member is "<id>|<token>", a
// sequenced member "<12 hex digits>:<id>", any other member an id; a
// stream entry names its job in its "id" field. It is slow (a few
// commands a key) and runs once, after the drain.

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// CensusGrace is how long past its expiry-list time a finished record may
// still be present before the census calls it a leak: the list is swept
// by the next CompleteMany or Recover, never at once.
const CensusGrace = time.Minute

// CensusMaxKeys bounds the keys the census reads one by one (type, size,
// MEMORY USAGE, status): above it, a run's census counts keys by role
// only, since reading millions of keys after every run would take longer
// than the run.
const CensusMaxKeys = 250_000

// countOnly is the census of a queue above CensusMaxKeys: keys by role.
func (cs *census) countOnly() {
	for k := range cs.keys {
		role := cs.role(k)
		g := cs.byRole[[2]string{role, ""}]
		if g == nil {
			g = &jobstore.KeyGroup{Role: role}
			cs.byRole[[2]string{role, ""}] = g
		}
		g.Count++
	}
	for _, g := range cs.byRole {
		cs.out.Keys = append(cs.out.Keys, *g)
	}
	sortGroups(cs.out.Keys)
	cs.out.Partial = fmt.Sprintf("%d keys, over %d: counted by role only (no sizes, records or leaks)", len(cs.keys), CensusMaxKeys)
}

// censusBatch is how many commands one round trip of the census carries.
const censusBatch = 500

// CensusSpec is what the census needs of a store besides its Core.
type CensusSpec struct {
	// Locate is the store's jobstore.Locator.
	Locate func(ctx context.Context, ids []string) ([]jobstore.Location, error)
	// Group is the stream's consumer group ("" without a stream).
	Group string
}

// census is one census in progress.
type census struct {
	c      *Core
	ctx    context.Context
	out    jobstore.Census
	byRole map[[2]string]*jobstore.KeyGroup
	// records: job id -> its record's PTTL (ms; -1 none).
	records map[string]int64
	// finished: records the census located finished.
	finished map[string]bool
	keys     map[string]string // key -> type
}

var seqMember = regexp.MustCompile(`^[0-9a-f]{12}:`)

// memberID is the job id a member of an index names.
func memberID(m string) string {
	if i := strings.IndexByte(m, '|'); i > 0 {
		return m[:i]
	}
	if seqMember.MatchString(m) {
		return m[13:]
	}
	return m
}

// TakeCensus takes the queue's census (jobstore.Censuser). On a Redis
// Cluster it returns jobstore.ErrUnsupported: SCAN reads one node.
func (c *Core) TakeCensus(ctx context.Context, spec CensusSpec) (jobstore.Census, error) {
	if err := c.Check(); err != nil {
		return jobstore.Census{}, err
	}
	if info, err := c.C.Do(ctx, rclient.Command{Head: []string{"INFO", "cluster"}}); err == nil && strings.Contains(fmt.Sprint(info), "cluster_enabled:1") {
		return jobstore.Census{}, fmt.Errorf("census: %w: SCAN on a Redis Cluster reads one node", jobstore.ErrUnsupported)
	}
	cs := &census{c: c, ctx: ctx, byRole: map[[2]string]*jobstore.KeyGroup{}, records: map[string]int64{}, finished: map[string]bool{}, keys: map[string]string{}}
	if err := cs.scan(); err != nil {
		return cs.out, fmt.Errorf("census: %w", err)
	}
	if len(cs.keys) > CensusMaxKeys {
		cs.countOnly()
		return cs.out, nil
	}
	steps := []func() error{cs.describe, func() error { return cs.classifyRecords(spec.Locate) }, cs.indexes, func() error { return cs.stream(spec.Group) }}
	for _, step := range steps {
		if err := step(); err != nil {
			return cs.out, fmt.Errorf("census: %w", err)
		}
	}
	for _, g := range cs.byRole {
		cs.out.Keys = append(cs.out.Keys, *g)
	}
	sortGroups(cs.out.Keys)
	return cs.out, nil
}

// scan lists every key of the queue.
func (cs *census) scan() error {
	cursor := "0"
	for {
		v, err := cs.c.C.Do(cs.ctx, rclient.Command{Head: []string{"SCAN", cursor, "MATCH", cs.c.Keys.Prefix() + "*", "COUNT", "1000"}})
		if err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		arr, _ := v.([]any)
		if len(arr) != 2 {
			return fmt.Errorf("scan: reply %v", v)
		}
		cursor = fmt.Sprint(arr[0])
		for _, k := range Strings(arr[1]) {
			cs.keys[k] = ""
		}
		if cursor == "0" {
			return nil
		}
	}
}

// role is a key's role: its name under the prefix, with a job id, a
// bucket's start or a claimer's token replaced by *.
func (cs *census) role(key string) string {
	name := strings.TrimPrefix(key, cs.c.Keys.Prefix())
	for _, p := range []string{"job:", "bucket:", "inbox:", "processing:", "floor:job:"} {
		if strings.HasPrefix(name, p) {
			return p + "*"
		}
	}
	return name
}

// describe reads each key's type, size, MEMORY USAGE and TTL.
func (cs *census) describe() error {
	keys := make([]string, 0, len(cs.keys))
	for k := range cs.keys {
		keys = append(keys, k)
	}
	for start := 0; start < len(keys); start += censusBatch {
		batch := keys[start:min(start+censusBatch, len(keys))]
		cmds := make([]rclient.Command, 0, 3*len(batch))
		for _, k := range batch {
			cmds = append(cmds, rclient.Cmd("TYPE", k), rclient.Command{Head: []string{"MEMORY", "USAGE"}, Keys: []string{k}}, rclient.Cmd("PTTL", k))
		}
		res := cs.c.C.DoMulti(cs.ctx, cmds...)
		for i, k := range batch {
			typ, _ := res[3*i].Val.(string)
			if typ == "" || typ == "none" {
				continue // gone since the scan (a record expired)
			}
			cs.keys[k] = typ
			role := cs.role(k)
			g := cs.byRole[[2]string{role, typ}]
			if g == nil {
				g = &jobstore.KeyGroup{Role: role, Type: typ}
				cs.byRole[[2]string{role, typ}] = g
			}
			g.Count++
			g.Bytes += Int(res[3*i+1].Val)
			if Int(res[3*i+2].Val) > 0 {
				g.Expiring++
			}
			if role == "job:*" {
				cs.records[strings.TrimPrefix(k, cs.c.Keys.Job(""))] = Int(res[3*i+2].Val)
			}
		}
	}
	return cs.sizes()
}

// sizes adds each key's member count to its group.
func (cs *census) sizes() error {
	size := map[string]string{"zset": "ZCARD", "hash": "HLEN", "list": "LLEN", "set": "SCARD", "stream": "XLEN"}
	var keys []string
	var cmds []rclient.Command
	for k, typ := range cs.keys {
		if name, ok := size[typ]; ok && cs.role(k) != "job:*" {
			keys = append(keys, k)
			cmds = append(cmds, rclient.Cmd(name, k))
		}
	}
	for i, r := range cs.c.C.DoMulti(cs.ctx, cmds...) {
		if r.Err != nil {
			return fmt.Errorf("size of %s: %w", keys[i], r.Err)
		}
		cs.byRole[[2]string{cs.role(keys[i]), cs.keys[keys[i]]}].Members += Int(r.Val)
	}
	return nil
}

// leak counts one leak of kind, naming it among the first examples.
func (cs *census) leak(kind, example string) {
	if cs.out.Leaks == nil {
		cs.out.Leaks, cs.out.Examples = map[string]int64{}, map[string][]string{}
	}
	cs.out.Leaks[kind]++
	if len(cs.out.Examples[kind]) < 5 {
		cs.out.Examples[kind] = append(cs.out.Examples[kind], example)
	}
}

func parseMs(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// sortGroups orders the key groups by role, then type.
func sortGroups(gs []jobstore.KeyGroup) {
	slices.SortFunc(gs, func(a, b jobstore.KeyGroup) int {
		return cmp.Or(strings.Compare(a.Role, b.Role), strings.Compare(a.Type, b.Type))
	})
}
