package ledger

import (
	"strings"
	"testing"
	"time"
)

// TestUnreadable: a job the read-back could not read is neither lost nor
// finished; the report counts it apart and fails on the read-back.
func TestUnreadable(t *testing.T) {
	l := New()
	now := time.Now()
	l.Planned([]PlannedJob{{ID: "lost", Intended: now}, {ID: "unread", Intended: now}}, now)
	l.Acked([]string{"lost", "unread"})
	l.LostState("lost", "not_found")
	l.Unreadable("unread")
	r := l.Check()
	if r.Lost != 1 || r.Unreadable != 1 || len(r.UnreadableIDs) != 1 || r.UnreadableIDs[0] != "unread" {
		t.Fatalf("lost %d, unreadable %d %v; want 1, 1 [unread]", r.Lost, r.Unreadable, r.UnreadableIDs)
	}
	if r.OK || !strings.Contains(strings.Join(r.Problems, "; "), "the read-back failed: 1 acknowledged job(s) unreadable") {
		t.Errorf("problems %v", r.Problems)
	}
}
