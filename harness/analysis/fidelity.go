package analysis

import (
	"fmt"

	"github.com/aebench/aebench/harness/health"
	"github.com/aebench/aebench/harness/summary"
)

// atFloorRatio: a run whose e2e minus handler p99 is within this factor of
// the null calibration's is "at the harness floor": the harness's own tail
// may be what it shows.
const AtFloorRatio = 2.0

// setHarnessFloor compares every run's e2e minus handler p99 with its
// cell's calibration run (the harness's own tail under the same load). Only
// in an open loop: closed, the calibration's e2e is mostly queueing behind
// its own backlog, not the harness's tail.
func SetHarnessFloor(sum *summary.Summary) {
	floor := calibrationP99(sum)
	for i := range sum.Runs {
		r := &sum.Runs[i]
		f, p99 := floor[r.Cell], r.LatencyNs["e2e_minus_handler"]["p99"]
		if r.Calibration || f <= 0 || p99 <= 0 {
			continue
		}
		r.HarnessFloor = &summary.HarnessFloor{Ratio: p99 / f, At: p99 <= AtFloorRatio*f}
	}
}

// SetClientSplit splits the client CPU a job of every run whose cell has
// an open-loop calibration (a cell shares its load) into the harness's
// (the calibration's CPU a job) and the store's client side (the rest;
// never below zero).
func SetClientSplit(sum *summary.Summary) {
	calib := map[int]float64{}
	for _, r := range sum.Runs {
		if r.Calibration && r.Status == summary.StatusOK && r.Config.Producers.Mode == "open" && r.Harness.ClientCPUUsPerJob > 0 {
			calib[r.Cell] = r.Harness.ClientCPUUsPerJob
		}
	}
	for i := range sum.Runs {
		r := &sum.Runs[i]
		c, ok := calib[r.Cell]
		if r.Calibration || !ok || r.Harness.ClientCPUUsPerJob <= 0 {
			continue
		}
		r.Harness.ClientHarnessUsPerJob = min(c, r.Harness.ClientCPUUsPerJob)
		r.Harness.ClientStoreUsPerJob = r.Harness.ClientCPUUsPerJob - r.Harness.ClientHarnessUsPerJob
	}
}

// floorCell is a run's cell in the latency table's "x harness" column: its
// tail over the harness's own, marked where the harness may have set it.
func FloorCell(r summary.RunSummary) string {
	hf := r.HarnessFloor
	if hf == nil {
		return "-"
	}
	if hf.At {
		return fmt.Sprintf("%.1f*", hf.Ratio) // the note under the table says what * means
	}
	return fmt.Sprintf("%.1f", hf.Ratio)
}

// SetHealth adds to every run's health what its cell's calibration run
// (the harness alone, on the same machine moments before) says of the
// machine: a calibration whose own tail is slow makes the cell suspect.
func SetHealth(sum *summary.Summary) {
	cal := calibrationP99(sum)
	for i := range sum.Runs {
		r := &sum.Runs[i]
		health.JudgeCalibration(r.Health, cal[r.Cell])
	}
}

// calibrationP99 is each cell's calibration run's e2e minus handler p99
// (the harness's own tail), in an open loop only: closed, the
// calibration's e2e is mostly queueing behind its own backlog.
func calibrationP99(sum *summary.Summary) map[int]float64 {
	out := map[int]float64{}
	for _, r := range sum.Runs {
		if r.Calibration && r.Status == summary.StatusOK && r.Config.Producers.Mode == "open" {
			out[r.Cell] = r.LatencyNs["e2e_minus_handler"]["p99"]
		}
	}
	return out
}
