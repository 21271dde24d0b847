#!/usr/bin/env bash
# The workflow on one GPU, end to end, in one device call (benchmarks/gpu.md, "Prepared GPU call"):
#   1. the STS and transfer tables of the smoke grid's methods that need no spaCy (their
#      negations are CPU jobs, and spaCy's wheels do not fit the 64 MiB a device call carries)
#      through `snakemake --profile profiles/local` on the carried mirror subset (.gpu-mirror:
#      splade-tiny, the STS and transfer data, and the analysis sentences' spaCy negations made
#      by `make gpu-mirror`), four jobs per GPU (NEGCSE_JOBS_PER_GPU=4) under real nvidia-smi
#      slots;
#   2. checks: every training ran on CUDA (negcse.json "device") and every evaluation encoded
#      on CUDA (its log), the tables were written, and a second run has nothing to do;
#   3. benchmarks/gpu.py: every method family eager and compiled (compile: auto's
#      reduce-overhead + static padding), then aggregate steps/s for K = 1, 2, 4 processes.
# Results land in $OUT (or --out DIR): workflow.log, gpu.md, gpu_costs.csv, aggregate.md.
#
#   benchmarks/gpu_workflow.sh            # on the device machine (carry .gpu-mirror and .whl)
#   benchmarks/gpu_workflow.sh --tiny     # here, on CPU: the same steps at tiny size
# --cases "I ..." picks benchmarks/gpu.py's CASES (default: every family eager and compiled),
# --no-workflow skips steps 1-2, --no-aggregate the K = 1, 2, 4 measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
TINY=0 WORKFLOW=1 AGGREGATE=1
OUT_DIR=${OUT:-$REPO/.gpu-out}
# benchmarks/gpu.py CASES: every family at its paper settings (eager), then the same compiled
CASES="0 1 2 3 4 5 21 22 23 11 12 13 14 15 16 24 25 26"
while [ $# -gt 0 ]; do
    case $1 in
        --tiny) TINY=1 ;;
        --out) OUT_DIR=$2; shift ;;
        --cases) CASES=$2; shift ;;
        --no-workflow) WORKFLOW=0 ;;
        --no-aggregate) AGGREGATE=0 ;;
        *) echo "usage: $0 [--tiny] [--out DIR] [--cases 'I ...'] [--no-workflow] [--no-aggregate]" >&2
           exit 2 ;;
    esac
    shift
done
mkdir -p "$OUT_DIR"
log() { echo "== $*" | tee -a "$OUT_DIR/workflow.log"; }

if ! python3 -c 'import snakemake' 2>/dev/null; then  # the device image lacks snakemake & co.
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
fi
export PYTHONPATH=$REPO/src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export NEGCSE_MIRROR=${NEGCSE_MIRROR_OVERRIDE:-$REPO/.gpu-mirror} NEGCSE_OFFLINE=1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
[ -d "$NEGCSE_MIRROR/models/splade-tiny" ] || { echo "no mirror subset at $NEGCSE_MIRROR: make gpu-mirror" >&2; exit 1; }

CUDA=$(python3 -c 'import torch; print(int(torch.cuda.is_available()))')
if [ "$TINY" = 1 ] || [ "$CUDA" = 0 ]; then
    [ "$CUDA" = 0 ] || export CUDA_VISIBLE_DEVICES=""  # --tiny: CPU even where a GPU is
    DEVICE=cpu
    log "tiny: no CUDA here, the same steps on CPU at tiny size (figures mean nothing)"
else
    DEVICE=cuda
    log "GPU: $(nvidia-smi --query-gpu=name,memory.total,memory.free --format=csv,noheader)"
fi

# -- 1. the workflow, in a fresh copy of the tree (no earlier results) ---------------------------
if [ "$WORKFLOW" = 1 ]; then
WORK=$(mktemp -d /tmp/negcse-gpu-workflow.XXXXXX)
tar -c --exclude=./.git --exclude=./.gpu-mirror --exclude=./.whl --exclude=./.gpu-out \
    --exclude=./results --exclude=./.snakemake --exclude=./logs . | tar -x -C "$WORK"
mkdir -p "$WORK/results"
cp results/README.md "$WORK/results/"
METHODS="[simcse, una, una_random_select, una_random_replace, una_random_both, simcse_san,
          una_baseline, simcse_dropout15]"
