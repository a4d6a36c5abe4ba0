#!/usr/bin/env bash
# Grounding benchmark (issue 6): inventory + selection on a generated Git
# repository of 100,000 files, timed beside `git ls-files | wc -l` on the
# same repository, reported as a ratio (issue 6: within 2x; issue 18 target 7: within 1.5x at
# 20,000 files as at 100,000). For context it also times the reference's two
# git calls, `git status -uall`, and the stat pass alone (bench/stat_floor.cc,
# built beside the telic binary): every tracked file stat'ed once, which the
# dirty-worktree fingerprint needs and `git ls-files` does not do.
#
# Usage: bench/grounding_bench.sh [TELIC_BINARY] [FILES]
#   TELIC_BINARY  default: build/telic (needs the `ground` subcommand)
#   FILES         default: 100000
# Environment: RUNS (timed runs per command, default 5), KEEP=1 keeps the
# generated repository, BENCH_DIR chooses where it is generated.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
telic="${1:-$root/build/telic}"
files="${2:-100000}"
runs="${RUNS:-5}"
request="fix the session token refresh in the api client"

if [[ ! -x "$telic" ]]; then
  echo "telic binary not found: $telic (build it first, or pass its path)" >&2
  exit 2
fi
if ! "$telic" ground --help >/dev/null 2>&1; then
  echo "$telic has no 'ground' subcommand" >&2
  exit 2
fi

dir="${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/telic-ground-bench.XXXXXX")}"
if [[ "${KEEP:-0}" != 1 ]]; then trap 'rm -rf "$dir"' EXIT; fi
repo="$dir/repo"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_SYSTEM=/dev/null

if [[ ! -d "$repo/.git" ]]; then
  echo "generating $files files in $repo ..." >&2
  start=$(date +%s%N)
  python3 - "$repo" "$files" <<'PY'
import os, sys
repo, files = sys.argv[1], int(sys.argv[2])
areas = ["api", "auth", "session", "billing", "search", "ui", "storage", "jobs", "metrics", "admin"]
kinds = ["client", "server", "handler", "model", "util", "config", "view", "store", "test", "types"]
per_dir = 100  # files per folder: packages/pkg-NNN/<area>/mod-N/
for i in range(files):
    folder = i // per_dir
    area = areas[folder % len(areas)]
    d = os.path.join(repo, "packages", f"pkg-{folder // 100:03d}", area, f"mod-{(folder // 10) % 10}")
    if i % per_dir == 0:
        os.makedirs(d, exist_ok=True)
    name = f"{kinds[(i // 7) % len(kinds)]}{i:06d}.ts"
    with open(os.path.join(d, name), "w") as f:
        f.write(f"// generated file {i}\nexport const value{i} = {i};\n")
with open(os.path.join(repo, "AGENTS.md"), "w") as f:
    f.write("Run the tests before committing.\n")
with open(os.path.join(repo, "README.md"), "w") as f:
    f.write("# bench repository\n")
with open(os.path.join(repo, ".gitignore"), "w") as f:
    f.write("node_modules/\n*.log\n")
PY
  git -C "$repo" init -q
  git -C "$repo" add -A
  git -C "$repo" -c user.name=bench -c user.email=bench@example.invalid commit -q -m bench
  echo "generated in $(( ($(date +%s%N) - start) / 1000000 )) ms" >&2
fi

# Median wall time in milliseconds of `runs` runs of a shell command (after one warm-up run).
time_ms() {
  local command="$1" samples=()
  bash -c "$command" >/dev/null
  for ((i = 0; i < runs; i++)); do
    local t0 t1
    t0=$(date +%s%N)
    bash -c "$command" >/dev/null
    t1=$(date +%s%N)
    samples+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${samples[@]}" | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.1f", m / 1000}'
}

