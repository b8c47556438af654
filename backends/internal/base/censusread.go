package base

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"context"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// records_ classifies every record: open (reachable, or a leak in no
// index), or finished and kept (a TTL, or a due time in the expiry list),
// or finished and kept past its time or forever (leaks).
func (cs *census) classifyRecords(locate func(context.Context, []string) ([]jobstore.Location, error)) error {
	listed, err := cs.expiryList()
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(cs.records))
	for id := range cs.records {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	cs.out.Records = int64(len(ids))
	var locs []jobstore.Location
	if locate != nil {
		if locs, err = locate(cs.ctx, ids); err != nil {
			return fmt.Errorf("locate: %w", err)
		}
	}
	now := cs.c.Now().UnixMilli()
	for i, id := range ids {
		if i >= len(locs) || !locs[i].Found {
			continue // gone since the scan, or no Locate: not judged
		}
		switch l := locs[i]; {
		case isOpenStatus(l.Status):
			cs.out.Open++
			if !l.Reachable && l.Later == "" {
				cs.leak(jobstore.LeakRecordNoIndex, id+" ("+l.Status.String()+")")
			}
		case cs.records[id] > 0:
			cs.finished[id] = true
			cs.out.Kept++ // a TTL: Redis removes it
		default:
			cs.finished[id] = true
			due, ok := listed[id]
			switch {
			case !ok:
				cs.leak(jobstore.LeakNeverExpires, id+" ("+l.Status.String()+")")
			case due < now-CensusGrace.Milliseconds():
				cs.leak(jobstore.LeakExpiredPresent, fmt.Sprintf("%s (due %dms ago)", id, now-due))
			default:
				cs.out.Kept++
			}
		}
	}
	return nil
}

func isOpenStatus(s jobstore.Status) bool {
	return s == jobstore.StatusQueued || s == jobstore.StatusScheduled || s == jobstore.StatusInProgress
}

// expiryList reads the expiry list: id -> the store-clock ms its record
// may go.
func (cs *census) expiryList() (map[string]int64, error) {
	out := map[string]int64{}
	if cs.keys[cs.c.Keys.Expire()] != "list" {
		return out, nil
	}
	v, err := cs.c.C.Do(cs.ctx, rclient.Cmd("LRANGE", cs.c.Keys.Expire(), "0", "-1"))
	if err != nil {
		return nil, fmt.Errorf("expiry list: %w", err)
	}
	for _, e := range Strings(v) {
		parts := strings.Split(e, "|")
		due, ok := parseMs(parts[0])
		if !ok {
			continue
		}
		for _, id := range parts[1:] {
			out[id] = due
		}
	}
	return out, nil
}

// indexRoles are the sorted sets whose members name jobs.
var indexRoles = []string{"queue", "ready", "delayed", "active", "dead", "processing"}

// indexes finds index members whose record is gone, and bucket index
// members whose bucket is.
func (cs *census) indexes() error {
	for k, typ := range cs.keys {
		role := cs.role(k)
		var cmd rclient.Command
		switch {
		case typ == "zset" && (slices.Contains(indexRoles, role) || role == "buckets"):
			cmd = rclient.Cmd("ZRANGE", k, "0", "-1")
		case typ == "hash" && role == "bucket:*":
			cmd = rclient.Cmd("HKEYS", k)
		default:
			continue
		}
		v, err := cs.c.C.Do(cs.ctx, cmd)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		for _, m := range Strings(v) {
			if role == "buckets" {
				if t := cs.keys[m]; t == "" {
					cs.leak(jobstore.LeakEmptyBucket, m)
				}
				continue
			}
			if _, ok := cs.records[memberID(m)]; !ok {
				cs.leak(jobstore.LeakIndexNoRecord, role+" "+m)
			}
		}
	}
	return nil
}

// streamID orders stream entry ids ("<ms>-<seq>").
func streamID(s string) [2]uint64 {
	ms, seq, _ := strings.Cut(s, "-")
	a, _ := strconv.ParseUint(ms, 10, 64)
	b, _ := strconv.ParseUint(seq, 10, 64)
	return [2]uint64{a, b}
}

func streamBefore(a, b [2]uint64) bool { return a[0] < b[0] || a[0] == b[0] && a[1] <= b[1] }

