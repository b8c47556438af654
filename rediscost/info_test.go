package rediscost

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// infoText is trimmed INFO output of redis 7.0.15, CRLF line ends as sent.
const infoText = "# Stats\r\n" +
	"total_connections_received:7\r\n" +
	"total_net_input_bytes:12345\r\n" +
	"total_net_output_bytes:67890\r\n" +
	"instantaneous_ops_per_sec:3\r\n" +
	"\r\n" +
	"# CPU\r\n" +
	"used_cpu_sys:1.234567\r\n" +
	"used_cpu_user:0.500000\r\n" +
	"used_cpu_sys_children:0.000000\r\n" +
	"\r\n" +
	"# Memory\r\n" +
	"used_memory:1048576\r\n" +
	"used_memory_human:1.00M\r\n" +
	"used_memory_peak:2097152\r\n" +
	"used_memory_peak_human:2.00M\r\n" +
	"\r\n" +
	"# Commandstats\r\n" +
	"cmdstat_evalsha:calls=12,usec=345,usec_per_call=28.75,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_set:calls=100,usec=150,usec_per_call=1.50,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_client|setinfo:calls=2,usec=3,usec_per_call=1.50,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_info:calls=4,usec=400,usec_per_call=100.00,rejected_calls=0,failed_calls=0\r\n" +
	"\r\n" +
	"# Keyspace\r\n" +
	"db0:keys=10,expires=2,avg_ttl=1000\r\n" +
	"db3:keys=5,expires=0,avg_ttl=0\r\n"

func TestParseInfo(t *testing.T) {
	full := NodeInfo{
		Addr:           "n1",
		Calls:          map[string]int64{"evalsha": 12, "set": 100, "client|setinfo": 2, "info": 4},
		UsecByCmd:      map[string]int64{"evalsha": 345, "set": 150, "client|setinfo": 3, "info": 400},
		UsedCPUSys:     1.234567,
		UsedCPUUser:    0.5,
		NetInputBytes:  12345,
		NetOutputBytes: 67890,
		UsedMemory:     1048576,
		UsedMemoryPeak: 2097152,
		Keys:           15,
	}
	required := "used_cpu_sys:1\nused_cpu_user:2\ntotal_net_input_bytes:3\ntotal_net_output_bytes:4\nused_memory:5\nused_memory_peak:6\n"
	cases := []struct {
		name    string
		text    string
		want    *NodeInfo
		wantErr string
	}{
		{name: "full CRLF", text: infoText, want: &full},
		{name: "LF only", text: strings.ReplaceAll(infoText, "\r\n", "\n"), want: &full},
		{name: "unknown lines ignored", text: "garbage without colon\nfuture_field:xyz\ncmdstat_new_cmd:calls=1,usec=2,new_field=q\n" + required,
			want: &NodeInfo{Addr: "n1", Calls: map[string]int64{"new_cmd": 1}, UsecByCmd: map[string]int64{"new_cmd": 2},
				UsedCPUSys: 1, UsedCPUUser: 2, NetInputBytes: 3, NetOutputBytes: 4, UsedMemory: 5, UsedMemoryPeak: 6}},
		{name: "no commandstats, no keys after RESETSTAT", text: required,
			want: &NodeInfo{Addr: "n1", Calls: map[string]int64{}, UsecByCmd: map[string]int64{},
				UsedCPUSys: 1, UsedCPUUser: 2, NetInputBytes: 3, NetOutputBytes: 4, UsedMemory: 5, UsedMemoryPeak: 6}},
		{name: "upper-case command name folded", text: "cmdstat_GET:calls=3,usec=4\n" + required,
			want: &NodeInfo{Addr: "n1", Calls: map[string]int64{"get": 3}, UsecByCmd: map[string]int64{"get": 4},
				UsedCPUSys: 1, UsedCPUUser: 2, NetInputBytes: 3, NetOutputBytes: 4, UsedMemory: 5, UsedMemoryPeak: 6}},
		{name: "missing cpu section", text: "used_memory:5\n", wantErr: "no used_cpu_sys"},
		{name: "bad number", text: strings.Replace(required, "used_memory:5", "used_memory:five", 1), wantErr: "used_memory"},
		{name: "bad cmdstat", text: "cmdstat_get:calls=x,usec=1\n" + required, wantErr: "cmdstat_get"},
		{name: "not INFO at all", text: "OK", wantErr: "no used_memory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseInfo("n1", tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, *tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, *tc.want)
			}
		})
	}
}

