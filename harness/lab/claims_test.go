package lab

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/registry"
)

// TestClaimsFlaws runs every flaw scenario on a spawned Redis (each a
// seed variant and its corrected backend under the same load and crash
// faults) and checks that each seed variant shows its flaw (a non-zero
// count of lost, duplicated, early jobs or claim conflicts) while the
// corrected backend shows 0, and that the variants' lost and early jobs do
// not fail the command.
func TestClaimsFlaws(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every flaw scenario (about 2 minutes)")
	}
	out := t.TempDir()
	var flaws []string
	for _, fr := range flawRows {
		flaws = append(flaws, strings.TrimSuffix(fr.File, ".yaml"))
	}
	// Every flaw, and of the claims the quickest (the others take about two
	// minutes more; aebench claims --quick runs them all).
	code, stdout, stderr := claims(t, "--quick", "--dir", filepath.Join("..", "..", "scenarios", "claims"), "--out", out,
		"--flaws", strings.Join(slices.Compact(flaws), ","), "--claims", "claim-polling")
	if code != exitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	files, err := filepath.Glob(filepath.Join(out, "*-claims", "claims.json"))
	if err != nil || len(files) != 1 {
		t.Fatalf("claims.json: %v %v", files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Flaws  []flawResult
		Claims []claimResult
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Flaws) != len(flawRows) {
		t.Fatalf("%d rows, want %d", len(got.Flaws), len(flawRows))
	}
	// On a loaded machine the polling runs may be found suspect, which
	// decides nothing: that verdict, with its health, is also right.
	if len(got.Claims) == 1 && got.Claims[0].Verdict == verdictSuspect {
		t.Logf("the polling claim's runs were suspect (%s): not judged", got.Claims[0].Health)
	} else if len(got.Claims) != 1 || !strings.HasPrefix(got.Claims[0].Verdict, verdictHolds) || !strings.Contains(stdout, "| no polling means lower latency |") {
		t.Errorf("claims %+v: want the polling claim to hold (blocking against 100ms polling)", got.Claims)
	}
	cost := map[string]bool{} // metrics judged by a ratio: the corrected backend's is not 0
	for _, fr := range flawRows {
		cost[fr.Metric] = fr.Ratio > 0
	}
	for _, r := range got.Flaws {
		if r.VariantN == 0 || !r.Reproduced || !cost[r.Metric] && r.CorrectedN != 0 {
			t.Errorf("%s (%s): seed variant %s %s %d, corrected %s %d: want > 0 and 0", r.Scenario, r.Flaw, r.Variant, r.Metric, r.VariantN, r.Corrected, r.CorrectedN)
		}
		if strings.Contains(r.Variant, "seed variant") && r.CorrectedLost != 0 {
			t.Errorf("%s: corrected %s lost %d", r.Scenario, r.Corrected, r.CorrectedLost)
		}
	}
}

func TestClaimsUsage(t *testing.T) {
	code, _, stderr := claims(t, "--flaws", "flaw-nope")
	if code != exitUsage || !strings.Contains(stderr, "flaw-seed004") {
		t.Fatalf("exit %d, stderr %q: want usage naming the allowed flaws", code, stderr)
	}
}

