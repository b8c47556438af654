package output

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aebench/aebench/harness/engine"
)

// jsonl writes samples.jsonl: one JSON object per run and second, written
// as the second ends, so `tail -f` follows a run (k6's --out json habit).
// Each line carries the run's names beside the second's counters.
type jsonl struct {
	base
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
	err error
}

func newJSONL(param string) (Output, error) {
	if param != "" {
		return nil, fmt.Errorf("takes no parameter (it writes samples.jsonl in the results directory), got %q", param)
	}
	return &jsonl{}, nil
}

// sampleLine is one line of samples.jsonl.
type sampleLine struct {
	Time        time.Time `json:"time"`
	Run         string    `json:"run"`
	Backend     string    `json:"backend"`
	Label       string    `json:"label"`
	Client      string    `json:"client"`
	Cell        int       `json:"cell"`
	Repeat      int       `json:"repeat"`
	Calibration bool      `json:"calibration,omitempty"`
	engine.SeriesPoint
}

func (j *jsonl) Start(p Plan) error {
	f, err := os.Create(filepath.Join(p.Dir, "samples.jsonl"))
	if err != nil {
		return err
	}
	j.f, j.w = f, bufio.NewWriter(f)
	j.enc = json.NewEncoder(j.w)
	return nil
}

func (j *jsonl) Sample(r Run, p engine.SeriesPoint) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil || j.enc == nil {
		return
	}
	j.err = j.enc.Encode(sampleLine{Time: time.Now().UTC(), Run: r.ID, Backend: r.Backend, Label: r.Label, Client: r.Client,
		Cell: r.Cell, Repeat: r.Repeat, Calibration: r.Calibration, SeriesPoint: p})
	if j.err == nil {
		j.err = j.w.Flush()
	}
}

func (j *jsonl) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return j.err
	}
	err := j.f.Close()
	if j.err != nil {
		return fmt.Errorf("samples.jsonl: %w", j.err)
	}
	return err
}
