#!/usr/bin/env bash
# Issue 11 measurements (benchmarks/fidelity.md): train the methods of
# benchmarks/fidelity_smoke.yaml on the smoke settings (splade-tiny, 40 steps, seeds 1 and 2)
# in stages, score each model on the STS tasks only, then write results/tables/sts.md with the
# baseline-delta column. Needs NEGCSE_MIRROR (and NEGCSE_CACHE holding san/vocab_pos_end.txt for
# the released SAN lexicon; without it the spaCy fallback is used and logged).
set -euo pipefail
export NEGCSE_OFFLINE=1
CONFIGS="tests/smoke/config.yaml benchmarks/fidelity_smoke.yaml"
stages=("simcse simcse_dropout15 una_baseline una" "simcse_san simcse_san_masked"
        "osscse osscse_fit osscse_maskfb")
for stage in "${stages[@]}"; do
  targets=()
  for m in $stage; do for s in 1 2; do targets+=("results/models/$m/splade-tiny/seed$s"); done; done
  snakemake --profile profiles/smoke --configfile $CONFIGS -- "${targets[@]}"
  for m in $stage; do
    for s in 1 2; do
      out="results/eval/sts/$m/splade-tiny/seed$s.json"
      [ -s "$out" ] || python -m negcse evaluate --only sts \
        --model "results/models/$m/splade-tiny/seed$s" \
        --pooler auto --batch-size 128 --threads 1 --tag method="$m" --tag backbone=splade-tiny \
        --tag seed="$s" --sts-protocol senteval --sts-out "$out"
    done
  done
  baselines=$(python - <<'PY'
from negcse.workflow.config import method_baselines, project_config
c = project_config(".", "tests/smoke/config.yaml", "benchmarks/fidelity_smoke.yaml")
print(" ".join(f"{m}={b}" for m, b in method_baselines(c).items()))
PY
)
  python -m negcse table-sts --evals results/eval/sts/*/splade-tiny/seed*.json \
    --md results/tables/fidelity_sts.md --csv results/tables/fidelity_sts.csv --baselines $baselines
done