STEPS=40 SEEDS="[1]" K=4 LINES=6400
if [ "$DEVICE" = cpu ]; then METHODS="[simcse, simcse_san]" STEPS=4 K=2 LINES=256; fi
cat >"$WORK/gpu_grid.yaml" <<EOF
# benchmarks/gpu_workflow.sh: the smoke grid's methods without spaCy, over tests/smoke/config.yaml
# (SAN without the negation fallback: the fallback's negations are spaCy's)
grid: {methods: $METHODS, backbones: [splade-tiny], seeds: $SEEDS}
corpus: {max_sentences: $LINES}
train_overrides: {batch_size: 64, learning_rate: 1.0e-4, max_steps: $STEPS, eval_steps: 20,
                  checkpoint_steps: 20, precision: fp32}
generators: {san: {fallback: false}}
EOF
# the two tables, not `all` (its analyses need spaCy); targets first: --resources takes a list
OPTS=(--profile profiles/local --configfile tests/smoke/config.yaml gpu_grid.yaml
      --scheduler greedy --cores "$(python3 -c 'import os; print(os.cpu_count())')"
      --resources gpu=$K)
SNAKE=(snakemake results/tables/sts.md results/tables/transfer.md "${OPTS[@]}")
cd "$WORK"
log "snakemake (NEGCSE_JOBS_PER_GPU=$K, gpu=$K) in $WORK"
t0=$(date +%s)
# the analysis sentences' negations (spaCy) come made (make gpu-mirror): placed after the STS
# data they derive from, so that Snakemake takes them as current
snakemake results/data/sts_manifest.tsv "${OPTS[@]}" >>"$OUT_DIR/workflow.log" 2>&1
mkdir -p results/analysis
cp "$NEGCSE_MIRROR"/precomputed/sts_sentences.txt results/analysis/
cp "$NEGCSE_MIRROR"/precomputed/sts_sentences.negation.txt results/analysis/
NEGCSE_JOBS_PER_GPU=$K "${SNAKE[@]}" >>"$OUT_DIR/workflow.log" 2>&1 \
    || { tail -60 "$OUT_DIR/workflow.log"; exit 1; }
log "workflow: $(($(date +%s) - t0)) s"

# -- 2. checks ------------------------------------------------------------------------------------
python3 - "$DEVICE" <<'EOF' | tee -a "$OUT_DIR/workflow.log"
import json, pathlib, sys
want = sys.argv[1]
metas = sorted(pathlib.Path("results/models").glob("*/*/seed*/negcse.json"))
assert metas, "no trained model"
bad = [str(m) for m in metas if json.loads(m.read_text()).get("device") != want]
assert not bad, f"trained elsewhere than {want}: {bad}"
logs = sorted(pathlib.Path("logs").rglob("*.log"))
evals = [p for p in logs if "encoding on device" in p.read_text(errors="replace")]
assert evals, "no evaluation log"
bad = [str(p) for p in evals if f"encoding on device {want}" not in p.read_text(errors="replace")]
assert not bad, f"evaluated elsewhere than {want}: {bad}"
tables = [t for t in ("sts", "transfer") if pathlib.Path(f"results/tables/{t}.md").is_file()]
assert tables == ["sts", "transfer"], f"tables written: {tables}"
print(f"checks: {len(metas)} trainings and {len(evals)} evaluations on {want}; tables {tables}")
EOF
"${SNAKE[@]}" -n >second_run.log 2>&1 || true
cat second_run.log >>"$OUT_DIR/workflow.log"
if grep -q "Nothing to be done" second_run.log; then
    log "second run: nothing to be done"
else
    log "second run would run jobs"; exit 1
fi
cd "$REPO"
fi

# -- 3. compiled vs eager per family, and K jobs per GPU ------------------------------------------
if [ "$DEVICE" = cpu ]; then
    # eager only on CPU (compiling BERT cases takes minutes here): SimCSE, RankCSE's teachers
    python3 benchmarks/gpu.py --tiny --out-dir "$OUT_DIR" --cases 0 21 \
        --skip-generators --skip-eval-job | tee -a "$OUT_DIR/workflow.log"
    [ "$AGGREGATE" = 0 ] || python3 benchmarks/gpu.py --tiny --out-dir "$OUT_DIR" \
        --jobs-per-gpu 1 2 | tee -a "$OUT_DIR/workflow.log"
    log "tiny check done (CPU: the GPU figures are blocked here)"
else
    # shellcheck disable=SC2086  # CASES: a list of indices
    python3 benchmarks/gpu.py --out-dir "$OUT_DIR" --budget 240 --seconds 3 \
        --cases $CASES --skip-generators --skip-eval-job | tee -a "$OUT_DIR/workflow.log"
    [ "$AGGREGATE" = 0 ] || python3 benchmarks/gpu.py --out-dir "$OUT_DIR" --seconds 5 \
        --jobs-per-gpu 1 2 4 | tee -a "$OUT_DIR/workflow.log"
fi
