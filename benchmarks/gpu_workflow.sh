#!/usr/bin/env bash
# The GPU figures in one call of under 8 minutes (benchmarks/gpu.md, "The prepared call"), on a
# machine with one CUDA GPU, from the folders `make gpu-mirror` prepares (.gpu-mirror: the mirror
# subset and SmolLM2's architecture, xz-compressed; .whl: the pinned wheels the machine's image
# lacks or holds at other versions). In order, each stage skipped when the deadline is near:
#   1. eager steps/s of every method family (random-weight BERT-base, the paper's settings), the
#      guided families (RankCSE, RLRD, GCSE stage 2) also with their guides read from the
#      cache, and the STS-B dev evaluation;
#   2. side by side: the compile pass (every family compiled in parallel processes, warm-up
#      only: it fills the compile caches) and the smoke grid's spaCy-free methods through
#      `snakemake --profile profiles/local` on CUDA, K jobs per GPU (checks: every training and
#      evaluation ran on CUDA, the STS and transfer tables were written, a second run has
#      nothing to do);
#   3. compiled steps/s of every family (compile: auto = reduce-overhead + static padding), the
#      guided ones also with cached guides, reading the compile caches of stage 2;
#   4. back-translation and PEGASUS throughput, and GCSE's synthesis LLM (SmolLM2-135M's and
#      GLM-4-9B's architectures, random weights) through the transformers backend, then through
#      the vLLM backend where vLLM is installed (envs/vllm.yaml: too large to carry, so skipped
#      on a bare machine);
#   5. aggregate steps/s of K = 1, 2, 4 SimCSE processes on the one GPU;
#   6. gpu.md and gpu_costs.csv from everything printed, and the grid re-priced from them
#      (negcse estimate).
# Results in $OUT (or --out DIR), at most 7 files: env.txt, gpu_log.txt, workflow.log, gpu.md,
# gpu_costs.csv, estimate.txt, summary.txt. A call cut short still leaves gpu_log.txt, from which
# `python benchmarks/gpu.py --render-from gpu_log.txt` rebuilds the tables.
#
#   bash benchmarks/gpu_workflow.sh             # on the GPU machine (carry .gpu-mirror and .whl)
#   bash benchmarks/gpu_workflow.sh --tiny      # here, on the CPU: the same stages at tiny size
# --deadline S: seconds from the start after which no stage starts (default 430; --tiny 2580).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
TINY=0 DEADLINE=""
OUT_DIR=${OUT:-$REPO/.gpu-out}
while [ $# -gt 0 ]; do
    case $1 in
        --tiny) TINY=1 ;;
        --out) OUT_DIR=$2; shift ;;
        --deadline) DEADLINE=$2; shift ;;
        *) echo "usage: $0 [--tiny] [--out DIR] [--deadline S]" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$OUT_DIR"
# --tiny on a shared CPU: every time limit below x TS (its steps are small, its machine slow)
TS=1
[ "$TINY" = 1 ] && TS=6
DEADLINE=${DEADLINE:-$((430 * TS))}
T0=$(date +%s)
END=$((T0 + DEADLINE))
LOG=$OUT_DIR/gpu_log.txt WFLOG=$OUT_DIR/workflow.log SUMMARY=$OUT_DIR/summary.txt
: >"$LOG"; : >"$WFLOG"; : >"$SUMMARY"
left() { echo $((END - $(date +%s))); }
s() { echo $(($1 * TS)); }  # a time limit, scaled
say() { echo "== [$(($(date +%s) - T0)) s] $*" | tee -a "$SUMMARY"; }
STAGE=$(mktemp -d /tmp/negcse-gpu-stage.XXXXXX)