// TestReadmeClaimsBlock: README.md carries the generated block, with a line
// for every claim check and every flaw scenario, each naming the command
// that reproduces it; and --readme rewrites only what is between the
// markers.
func TestReadmeClaimsBlock(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i, j := strings.Index(s, readmeBegin), strings.Index(s, readmeEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the generated claims block (%q ... %q)", readmeBegin, readmeEnd)
	}
	block := s[i:j]
	for _, c := range claimChecks {
		if !strings.Contains(block, "`aebench claims --claims "+strings.TrimSuffix(c.File, ".yaml")+"`") {
			t.Errorf("README's claims block has no line for %s: run make claims", c.File)
		}
	}
	for _, f := range flawRows {
		if !strings.Contains(block, "`aebench claims --flaws "+strings.TrimSuffix(f.File, ".yaml")+"`") {
			t.Errorf("README's claims block has no line for %s: run make claims", f.File)
		}
	}
	tmp := filepath.Join(t.TempDir(), "R.md")
	if err := os.WriteFile(tmp, []byte("before\n"+readmeBegin+"\nold\n"+readmeEnd+"\nafter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gen := readmeBlock([]claimResult{{Seed: "003", Claim: "c", Scenario: "claim-x.yaml", Verdict: verdictHolds}}, nil, time.Now(), "aebench claims", "abc1234")
	if err := rewriteReadme(tmp, gen); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(tmp)
	if !strings.HasPrefix(string(got), "before\n") || !strings.HasSuffix(string(got), "after\n") || strings.Contains(string(got), "\nold\n") ||
		!strings.Contains(string(got), "`aebench claims --claims claim-x`") {
		t.Errorf("rewritten:\n%s", got)
	}
	// A run of another scenario keeps claim-x's line and updates its own.
	gen2 := readmeBlock([]claimResult{{Seed: "004", Claim: "d", Scenario: "claim-y.yaml", Verdict: verdictNotHold}}, nil, time.Now(), "aebench claims", "abc1234")
	if err := rewriteReadme(tmp, gen2); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(tmp)
	if !strings.Contains(string(got), "`aebench claims --claims claim-x`") || !strings.Contains(string(got), "`aebench claims --claims claim-y`") ||
		strings.Count(string(got), "--claims claim-x`") != 1 {
		t.Errorf("merged:\n%s", got)
	}
	if err := rewriteReadme(filepath.Join(t.TempDir(), "none.md"), gen); err == nil {
		t.Error("a missing file: no error")
	}
}

// claims runs the claims procedure with args and returns its exit code and
// output.
func claims(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	code = Claims(context.Background(), args, Options{Registry: registry.Builtin(), Stdout: &out, Stderr: &errb}, false)
	return code, out.String(), errb.String()
}

// TestFlawRowsHaveMutants: every flaw row names at least one mutant
// (mutants/<name>.patch) whose header names that row and a fidelity test,
// and every patch still applies to this tree (`make mutants` runs them).
// Rows still without one are listed in mutantsPending with why.
func TestFlawRowsHaveMutants(t *testing.T) {
	root := filepath.Join("..", "..")
	named := map[string]bool{}
	for _, fr := range flawRows {
		row := fr.File + " " + fr.Metric
		if len(fr.Mutants) == 0 {
			if why, ok := mutantsPending[row]; ok {
				t.Logf("%s: no mutant yet: %s", row, why)
			} else {
				t.Errorf("%s: names no mutant", row)
			}
			continue
		}
		for _, m := range fr.Mutants {
			named[m] = true
			data, err := os.ReadFile(filepath.Join(root, "mutants", m+".patch"))
			if err != nil {
				t.Errorf("%s: mutant %s: %v", row, m, err)
				continue
			}
			head := string(data)
			for _, want := range []string{"Mutant: " + m + "\n", "Row: " + row + "\n", "Removes: ", "Test: ./"} {
				if !strings.Contains(head, want) {
					t.Errorf("mutants/%s.patch: header lacks %q", m, strings.TrimSpace(want))
				}
			}
		}
	}
	patches, _ := filepath.Glob(filepath.Join(root, "mutants", "*.patch"))
	for _, p := range patches {
		name := strings.TrimSuffix(filepath.Base(p), ".patch")
		if !named[name] {
			t.Errorf("mutants/%s.patch: no flaw row names it", name)
		}
		if _, err := exec.LookPath("git"); err != nil {
			continue
		}
		cmd := exec.Command("git", "apply", "--check", filepath.Join("mutants", name+".patch"))
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("mutants/%s.patch no longer applies: %v: %s", name, err, out)
		}
	}
}

// mutantsPending are the flaw rows without a mutant yet, and why.
var mutantsPending = map[string]string{}