func TestParseUsedMemory(t *testing.T) {
	cases := []struct {
		text    string
		want    int64
		wantErr bool
	}{
		{"# Memory\r\nused_memory:1234\r\nused_memory_human:1.2K\r\n", 1234, false},
		{"used_memory_peak:99\n", 0, true}, // a prefix of another field does not count
		{"used_memory:x\n", 0, true},
	}
	for _, tc := range cases {
		got, err := parseUsedMemory(tc.text)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parseUsedMemory(%q) = %d, %v; want %d, error %v", tc.text, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseCommandAndStatName(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		wantName string
		wantN    int // -1: all of in
		wantOK   bool
	}{
		{"info with sections", "*3\r\n$4\r\ninfo\r\n$6\r\nmemory\r\n$3\r\ncpu\r\n", "info", -1, true},
		{"container command", "*3\r\n$6\r\nCLIENT\r\n$7\r\nSETINFO\r\n$8\r\nLIB-NAME\r\n", "client|setinfo", -1, true},
		{"hello", "*2\r\n$5\r\nhello\r\n$1\r\n2\r\n", "hello", -1, true},
		{"partial header", "*2\r", "", 0, false},
		{"partial argument", "*2\r\n$5\r\nhel", "", 0, false},
		{"not RESP", "PING\r\n", "", 6, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantN < 0 { // the whole input
				tc.wantN = len(tc.in)
			}
			args, n, ok := parseCommand([]byte(tc.in))
			if ok != tc.wantOK || n != tc.wantN || statName(args) != tc.wantName {
				t.Errorf("got %q n=%d ok=%v, want %q n=%d ok=%v", statName(args), n, ok, tc.wantName, tc.wantN, tc.wantOK)
			}
		})
	}
}

func TestMeterSplitWrites(t *testing.T) {
	m := newMeter()
	stream := "*2\r\n$5\r\nhello\r\n$1\r\n2\r\n*1\r\n$4\r\ninfo\r\n*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n"
	m.gotRead(10)
	for i := 0; i < len(stream); i += 3 { // arrive in small pieces
		m.wrote([]byte(stream[i:min(i+3, len(stream))]))
	}
	o, readAtInfo := m.snapshot()
	want := map[string]int64{"hello": 1, "set": 1}
	if !reflect.DeepEqual(o.Calls, want) || o.NetIn != int64(len(stream)) || o.NetOut != 10 || readAtInfo != 10 {
		t.Errorf("got %+v readAtInfo=%d, want calls %v in %d out 10", o, readAtInfo, want, len(stream))
	}
}

func node(addr string, calls, usec map[string]int64, cpu float64, in, out, mem, peak, keys int64) NodeInfo {
	return NodeInfo{Addr: addr, Calls: calls, UsecByCmd: usec, UsedCPUSys: cpu, NetInputBytes: in, NetOutputBytes: out,
		UsedMemory: mem, UsedMemoryPeak: peak, Keys: keys}
}