// stream judges the stream's entries and its group's pending list: a
// pending entry whose job finished or whose entry or record is gone, an
// entry the group has read and holds no more (nothing reads or deletes
// it), an entry not yet read whose record is gone.
func (cs *census) stream(group string) error {
	key := cs.c.Keys.Stream()
	if group == "" || cs.keys[key] != "stream" {
		return nil
	}
	last, err := cs.lastDelivered(key, group)
	if err != nil {
		return err
	}
	entries, err := cs.entries(key)
	if err != nil {
		return err
	}
	pending := map[string]bool{}
	v, err := cs.c.C.Do(cs.ctx, rclient.Cmd("XPENDING", key, group, "-", "+", "1000000"))
	if err != nil {
		return fmt.Errorf("xpending: %w", err)
	}
	for _, p := range asSlice(v) {
		eid := fmt.Sprint(asSlice(p)[0])
		pending[eid] = true
		id, ok := entries[eid]
		switch {
		case !ok:
			cs.leak(jobstore.LeakPELFinished, eid+" (entry deleted)")
		case !cs.openRecord(id):
			cs.leak(jobstore.LeakPELFinished, eid+" "+id)
		}
	}
	lastID := streamID(last)
	var done []string
	for eid, id := range entries {
		switch {
		case pending[eid]:
		case streamBefore(streamID(eid), lastID):
			done = append(done, eid+" "+id)
		default:
			if _, ok := cs.records[id]; !ok {
				cs.leak(jobstore.LeakIndexNoRecord, "stream "+eid+" "+id)
			}
		}
	}
	return cs.doneEntries(done)
}

// doneEntries judges the entries read and not pending: up to a listpack
// node of them is what a trim by whole nodes keeps; more is a leak.
func (cs *census) doneEntries(done []string) error {
	v, err := cs.c.C.Do(cs.ctx, rclient.Command{Head: []string{"CONFIG", "GET", "stream-node-max-entries"}})
	if err != nil {
		return fmt.Errorf("config get stream-node-max-entries: %w", err)
	}
	node := int64(100)
	for _, x := range fields(v) {
		if n, ok := parseMs(fmt.Sprint(x)); ok && n > 0 {
			node = n
		}
	}
	if int64(len(done)) <= node {
		cs.out.AwaitingTrim = int64(len(done))
		return nil
	}
	slices.Sort(done)
	for _, d := range done {
		cs.leak(jobstore.LeakStreamUnread, d)
	}
	return nil
}

// openRecord says whether job id's record is present and not finished by
// the census's own read (a record the census did not locate counts open).
func (cs *census) openRecord(id string) bool {
	_, ok := cs.records[id]
	return ok && !cs.finished[id]
}

// lastDelivered is the group's last-delivered-id.
func (cs *census) lastDelivered(key, group string) (string, error) {
	v, err := cs.c.C.Do(cs.ctx, rclient.Command{Head: []string{"XINFO", "GROUPS"}, Keys: []string{key}})
	if err != nil {
		return "", fmt.Errorf("xinfo groups: %w", err)
	}
	for _, g := range asSlice(v) {
		f := fields(g)
		if f["name"] == group {
			return fmt.Sprint(f["last-delivered-id"]), nil
		}
	}
	return "0-0", nil
}

// entries reads the stream: entry id -> job id.
func (cs *census) entries(key string) (map[string]string, error) {
	out := map[string]string{}
	from := "-"
	for {
		v, err := cs.c.C.Do(cs.ctx, rclient.Cmd("XRANGE", key, from, "+", "COUNT", "1000"))
		if err != nil {
			return nil, fmt.Errorf("xrange: %w", err)
		}
		arr := asSlice(v)
		for _, e := range arr {
			pair := asSlice(e)
			if len(pair) != 2 {
				continue
			}
			eid := fmt.Sprint(pair[0])
			out[eid] = fmt.Sprint(fields(pair[1])["id"])
			from = "(" + eid
		}
		if len(arr) < 1000 {
			return out, nil
		}
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// fields reads a flat field-value array or a map reply.
func fields(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case []any:
		m := make(map[string]any, len(x)/2)
		for i := 0; i+1 < len(x); i += 2 {
			if k, ok := x[i].(string); ok {
				m[k] = x[i+1]
			}
		}
		return m
	}
	return nil
}