# Medians of `runs` runs of two commands, run alternately (A B A B ...), so
# that both see the same machine load: "median_a median_b".
time_pair_ms() {
  local first="$1" second="$2" a=() b=()
  bash -c "$first" >/dev/null
  bash -c "$second" >/dev/null
  for ((i = 0; i < runs; i++)); do
    local t0 t1 t2
    t0=$(date +%s%N)
    bash -c "$first" >/dev/null
    t1=$(date +%s%N)
    bash -c "$second" >/dev/null
    t2=$(date +%s%N)
    a+=($(( (t1 - t0) / 1000 )))
    b+=($(( (t2 - t1) / 1000 )))
  done
  local median='{x[NR]=$1} END {m = (NR % 2) ? x[(NR+1)/2] : (x[NR/2] + x[NR/2+1]) / 2; printf "%.1f", m / 1000}'
  echo "$(printf '%s\n' "${a[@]}" | sort -n | awk "$median") $(printf '%s\n' "${b[@]}" | sort -n | awk "$median")"
}

count=$(git -C "$repo" ls-files | wc -l)
git_cmd="cd '$repo' && git ls-files | wc -l"
telic_cmd="'$telic' ground --repo '$repo' '$request' --json"
# For context: the two git commands the reference implementation runs for
# the same work (inventory, then the dirty-worktree fingerprint).
ref_cmd="cd '$repo' && git -c core.fsmonitor=false ls-files -z --cached --others --exclude-standard >/dev/null && git -c core.fsmonitor=false status --porcelain=v1 -z --untracked-files=all"
# And git's own pass over the same work tree (stat every tracked file, list
# every folder): the work the dirty-worktree fingerprint cannot skip.
status_cmd="cd '$repo' && git -c core.fsmonitor=false status --porcelain=v1 -z --untracked-files=all"
# The stat pass alone: every tracked file stat'ed once on every core and nothing
# else (bench/stat_floor.cc, built as telic_stat_floor beside the telic
# binary), the pass the dirty-worktree fingerprint needs and `git ls-files`
# does not make.
stat_floor="$(cd "$(dirname "$telic")" && pwd)/telic_stat_floor"
list="$dir/tracked.z"
git -C "$repo" ls-files -z >"$list"
floor_cmd="cd '$repo' && '$stat_floor' . < '$list'"

if command -v hyperfine >/dev/null 2>&1; then
  hyperfine --warmup 1 --runs "$runs" --export-json "$dir/hyperfine.json" "$git_cmd" "$telic_cmd" "$ref_cmd" \
    "$status_cmd" >&2
  read -r git_ms telic_ms ref_ms status_ms < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print(" ".join("%.1f" % (x["median"] * 1000) for x in r))' "$dir/hyperfine.json")
else
  read -r git_ms telic_ms < <(time_pair_ms "$git_cmd" "$telic_cmd")
  ref_ms=$(time_ms "$ref_cmd")
  status_ms=$(time_ms "$status_cmd")
fi
floor_ms=""
if [[ -x "$stat_floor" ]]; then
  read -r floor_ms _ < <(time_pair_ms "$floor_cmd" "$telic_cmd")
fi

manifest=$(bash -c "$telic_cmd")
selected=$(python3 -c 'import json,sys; m=json.loads(sys.stdin.read()); print(m["budget"]["selectedFiles"], m["budget"]["candidateFiles"])' <<<"$manifest")
ratio=$(awk -v a="$telic_ms" -v b="$git_ms" 'BEGIN { printf "%.2f", a / b }')

echo "repository:            $repo ($count tracked files)"
echo "git ls-files | wc -l:  ${git_ms} ms (median of $runs, alternating with telic)"
echo "telic ground --json:   ${telic_ms} ms (median of $runs; selected/candidates: $selected)"
echo "ratio telic/git:       ${ratio}x (issue 6: <= 2x; issue 18 target 7: <= 1.5x)"
echo "reference's git calls: ${ref_ms} ms (ls-files --cached --others + status --porcelain, for context)"
echo "git status -uall:      ${status_ms} ms (git's own stat pass over the work tree, for context)"
if [[ -n "$floor_ms" ]]; then
  echo "stat pass alone:       ${floor_ms} ms (every tracked file stat'ed once on $(nproc) threads, nothing else: bench/stat_floor.cc)"
  echo "telic / stat pass:     $(awk -v a="$telic_ms" -v f="$floor_ms" 'BEGIN { printf "%.2fx", a / f }') (the pass git ls-files does not make)"
else
  echo "stat pass alone:       not measured ($stat_floor not built: configure with -DTELIC_BENCH=ON)"
fi
echo "load average:          $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
