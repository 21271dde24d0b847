#!/usr/bin/env bash
# `make gpu-mirror`: what benchmarks/gpu_workflow.sh needs on the GPU machine, in git-ignored
# folders that a call carries (64 MiB in all, the tree included):
#   .gpu-mirror/mirror.tar.xz  the mirror's splade-tiny and the data the smoke grid and
#       benchmarks/gpu.py read; in precomputed/, the analysis sentences' spaCy negations (made
#       here by the workflow's own rules: spaCy's wheels do not fit a call) and the pinned
#       SmolLM2-135M's architecture (config and tokenizer, benchmarks/gcse_generation.py
#       --export-arch; its weights are not needed: the LLM is timed with random weights);
#   .whl/  the wheels of benchmarks/gpu_wheels.txt for the machine's Python 3.12 (pip download
#       from PyPI; connection-pool built here: it has no wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
MIRROR=${NEGCSE_MIRROR:-../shared/mirror}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
m=$stage/mirror
mkdir -p "$m/data/senteval" "$m/models" "$m/precomputed"
cp -r "$MIRROR/models/splade-tiny" "$m/models/"
cp -r "$MIRROR"/data/{raw,san,unlabeled,reranking,MANIFEST.tsv,README.md} "$m/data/"
for task in CR TREC SICK STS MR SUBJ MPQA MRPC; do cp -r "$MIRROR/data/senteval/$task" "$m/data/senteval/"; done
mkdir -p "$m/data/senteval/SST" && cp -r "$MIRROR/data/senteval/SST/binary" "$m/data/senteval/SST/"
# the STS analysis sentences and their SNCSE negations: CPU outputs of the workflow whose
# negation needs spaCy; made here by the same rules
work=$stage/work
mkdir -p "$work"
tar -c --exclude=./.git --exclude=./.gpu-mirror --exclude=./.whl --exclude=./results \
    --exclude=./.snakemake --exclude=./logs --exclude=./.venv . | tar -x -C "$work"
(cd "$work" && NEGCSE_MIRROR=$MIRROR NEGCSE_OFFLINE=1 PYTHONPATH=$work/src \
    snakemake results/analysis/sts_sentences.negation.txt --configfile tests/smoke/config.yaml \
    --cores 2 --quiet all)
cp "$work"/results/analysis/sts_sentences.txt "$work"/results/analysis/sts_sentences.negation.txt \
    "$m/precomputed/"
arch=$stage/arch
NEGCSE_MIRROR=$MIRROR python3 benchmarks/gcse_generation.py --export-arch "$arch" >/dev/null
mkdir -p "$m/precomputed/smollm2-arch"
cp "$arch"/{config.json,tokenizer.json,tokenizer_config.json,special_tokens_map.json} \
    "$m/precomputed/smollm2-arch/"
[ -f "$arch/chat_template.jinja" ] && cp "$arch/chat_template.jinja" "$m/precomputed/smollm2-arch/"
rm -rf .gpu-mirror && mkdir -p .gpu-mirror
tar -C "$m" -cf - . | xz -9 -T0 >.gpu-mirror/mirror.tar.xz
mkdir -p .whl
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
           --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
for spec in $(grep -v '^#' benchmarks/gpu_wheels.txt); do
    name=${spec%%==*}
    if ls .whl | grep -qi "^${name//-/_}-${spec##*==}-"; then continue; fi
    if [ "$name" = connection-pool ]; then
        python3 -m pip wheel -q --no-deps -w .whl "$spec"
    else
        python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
            --implementation cp "${PLATFORMS[@]}" -d .whl "$spec"
    fi
done
total=$(du -scm .gpu-mirror .whl | tail -1 | cut -f1)
tree=$(git ls-files -z | xargs -0 du -cm 2>/dev/null | tail -1 | cut -f1)
echo "carried: .gpu-mirror + .whl = ${total} MiB, tracked tree ~${tree} MiB (limit 64 MiB)"
[ $((total + tree)) -lt 64 ] || { echo "over the 64 MiB a call carries" >&2; exit 1; }