# -- 0. the environment: the carried mirror and wheels ---------------------------------------------
[ -f .gpu-mirror/mirror.tar.xz ] || { echo "no .gpu-mirror/mirror.tar.xz: make gpu-mirror" >&2; exit 1; }
MIRROR=/tmp/negcse-gpu-mirror
rm -rf "$MIRROR" && mkdir -p "$MIRROR" && tar -xJf .gpu-mirror/mirror.tar.xz -C "$MIRROR"
pinned() { grep -E "^$1==" benchmarks/gpu_wheels.txt | cut -d= -f3; }
want=$(pinned transformers)
have=$(python3 -c 'import transformers; print(transformers.__version__)' 2>/dev/null || true)
if ! python3 -c 'import snakemake' 2>/dev/null || [ "$have" != "$want" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
fi
export PYTHONPATH=$REPO/src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export NEGCSE_MIRROR=$MIRROR NEGCSE_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export TOKENIZERS_PARALLELISM=false PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
# one compile cache for every process of the call: stage 3 reads what stage 2 compiled
export TORCHINDUCTOR_CACHE_DIR=/tmp/negcse-inductor TORCHINDUCTOR_FX_GRAPH_CACHE=1
export TORCHINDUCTOR_AUTOGRAD_CACHE=1 TRITON_CACHE_DIR=/tmp/negcse-triton
ARCH=$MIRROR/precomputed/smollm2-arch
CUDA=$(python3 -c 'import torch; print(int(torch.cuda.is_available()))')
{
    nvidia-smi 2>/dev/null || echo "no nvidia-smi"
    python3 -c 'import torch, transformers, tokenizers, huggingface_hub, snakemake as s
print("torch", torch.__version__, "cuda", torch.version.cuda, "| transformers",
      transformers.__version__, "| tokenizers", tokenizers.__version__, "| huggingface_hub",
      huggingface_hub.__version__, "| snakemake", s.__version__)'
    python3 -m negcse doctor || true
} >"$OUT_DIR/env.txt" 2>&1
if [ "$TINY" = 1 ] || [ "$CUDA" = 0 ]; then
    [ "$CUDA" = 0 ] || export CUDA_VISIBLE_DEVICES=""  # --tiny: CPU even where a GPU is
    DEVICE=cpu GPU="CPU (--tiny)" TINYFLAG=--tiny SECS=0.5
    # eager SimCSE and RankCSE, RankCSE with its teachers cached (compiling on a CPU takes
    # minutes: the compile stages run eager cases, which checks their plumbing), K = 1, 2
    EAGER="0 21 27" COMPILED="0 21 27" KS="1 2" PAR=2
    say "tiny: no CUDA here; the same stages on the CPU at tiny size (figures mean nothing)"
else
    DEVICE=cuda TINYFLAG="" SECS=2
    GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    # CASES of benchmarks/gpu.py: every family eager (SimCSE, SimCSE+SAN, OssCSE, UNA, SNCSE,
    # SNCSE+SAN, RankCSE, RLRD, GCSE; then the last three with their guides cached), then the
    # same with compile: auto's settings
    EAGER="0 1 2 3 4 5 21 22 23 27 28 29" KS="1 2 4" PAR=5
    COMPILED="11 12 13 14 15 16 24 25 26 30 31 32"
    say "GPU: $GPU; deadline $DEADLINE s"
fi
GPUPY=(python3 benchmarks/gpu.py $TINYFLAG --seconds "$SECS")

# -- 1. eager steps/s, alone on the GPU ------------------------------------------------------------
# (nominal times on an H100: setup 25 s, 1: 80 s, 2: 110 s, 3: 120 s, 4: 60 s (+ vLLM 60 s where
# installed), 5: 40 s, 6: 20 s;
# a stage starts only while the time left covers it and the stages after it need least)
if [ "$(left)" -gt "$(s 300)" ]; then
    say "1. eager steps/s: cases $EAGER"
    # shellcheck disable=SC2086  # lists of indices
    timeout "$(s 130)" "${GPUPY[@]}" --out-dir "$STAGE/1" --budget "$(s 95)" --cases $EAGER \
        --skip-generators --skip-eval-job >>"$LOG" 2>&1 || say "1. stopped ($?)"
fi

# -- 2. the compile pass beside the workflow on CUDA ------------------------------------------------
workflow() {
    local work steps=40 k=3 lines=6400 methods="[simcse, una, simcse_san]"
    [ "$DEVICE" = cpu ] && steps=4 k=2 lines=256 methods="[simcse, simcse_san]"
    work=$(mktemp -d /tmp/negcse-gpu-workflow.XXXXXX)
    tar -c --exclude=./.git --exclude=./.gpu-mirror --exclude=./.whl --exclude=./.gpu-out \
        --exclude=./results --exclude=./.snakemake --exclude=./logs . | tar -x -C "$work"
    mkdir -p "$work/results" && cp results/README.md "$work/results/"
    cat >"$work/gpu_grid.yaml" <<EOF
# benchmarks/gpu_workflow.sh: the smoke grid's methods without spaCy, over tests/smoke/config.yaml
# and CI's reductions (SAN without the negation fallback: the fallback's negations are spaCy's)
grid: {methods: $methods, backbones: [splade-tiny], seeds: [1]}
corpus: {max_sentences: $lines}
train_overrides: {batch_size: 64, learning_rate: 1.0e-4, max_steps: $steps, eval_steps: 20,
                  checkpoint_steps: 20, precision: fp32}
generators: {san: {fallback: false}}
EOF
    local opts=(--profile profiles/local --configfile tests/smoke/config.yaml tests/smoke/ci.yaml
                gpu_grid.yaml --config "device=$DEVICE" --scheduler greedy
                --cores "$(nproc)" --resources gpu=$k)
    local targets=(results/tables/sts.md results/tables/transfer.md)
    cd "$work"
    local t0; t0=$(date +%s)
    # the analysis sentences' negations (spaCy) come made: placed after the STS data they derive
    # from, so that Snakemake takes them as current
    snakemake results/data/sts_manifest.tsv "${opts[@]}" || return 1
    mkdir -p results/analysis
    cp "$MIRROR"/precomputed/sts_sentences.txt "$MIRROR"/precomputed/sts_sentences.negation.txt \
        results/analysis/
    NEGCSE_JOBS_PER_GPU=$k snakemake "${targets[@]}" "${opts[@]}" || return 1
    echo "workflow: $(($(date +%s) - t0)) s (beside the compile pass) with $k jobs per GPU"
    python3 - "$DEVICE" <<'EOF' || return 1
import json, pathlib, sys
want = sys.argv[1]
metas = sorted(pathlib.Path("results/models").glob("*/*/seed*/negcse.json"))
assert metas, "no trained model"
bad = [str(m) for m in metas if json.loads(m.read_text()).get("device") != want]
assert not bad, f"trained elsewhere than {want}: {bad}"
logs = [p for p in pathlib.Path("logs").rglob("*.log")
        if "encoding on device" in p.read_text(errors="replace")]
assert logs, "no evaluation log"
bad = [str(p) for p in logs if f"encoding on device {want}" not in p.read_text(errors="replace")]
assert not bad, f"evaluated elsewhere than {want}: {bad}"
tables = [t for t in ("sts", "transfer") if pathlib.Path(f"results/tables/{t}.md").is_file()]
assert tables == ["sts", "transfer"], f"tables written: {tables}"
print(f"checks: {len(metas)} trainings and {len(logs)} evaluations on {want}; tables {tables}")
print(pathlib.Path("results/tables/sts.md").read_text())
EOF
    snakemake "${targets[@]}" "${opts[@]}" -n >second_run.log 2>&1 || true
    cat second_run.log
    grep -q "Nothing to be done" second_run.log && echo "second run: nothing to be done"
}
if [ "$(left)" -gt "$(s 230)" ]; then
    say "2. compile pass (cases $COMPILED, $PAR at once) beside the workflow on $DEVICE"
    ( timeout "$(s 130)" bash -c "$(declare -f workflow); DEVICE=$DEVICE MIRROR=$MIRROR workflow" \
        >>"$WFLOG" 2>&1 && echo ok >"$STAGE/workflow.ok" ) &
    wf=$!
    # shellcheck disable=SC2086
    timeout "$(s 125)" "${GPUPY[@]}" --warm-cases $COMPILED --parallel $PAR --budget "$(s 70)" \
        >>"$LOG" 2>&1 || say "2. compile pass stopped ($?)"
    wait "$wf" || true
    if [ -f "$STAGE/workflow.ok" ]; then
        say "2. workflow: $(grep -E '^(workflow:|checks:|second run)' "$WFLOG" | tr '\n' ' ')"
    else
        say "2. workflow FAILED or stopped: workflow.log"
    fi
fi

# -- 3. compiled steps/s, alone on the GPU, from the compile caches ----------------------------------
if [ "$(left)" -gt "$(s 120)" ]; then
    say "3. compiled steps/s: cases $COMPILED"
    # shellcheck disable=SC2086
    timeout $(($(left) - $(s 95))) "${GPUPY[@]}" --out-dir "$STAGE/3" --budget $(($(left) - $(s 110))) \
        --cases $COMPILED --skip-dev-eval --skip-generators --skip-eval-job \
        >>"$LOG" 2>&1 || say "3. stopped ($?)"
fi

# -- 4. GCSE's synthesis LLM, back-translation, PEGASUS and SAN ----------------------------------
if [ "$(left)" -gt "$(s 75)" ]; then
    say "4. the synthesis LLM, back-translation, PEGASUS, SAN"
    timeout $(($(left) - $(s 45))) "${GPUPY[@]}" --out-dir "$STAGE/4" --cases --skip-dev-eval \
        --skip-eval-job --llm "$ARCH" >>"$LOG" 2>&1 || say "4. stopped ($?)"
fi
if [ "$(left)" -gt "$(s 110)" ] && python3 -c 'import vllm' 2>/dev/null; then
    say "4b. vLLM tokens/s on the synthesis prompts (SmolLM2-135M's architecture, random weights)"
    timeout "$(s 60)" python3 benchmarks/vllm_synthesis.py --model "$ARCH" --dummy \
        --prompts 512 --tokens 128 >>"$LOG" 2>&1 || say "4b. stopped ($?)"
else
    say "4b. vLLM: skipped (not installed here: envs/vllm.yaml; or no time left)"
fi

# -- 5. K jobs per GPU -----------------------------------------------------------------------------
if [ "$(left)" -gt "$(s 50)" ]; then
    say "5. aggregate steps/s, K = $KS"
    # shellcheck disable=SC2086
    timeout $(($(left) - $(s 20))) "${GPUPY[@]}" --jobs-per-gpu $KS >>"$LOG" 2>&1 || say "5. stopped ($?)"
fi

# -- 6. the tables and the re-priced grid ----------------------------------------------------------
TORCH=$(python3 -c 'import torch; print(torch.__version__)')
python3 benchmarks/gpu.py --render-from "$LOG" --out-dir "$OUT_DIR" --device-name "$GPU" \
    --wall $(($(date +%s) - T0)) --torch-version "$TORCH" $TINYFLAG \
    --command "bash benchmarks/gpu_workflow.sh $TINYFLAG" >/dev/null
python3 -m negcse estimate --costs benchmarks/gpu_costs.csv "$OUT_DIR/gpu_costs.csv" \
    >"$OUT_DIR/estimate.txt" 2>&1 || say "6. estimate failed: estimate.txt"
say "done in $(($(date +%s) - T0)) s: $(ls "$OUT_DIR" | tr '\n' ' ')"
rm -rf "$STAGE"
