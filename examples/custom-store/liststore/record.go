package liststore

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/aebench/aebench/jobstore"
)

// pairs reads an HGETALL reply: a map from go-redis and rueidis alike, or
// a flat list of field, value pairs.
func pairs(v any) map[string]string {
	out := map[string]string{}
	switch x := v.(type) {
	case map[string]string:
		return x
	case map[string]any:
		for k, e := range x {
			out[k], _ = e.(string)
		}
	case map[any]any:
		for k, e := range x {
			ks, _ := k.(string)
			out[ks], _ = e.(string)
		}
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			k, _ := x[i].(string)
			out[k], _ = x[i+1].(string)
		}
	}
	return out
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

func msTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// decode builds a Job from its record's fields.
func decode(id string, v any) jobstore.Job {
	m := pairs(v)
	j := jobstore.Job{ID: id, Name: m["name"], Status: jobstore.Status(toInt(m["status"])), WorkerID: m["worker"],
		Error: m["error"], MaxRetries: int(toInt(m["max_retries"])),
		CreatedAt: msTime(m["created_at"]), LastUpdatedAt: msTime(m["updated_at"]),
		StartedAt: msTime(m["started_at"]), CompletedAt: msTime(m["completed_at"])}
	j.LeaseToken, j.LeaseDeadline = m["token"], msTime(m["deadline"])
	// The maps were written by Enqueue from json.Marshal: they decode.
	_ = json.Unmarshal([]byte(m["headers"]), &j.Headers)
	_ = json.Unmarshal([]byte(m["route"]), &j.RouteParams)
	_ = json.Unmarshal([]byte(m["query"]), &j.QueryParams)
	if p, ok := m["payload"]; ok && p != "" {
		j.Payload = []byte(p)
	}
	if r, ok := m["result"]; ok && r != "" {
		j.Result = []byte(r)
	}
	return j
}

// st is a status as the record keeps it: its number.
func st(s jobstore.Status) string { return strconv.Itoa(int(s)) }
