#!/bin/sh
# regress.sh: gate a change on scenarios/ci.yaml (timing and counted
# metrics, 6 repeats) and scenarios/ci-cost.yaml (Redis under callgrind:
# instructions, commands and bytes per job, decided on one repeat); see
# README.md, "Gating CI on a regression". Two ways:
#
#   scripts/regress.sh --base-dir DIR [--out DIR]
#       run the working tree's aebench on each scenario into a new results
#       directory and compare it against DIR/<scenario name> (a baseline
#       made earlier on this machine: make baseline BASE=DIR); with a single
#       --scenario, DIR is that scenario's results directory itself.
#   scripts/regress.sh --base-ref REF [--rounds N] [--out DIR]
#       build aebench at git revision REF and from the working tree, run
#       each scenario with each in alternation on this machine (round 1:
#       base then candidate, round 2: candidate then base, ...), and compare
#       each round's pair. A regression must show in every round to fail
#       the gate (a machine that drifts between runs does not cry wolf).
#
# Options: --scenario FILE (repeatable; default scenarios/ci.yaml and
# scenarios/ci-cost.yaml), --no-cost-gate (where valgrind is not installed,
# run ci.yaml alone and say so; without this flag a machine without
# valgrind fails the gate, exit 3, since the timing gates alone are too
# noisy to stand for it), --compare-args ARGS (passed to aebench compare,
# e.g. "--fail-on e2e.p99:+10%").
#
# The base judges: compare runs from the base's binary (built at REF, or at
# the revision the base directory's summary.json names, when this checkout
# has it), so the limits and declared noise are the base's, never the
# candidate's own. Every binary built here has its revision linked in
# (-ldflags -X, whatever GOFLAGS says), so each summary names the code that
# ran rather than the directory it ran in.
# Exit code: aebench compare's (0 ok, 1 a run failed its correctness
# checks, 2 usage or a refused comparison, 3 infrastructure, 4 regression)
# over every scenario: the first non-regression failure wins, then 4.
set -eu

scenarios=
base_dir= base_ref= out= rounds=1 compare_args= no_cost_gate=
while [ $# -gt 0 ]; do
	case $1 in
	--base-dir) base_dir=$2; shift 2 ;;
	--base-ref) base_ref=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--scenario) scenarios="$scenarios $2"; shift 2 ;;
	--compare-args) compare_args=$2; shift 2 ;;
	--no-cost-gate) no_cost_gate=1; shift ;;
	*) echo "regress.sh: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
	esac
done
if [ -z "$base_dir$base_ref" ] || { [ -n "$base_dir" ] && [ -n "$base_ref" ]; }; then
	echo "regress.sh: give exactly one of --base-dir DIR or --base-ref REF" >&2
	exit 2
fi
case $rounds in ''|*[!0-9]*|0) echo "regress.sh: --rounds wants a positive integer, got $rounds" >&2; exit 2 ;; esac
[ -n "$out" ] || out=results/regress-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)
GO=${GO:-go}
pkg=github.com/aebench/aebench/harness/runner

# build DIR BIN: aebench from the checkout at DIR, its revision linked in.
build() {
	rev=$(git -C "$1" rev-parse HEAD 2>/dev/null || true)
	dirty=
	[ -z "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=true
	# The VCS stamp as well as the link stamp: a base older than the link
	# stamp reads only the VCS one. A -buildvcs=false in GOFLAGS (the
	# environment or go env -w) wins over the command line's, so it is
	# taken out of GOFLAGS for this build; the other flags stay.
	vcs=false
	[ -z "$rev" ] || vcs=true
	flags=$($GO env GOFLAGS | tr ' ' '\n' | grep -v '^-buildvcs' | tr '\n' ' ' || true)
	(cd "$1" && GOFLAGS=$flags $GO build -buildvcs=$vcs -ldflags "-X $pkg.linkedRevision=$rev -X $pkg.linkedModified=$dirty" -o "$2" ./cmd/aebench)
	echo "regress.sh: built $2 at ${rev:-an unknown revision}${dirty:+ (modified)}"
}
build . "$out/bin/new"

if [ -z "$scenarios" ]; then
	scenarios=scenarios/ci.yaml
	if command -v valgrind >/dev/null 2>&1 && command -v callgrind_control >/dev/null 2>&1; then
		scenarios="$scenarios scenarios/ci-cost.yaml"
	elif [ -n "$no_cost_gate" ]; then
		echo "regress.sh: --no-cost-gate: scenarios/ci-cost.yaml NOT GATED (valgrind not installed); only ci.yaml's timing and counted gates decide" >&2
	else
		echo "regress.sh: valgrind is not installed, so scenarios/ci-cost.yaml (the deterministic gate) cannot run: apt-get install valgrind, or pass --no-cost-gate to gate on ci.yaml alone" >&2
		exit 3
	fi
fi
set -- $scenarios
many=$#

# run BIN DIR: one run of the scenario; its exit code is the run's
# correctness, which compare reports again, so only an infrastructure or
# usage failure (no results to compare) stops here.
run() {
	code=0
	"$1" run "$scenario" --out "$2" --no-plots || code=$?
	case $code in 0|1|4) ;; *) echo "regress.sh: $1 run exited $code" >&2; exit "$code" ;; esac
}

