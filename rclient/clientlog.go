package rclient

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ClientLog takes the log lines a client library prints on its own
// (go-redis logs "connection pool: failed to dial" once per attempt, a
// hundred lines during a failover) and counts them by kind instead, so
// the run's output stays readable and --quiet stays quiet. The first line
// of each kind goes to Logf, when set; Summary says how many there were.
type ClientLog struct {
	// Logf receives the first line of each kind (nil: none).
	Logf func(format string, a ...any)

	mu     sync.Mutex
	counts map[string]int
}

// RouteGoRedisLog makes l go-redis's logger. go-redis keeps one logger
// for the whole process (redis.SetLogger), so the command line calls this
// once, before any client exists.
func RouteGoRedisLog(l *ClientLog) { redis.SetLogger(l) }

// Printf implements go-redis's internal.Logging.
func (l *ClientLog) Printf(_ context.Context, format string, v ...any) {
	line := fmt.Sprintf(format, v...)
	kind := logKind(line)
	l.mu.Lock()
	if l.counts == nil {
		l.counts = map[string]int{}
	}
	l.counts[kind]++
	first := l.counts[kind] == 1
	l.mu.Unlock()
	if first && l.Logf != nil {
		l.Logf("go-redis: %s (further %s are counted, not printed)", strings.TrimSpace(line), kind)
	}
}

// logKind names a go-redis log line for counting.
func logKind(line string) string {
	switch {
	case strings.Contains(line, "failed to dial"):
		return "dial failures"
	case strings.Contains(line, "reconnect"):
		return "reconnects"
	}
	if i := strings.Index(line, ": "); i > 0 && i < 60 {
		return "'" + line[:i] + "' lines"
	}
	return "other lines"
}

// Summary lists the counts, one "go-redis: N <kind>" a kind, sorted.
func (l *ClientLog) Summary() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k, n := range l.counts {
		out = append(out, fmt.Sprintf("go-redis: %d %s", n, k))
	}
	sort.Strings(out)
	return out
}
