package output

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/summary"
)

// hlog writes <run>.hlog: the HdrHistogram interval log of each run, one
// interval histogram per tag and second, as the engine's collector takes
// them (HistogramLogger); HistogramLogProcessor and hdrhistogram-go read it.
type hlog struct {
	base
	f *os.File
	w *hist.LogWriter
}

func newHLog(string) (Output, error) { return &hlog{}, nil }

// HistogramLog opens the run's .hlog and returns its writer for the
// engine.
func (h *hlog) HistogramLog(r Run, conditions string) (*hist.LogWriter, error) {
	if h.f != nil { // a run that stopped before RunDone
		_ = h.f.Close()
	}
	f, err := os.Create(filepath.Join(h.dir, r.ID+".hlog"))
	if err != nil {
		return nil, err
	}
	w := hist.NewLogWriter(f)
	start := time.Now().Truncate(time.Second).UnixMilli()
	err = errors.Join(w.OutputLogFormatVersion(),
		w.OutputComment("[aebench run "+r.ID+": "+conditions+"; values in ns, tags <label>.<histogram>]"),
		w.OutputStartTime(start), w.OutputBaseTime(start), w.OutputLegend())
	w.SetBaseTime(start)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s.hlog: %w", r.ID, err)
	}
	h.f, h.w = f, w
	return w, nil
}

func (h *hlog) RunDone(rs *summary.RunSummary, _ *engine.Result) error {
	if h.f == nil {
		return nil
	}
	err := h.f.Close()
	h.f, h.w = nil, nil
	if err != nil {
		return fmt.Errorf("%s.hlog: %w", rs.ID, err)
	}
	rs.Files.HLog = rs.ID + ".hlog"
	return nil
}

func (h *hlog) Close() error {
	if h.f != nil {
		return h.f.Close()
	}
	return nil
}
