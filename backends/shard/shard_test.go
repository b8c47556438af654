package shard

import "testing"

// TestQueueNameSlots checks the names land in their slot ranges, with
// Redis Cluster's own hash (the spec's check value: "123456789" is 0x31C3).
func TestQueueNameSlots(t *testing.T) {
	if got := crc16([]byte("123456789")); got != 0x31C3 {
		t.Fatalf("crc16(123456789) = %#x, want 0x31c3", got)
	}
	for _, m := range []int{2, 3, 6, 64} {
		seen := map[string]bool{}
		for i := range m {
			name := QueueName("q", i, m)
			sl := int(crc16([]byte(name)) % slots)
			if lo, hi := i*slots/m, (i+1)*slots/m; sl < lo || sl >= hi {
				t.Errorf("QueueName(q, %d, %d) = %s: slot %d, want in [%d, %d)", i, m, name, sl, lo, hi)
			}
			if seen[name] {
				t.Errorf("QueueName(q, %d, %d) = %s twice", i, m, name)
			}
			seen[name] = true
		}
	}
}
