package output

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aebench/aebench/harness/summary"
)

// summaryJSON is the one writer of summary.json (summary.Read is its one
// reader). The runner checkpoints it before the first run and after every
// run, so that a failure or Ctrl-C later never loses what was measured,
// and PlanDone writes it once package analysis has finished the summary
// and the plots have noted any failure in it: the record every later
// reader starts from (aebench compare, export, report and claims).
type summaryJSON struct{ base }

func newSummaryJSON(string) (Output, error) { return &summaryJSON{}, nil }

func (s *summaryJSON) Checkpoint(sum *summary.Summary) error { return s.write(sum) }

func (s *summaryJSON) PlanDone(sum *summary.Summary) error { return s.write(sum) }

// write replaces summary.json atomically (a temporary file renamed), so a
// reader, or a crash, never sees half a file.
func (s *summaryJSON) write(sum *summary.Summary) error {
	data, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	path := filepath.Join(s.dir, "summary.json")
	tmp := filepath.Join(s.dir, ".summary.json.tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	return os.Rename(tmp, path)
}
