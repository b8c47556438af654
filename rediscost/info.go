package rediscost

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// parseInfo reads the text of INFO into a NodeInfo. It is lenient on
// purpose: Redis adds fields between versions, so unknown lines, section
// headers and malformed values of fields it does not need are skipped. It
// fails only when a field the cost depends on is absent or unreadable, which
// means the reply was not INFO from a Redis of a known shape.
func parseInfo(addr, text string) (NodeInfo, error) {
	n := NodeInfo{Addr: addr, Calls: map[string]int64{}, UsecByCmd: map[string]int64{}}
	seen := map[string]bool{}
	var errs []error
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(key, "cmdstat_"):
			name := strings.ToLower(strings.TrimPrefix(key, "cmdstat_"))
			f := fields(val)
			calls, err1 := strconv.ParseInt(f["calls"], 10, 64)
			usec, err2 := strconv.ParseInt(f["usec"], 10, 64)
			if err1 != nil || err2 != nil {
				errs = append(errs, fmt.Errorf("%s: %q: %w", addr, line, errors.Join(err1, err2)))
				continue
			}
			n.Calls[name] += calls
			n.UsecByCmd[name] += usec
		case isDB(key):
			keys, err := strconv.ParseInt(fields(val)["keys"], 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q: %w", addr, line, err))
				continue
			}
			n.Keys += keys
		default:
			var err error
			switch key {
			case "used_cpu_sys":
				n.UsedCPUSys, err = strconv.ParseFloat(val, 64)
			case "used_cpu_user":
				n.UsedCPUUser, err = strconv.ParseFloat(val, 64)
			case "total_net_input_bytes":
				n.NetInputBytes, err = strconv.ParseInt(val, 10, 64)
			case "evicted_keys":
				n.EvictedKeys, err = strconv.ParseInt(val, 10, 64)
			case "total_net_output_bytes":
				n.NetOutputBytes, err = strconv.ParseInt(val, 10, 64)
			case "used_memory":
				n.UsedMemory, err = strconv.ParseInt(val, 10, 64)
			case "used_memory_peak":
				n.UsedMemoryPeak, err = strconv.ParseInt(val, 10, 64)
			case "run_id":
				n.RunID = val
			default:
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: field %s: %w", addr, key, err))
				continue
			}
			seen[key] = true
		}
	}
	// Every INFO of the sections Take asks for carries these; commandstats
	// and keyspace may legitimately be empty (right after CONFIG RESETSTAT,
	// or with no keys), so their lines are not required.
	for _, k := range []string{
		"used_cpu_sys", "used_cpu_user", "total_net_input_bytes", "total_net_output_bytes",
		"used_memory", "used_memory_peak",
	} {
		if !seen[k] {
			errs = append(errs, fmt.Errorf("%s: INFO has no %s", addr, k))
		}
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("rediscost: parse INFO: %w", errors.Join(errs...))
	}
	return n, nil
}

// fields splits "calls=12,usec=345,usec_per_call=28.75" into a map.
func fields(s string) map[string]string {
	m := map[string]string{}
	for kv := range strings.SplitSeq(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// isDB reports keyspace keys: "db0", "db15".
func isDB(key string) bool {
	if !strings.HasPrefix(key, "db") || len(key) == 2 {
		return false
	}
	_, err := strconv.Atoi(key[2:])
	return err == nil
}

// parseUsedMemory extracts used_memory from INFO memory, for the sampler.
func parseUsedMemory(text string) (int64, error) {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("rediscost: used_memory %q: %w", v, err)
			}
			return n, nil
		}
	}
	return 0, errors.New("rediscost: INFO memory has no used_memory")
}

// parseUsedCPU is used_cpu_sys + used_cpu_user from INFO cpu, in seconds
// (false when the section is absent).
func parseUsedCPU(text string) (float64, bool) {
	var total float64
	found := 0
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		for _, k := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(line, k); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					total += f
					found++
				}
			}
		}
	}
	return total, found == 2
}

// InfoInt is one integer field of an INFO reply (false when absent).
func InfoInt(text, field string) (int64, bool) {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
