// Package suggest finds the name a user likely meant: the closest of the
// allowed names within a few edits, for "did you mean" in error messages
// (unknown fields, commands, backends, fault kinds).
package suggest

import "fmt"

// DidYouMean is ", did you mean X?" for the closest of names to got within
// a few edits, or "".
func DidYouMean(got string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(got, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
