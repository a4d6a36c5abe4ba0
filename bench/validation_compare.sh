#!/usr/bin/env bash
# Validation throughput of telic vs ajv (npm) on the same artifacts, in one run.
# Inputs: a WorkPlan with the contract's maximum of 64 nodes (a 100-node plan
# is invalid by the wire contract: nodes 1-64) and a full QualityReview
# (tests/fixtures/artifacts/valid/QualityReview-1.json).
# Usage: bench/validation_compare.sh [BUILD_DIR]
#   AJV_DIR: a folder with node_modules/ajv and ajv-formats (npm install ajv@8 ajv-formats@3)
#   NODE:    node binary (default: node)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$root" "$work" <<'PY'
import copy, json, sys
root, work = sys.argv[1], sys.argv[2]
plan = json.load(open(f"{root}/tests/fixtures/artifacts/valid/WorkPlan-1.json"))
node = plan["nodes"][0]
plan["nodes"] = []
for i in range(64):
    n = copy.deepcopy(node)
    n["id"] = f"node-{i:02d}"
    n["dependsOn"] = [f"node-{i-1:02d}"] if i else []
    plan["nodes"].append(n)
plan["globalBudgets"]["maximumToolCalls"] = 64 * node["budgets"]["maximumToolCalls"]
json.dump(plan, open(f"{work}/WorkPlan.json", "w"))
json.dump(json.load(open(f"{root}/tests/fixtures/artifacts/valid/QualityReview-1.json")), open(f"{work}/QualityReview.json", "w"))
PY
for type in WorkPlan QualityReview; do
  "$build/telic" validate "$work/$type.json" --type "$type" >/dev/null
  "$build/telic" schema "$type" > "$work/$type.schema.json"
done
echo "== telic (schema + refinements, C++)"
TELIC_VALIDATION_INPUTS="$work" "$build/telic_controller_bench" --benchmark_filter=Validate --benchmark_min_time=1 \
  --benchmark_format=json > "$work/telic.json"
echo "== ajv $(node -e "console.log(require('${AJV_DIR:-.}/node_modules/ajv/package.json').version)" 2>/dev/null || echo '?') (schema only, JavaScript)"
cat > "$work/ajv.js" <<'JS'
const [ajvDir, work] = process.argv.slice(2);
const Ajv2020 = require(`${ajvDir}/node_modules/ajv/dist/2020`).default;
const addFormats = require(`${ajvDir}/node_modules/ajv-formats`).default;
const fs = require('fs');
const out = {};
for (const type of ['WorkPlan', 'QualityReview']) {
  const ajv = new Ajv2020({strict: false, allErrors: true, useDefaults: true});
  addFormats(ajv);
  const validate = ajv.compile(JSON.parse(fs.readFileSync(`${work}/${type}.schema.json`)));
  const body = JSON.parse(fs.readFileSync(`${work}/${type}.json`));
  if (!validate(structuredClone(body))) throw new Error(`${type}: ${JSON.stringify(validate.errors)}`);
  let n = 0; const start = process.hrtime.bigint();
  while (process.hrtime.bigint() - start < 1000000000n) { validate(structuredClone(body)); n++; }
  const ns = Number(process.hrtime.bigint() - start) / n;
  out[type] = ns / 1000;
}
console.log(JSON.stringify(out));
JS
"${NODE:-node}" "$work/ajv.js" "$(cd "${AJV_DIR:-.}" && pwd)" "$work" > "$work/ajv.json"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
telic = {b["name"].replace("BM_Validate", ""): b["real_time"] for b in json.load(open(f"{work}/telic.json"))["benchmarks"]}
ajv = json.load(open(f"{work}/ajv.json"))
print(f"{'artifact':<14} {'telic µs':>10} {'ajv µs':>10} {'ajv/telic':>10}")
for t in ["WorkPlan", "QualityReview"]:
    print(f"{t:<14} {telic[t]:>10.1f} {ajv[t]:>10.1f} {ajv[t] / telic[t]:>10.2f}")
print("(ajv times include structuredClone of the body, as telic's include the copy it validates.)")
PY
