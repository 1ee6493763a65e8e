#!/usr/bin/env bash
# Runs the libFuzzer harnesses (built by `make fuzz` in build/fuzz), one after
# the other, each for FUZZ_SECONDS seconds (default 60), starting from the seed
# corpus kept in fuzz/corpus/<harness>/. New corpus entries go to
# build/fuzz/corpus/<harness>/ (scratch), never into the repository.
# `plot` is the Python harness of scripts/plot.py (fuzz/fuzz_plot.py, run with
# PLOT_PYTHON, /usr/bin/python3 by default: Debian's, which sees matplotlib); it
# fails on an exit other than 0 or 2, an uncaught exception, a run past 10 s, a
# PNG left by a refusal or a temporary left behind.
#
# Before fuzzing, every input saved in fuzz/crashes/<harness>/ (inputs that once
# crashed) is run once as a regression check.
#
# Fails (exit 1) if any harness crashed, hit a sanitizer report, ran an input
# past 10 s (-timeout) or used more than 1000 MB (-rss_limit_mb); the input is
# left in build/fuzz/artifacts/<harness>/<date-time>/ and its path is printed.
#
#   FUZZ_SECONDS=600 scripts/fuzz.sh            # all harnesses, 10 min each
#   scripts/fuzz.sh model sessions              # only these
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${FUZZ_SECONDS:-60}
BUILD=${FUZZ_BUILD:-build/fuzz}
ALL=(config model sessions nand_command ssd_inputs ssb_query fio plot)
PLOT_PYTHON=${PLOT_PYTHON:-/usr/bin/python3}
if [ $# -gt 0 ]; then HARNESSES=("$@"); else HARNESSES=("${ALL[@]}"); fi

# Longest input per harness: configs, model files and traces are small text files; commands are short.
max_len() {
  case "$1" in
    nand_command) echo 1024 ;;
    ssd_inputs) echo 16384 ;;  # a device file alone is about 4 KB
    *) echo 4096 ;;
  esac
}

COMMON=(-rss_limit_mb=1000 -timeout=10 -print_final_stats=1)
# UBSan reports are fatal (-fno-sanitize-recover); print their stack.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The harnesses' scratch files (the input written where the loaders read a path): in memory where possible,
# removed at the end (a crash leaves its input behind).
BITLINE_FUZZ_SCRATCH=$(mktemp -d /dev/shm/bitline-fuzz.XXXXXX 2>/dev/null || mktemp -d)
export BITLINE_FUZZ_SCRATCH
trap 'rm -rf "$BITLINE_FUZZ_SCRATCH"' EXIT

# The Python harness: saved inputs replayed first, then FUZZ_SECONDS of mutations; the failing input is saved in
# build/fuzz/artifacts/plot/<date-time>/.
fuzz_plot() {
  local artifacts="$BUILD/artifacts/plot/$(date +%Y%m%d-%H%M%S)" saved
  shopt -s nullglob
  saved=(fuzz/crashes/plot/*)
  shopt -u nullglob
  echo "== fuzz plot: ${SECONDS_EACH} s (seed corpus fuzz/corpus/plot, ${#saved[@]} saved input(s) replayed first)"
  mkdir -p "$artifacts"
  if ! FUZZ_SECONDS="$SECONDS_EACH" timeout --kill-after=10 $((SECONDS_EACH + 300)) \
       "$PLOT_PYTHON" fuzz/fuzz_plot.py --artifacts "$artifacts" "${saved[@]}" > "$artifacts/fuzz.log" 2>&1; then
    echo "fuzz plot: FAILED (log: $artifacts/fuzz.log)" >&2
    grep -a -A1 "^fuzz plot: FAILED" "$artifacts/fuzz.log" >&2 || tail -n 5 "$artifacts/fuzz.log" >&2
    return 1
  fi
  grep -E "^stat::" "$artifacts/fuzz.log" | sed "s/^/  plot /" || true
}

failed=()
for h in "${HARNESSES[@]}"; do
  if [ "$h" = plot ]; then
    fuzz_plot || failed+=(plot)
    continue
  fi
  bin="$BUILD/fuzz/fuzz_$h"
  [ -x "$bin" ] || { echo "fuzz: $bin is missing (build it with: make fuzz)" >&2; exit 2; }
  scratch="$BUILD/corpus/$h"
  artifacts="$BUILD/artifacts/$h/$(date +%Y%m%d-%H%M%S)"
  mkdir -p "$scratch" "$artifacts"
  ok=1
  shopt -s nullglob
  saved=(fuzz/crashes/"$h"/*)
  shopt -u nullglob
  if [ ${#saved[@]} -gt 0 ]; then
    echo "== fuzz $h: replaying ${#saved[@]} saved crash input(s) from fuzz/crashes/$h/"
    for input in "${saved[@]}"; do
      log="$artifacts/replay-$(basename "$input").log"
      if ! timeout --kill-after=10 300 "$bin" "${COMMON[@]}" "$input" > "$log" 2>&1; then
        echo "fuzz $h: still fails: $input: $(grep -a -m1 -E "^SUMMARY|^== bitline fuzz" "$log" | cut -c1-160)" >&2
        ok=0
      fi
    done
  fi
  echo "== fuzz $h: ${SECONDS_EACH} s (seed corpus fuzz/corpus/$h, new inputs in $scratch)"
  # A hard stop past the run's time: on -rss_limit_mb libFuzzer prints a heap profile of the whole process before it
  # saves the input, which took over half an hour for a 1 GB heap of small YAML nodes (CI, 2026-12-03).
  if ! timeout --kill-after=10 $((SECONDS_EACH + 300)) "$bin" "${COMMON[@]}" -max_len="$(max_len "$h")" -max_total_time="$SECONDS_EACH" \
       -artifact_prefix="$artifacts/" "$scratch" "fuzz/corpus/$h" > "$artifacts/fuzz.log" 2>&1; then
    echo "fuzz $h: FAILED (log: $artifacts/fuzz.log); input(s):" >&2
    ls "$artifacts" | grep -E "^(crash|timeout|oom|leak|slow-unit)-" | sed "s|^|  $artifacts/|" >&2 || true
    grep -a -E "^(==[0-9]+==ERROR|SUMMARY|== bitline fuzz)" "$artifacts/fuzz.log" | head -n 4 >&2 || true
    ok=0
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$artifacts/fuzz.log" | sed "s/^/  $h /" || true
  [ $ok -eq 1 ] || failed+=("$h")
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all passed (${HARNESSES[*]})"