func TestDiff(t *testing.T) {
	m := func(kv ...any) map[string]int64 {
		out := map[string]int64{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = int64(kv[i+1].(int))
		}
		return out
	}
	withSelf := func(n NodeInfo, in, out Overhead) NodeInfo { n.SelfIn, n.SelfOut = in, out; return n }
	cases := []struct {
		name          string
		before, after Snapshot
		want          Cost
	}{
		{
			name:   "two nodes summed, info and resetstat dropped",
			before: Snapshot{Nodes: []NodeInfo{node("a", m("set", 10, "info", 5), m("set", 20, "info", 500), 1, 100, 200, 1000, 2000, 1), node("b", m(), m(), 2, 0, 0, 500, 500, 0)}},
			after: Snapshot{Nodes: []NodeInfo{
				node("a", m("set", 110, "info", 9, "config|resetstat", 1), m("set", 220, "info", 900, "config|resetstat", 7), 1.5, 1100, 1200, 3000, 4000, 101),
				node("b", m("get", 50), m("get", 60), 2.25, 300, 400, 700, 900, 5),
			}},
			want: Cost{Commands: 150, CommandsByName: m("set", 100, "get", 50), UsecByName: m("set", 200, "get", 60),
				RedisCPU: 750 * time.Millisecond, CommandUsec: 260, NetIn: 1300, NetOut: 1400, PeakMemory: 4900, MemoryDelta: 2200, KeysDelta: 105,
				CPUByNode: map[string]time.Duration{"a": 500 * time.Millisecond, "b": 250 * time.Millisecond}},
		},
		{
			name: "own handshake and bytes subtracted",
			before: Snapshot{Nodes: []NodeInfo{withSelf(node("a", m("hello", 1), m("hello", 5), 0, 60, 100, 0, 0, 0),
				Overhead{Calls: m("hello", 1), NetIn: 60, NetOut: 100}, Overhead{NetOut: 5000})}},
			after: Snapshot{Nodes: []NodeInfo{withSelf(node("a", m("hello", 3), m("hello", 25), 0, 60+200+60, 100+5000+300+100, 0, 0, 0),
				Overhead{Calls: m("hello", 1), NetIn: 60, NetOut: 100}, Overhead{NetOut: 5000})}},
			// The store said HELLO once (of the 2 new): 200 in, 300 out.
			want: Cost{Commands: 1, CommandsByName: m("hello", 1), UsecByName: m("hello", 10), CommandUsec: 10, NetIn: 200, NetOut: 300,
				CPUByNode: map[string]time.Duration{"a": 0}},
		},
		{
			name:   "counter reset counts from zero, node new in after",
			before: Snapshot{Nodes: []NodeInfo{node("a", m("set", 1000), m("set", 1000), 10, 9000, 9000, 0, 0, 0)}},
			after:  Snapshot{Nodes: []NodeInfo{node("a", m("set", 7), m("set", 8), 10.5, 90, 80, 0, 0, 0), node("c", m("del", 2), m("del", 3), 0, 0, 0, 0, 0, 0)}},
			want: Cost{Commands: 9, CommandsByName: m("set", 7, "del", 2), UsecByName: m("set", 8, "del", 3), CommandUsec: 11,
				RedisCPU: 500 * time.Millisecond, NetIn: 90, NetOut: 80, CPUByNode: map[string]time.Duration{"a": 500 * time.Millisecond, "c": 0}},
		},
		{
			name: "empty snapshots",
			want: Cost{CommandsByName: m(), UsecByName: m(), CPUByNode: map[string]time.Duration{}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(tc.before, tc.after)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestWithoutAndPerJob(t *testing.T) {
	c := Cost{Commands: 14, CommandsByName: map[string]int64{"hello": 4, "set": 10}, UsecByName: map[string]int64{"hello": 40, "set": 100},
		CommandUsec: 140, RedisCPU: 2 * time.Millisecond, NetIn: 1000, NetOut: 500}
	got := c.Without(Overhead{Calls: map[string]int64{"hello": 4, "ping": 3}, NetIn: 100, NetOut: 900})
	want := Cost{Commands: 10, CommandsByName: map[string]int64{"set": 10}, UsecByName: map[string]int64{"set": 100},
		CommandUsec: 100, RedisCPU: 2 * time.Millisecond, NetIn: 900, NetOut: 0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Without: got %+v\nwant %+v", got, want)
	}
	if c.Commands != 14 || c.CommandsByName["hello"] != 4 {
		t.Error("Without modified its receiver's maps")
	}

	cases := []struct {
		n    int64
		want PerJob
	}{
		{10, PerJob{Commands: 1, RedisCPUMicros: 200, CommandMicros: 10, NetInBytes: 90, NetOutBytes: 0}},
		{0, PerJob{}},
		{-3, PerJob{}},
	}
	for _, tc := range cases {
		if got := want.PerJob(tc.n); got != tc.want {
			t.Errorf("PerJob(%d) = %+v, want %+v", tc.n, got, tc.want)
		}
	}
}