# compare BASE NEW: prints the comparison (by the base's binary where
# there is one), sets code to its exit code.
compare() {
	code=0
	judge=$out/bin/new
	[ ! -x "$out/bin/base" ] || judge=$out/bin/base
	# shellcheck disable=SC2086 # compare_args is a word list
	"$judge" compare $compare_args "$1" "$2" || code=$?
	return 0
}

# gate SCENARIO: one scenario's gate; sets code.
gate() {
	scenario=$1
	name=$(basename "$scenario" .yaml)
	dir=$out
	[ "$many" -eq 1 ] || dir=$out/$name
	mkdir -p "$dir"
	if [ -n "$base_dir" ]; then
		base=$base_dir
		if [ "$many" -gt 1 ]; then
			base=$base_dir/$name
			if [ ! -d "$base" ]; then
				echo "regress.sh: $base_dir has no $name/ (make baseline BASE=DIR writes DIR/ci and DIR/ci-cost; an older baseline holds ci.yaml alone: give --scenario scenarios/ci.yaml, or make a new one)" >&2
				exit 2
			fi
		fi
		run "$out/bin/new" "$dir/new"
		compare "$base" "$dir/new"
		echo "regress.sh: $name: compare $base $dir/new exited $code"
		return 0
	fi
	final=0 regressed=0
	i=1
	while [ "$i" -le "$rounds" ]; do
		if [ $((i % 2)) -eq 1 ]; then
			run "$out/bin/base" "$dir/base-$i"
			run "$out/bin/new" "$dir/new-$i"
		else
			run "$out/bin/new" "$dir/new-$i"
			run "$out/bin/base" "$dir/base-$i"
		fi
		compare "$dir/base-$i" "$dir/new-$i"
		echo "regress.sh: $name: round $i: compare exited $code"
		case $code in
		0) ;;
		4) regressed=$((regressed + 1)) ;;
		*) [ "$final" -ne 0 ] || final=$code ;;
		esac
		i=$((i + 1))
	done
	if [ "$final" -eq 0 ] && [ "$regressed" -eq "$rounds" ]; then
		final=4
	fi
	echo "regress.sh: $name: $regressed of $rounds rounds found a regression; exit $final"
	code=$final
}

# base_build REV: the base binary from a clean checkout of REV: a shared
# clone rather than a git worktree, whose .git file Go's VCS stamping does
# not recognise.
base_build() {
	src=$(mktemp -d)
	trap 'rm -rf "$src"' EXIT
	git clone --quiet --shared --no-checkout . "$src"
	git -C "$src" checkout --quiet --detach "$1"
	build "$src" "$out/bin/base"
}
if [ -z "$base_dir" ]; then
	base_build "$base_ref"
else
	# The judge for a stored baseline: its own revision's binary, when this
	# checkout has that commit and the baseline's code was clean.
	sum=$(find "$base_dir" -name summary.json | head -n 1)
	rev=$(sed -n 's/.*"git_revision": *"\([0-9a-f]\{40\}\)".*/\1/p' "$sum" 2>/dev/null | head -n 1)
	if [ -n "$rev" ] && ! grep -q '"git_dirty": *true' "$sum" && git cat-file -e "$rev^{commit}" 2>/dev/null; then
		base_build "$rev"
	else
		echo "regress.sh: the baseline's revision (${rev:-not recorded}) is not a clean commit of this checkout: the candidate's binary judges, with its own limits" >&2
	fi
fi
worst=0 regression=0
for s in "$@"; do
	gate "$s"
	case $code in
	0) ;;
	4) regression=1 ;;
	*) [ "$worst" -ne 0 ] || worst=$code ;;
	esac
done
[ "$worst" -ne 0 ] || [ "$regression" -eq 0 ] || worst=4
if [ -n "$no_cost_gate" ] && ! echo "$scenarios" | grep -q ci-cost; then
	echo "regress.sh: exit $worst (scenarios/ci-cost.yaml NOT gated: --no-cost-gate)"
else
	echo "regress.sh: exit $worst"
fi
exit "$worst"
