#!/usr/bin/env bash
# The GPU checks and figures of the JAX backend as one prepared job for a lent GPU machine (one NVIDIA H100 or
# H200, 16 cores; its image has jax with CUDA, optax, numba, numpy, scipy, sympy, rich and matplotlib, but not
# this package's solver clarabel).  Stages, each under its own time limit, each writing into $OUT (or ./device-out):
#
#   check   benchmarks/device_check.py on the GPU: engine and trainer against numpy, resume, the CLI  (~1-2 min)
#   engine  the construction's exhaustive pass at (199,3), (101,4), (47,5) on the GPU, each with the bare GEMM of
#           its shape on the GPU (GPU_SUB_CHUNKS="4 16": also with that many sub-chunks per call); numpy on the 16
#           cores at (199,3); a first run and 2 timed runs each (~3 min if the GPU targets hold)
#   train   the trainer at (17,3) m=512: 1000 steps on the GPU (float64, float32), 100 on numpy and jax-cpu, each
#           run in its own process, twice, compared per step (~3 min)
#   papers  the papers' runs: train (float32, the papers' objective) + analyze, $PAPERS_STEPS steps each
#           (default 3000), the cases in $PAPERS_CASES (default all three)
#
# Before the call, here (the wheels the image lacks; about 1.5 MB):
#   echo /.whl/ >> .git/info/exclude
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl clarabel cffi pycparser
# The call (carry .whl), e.g. the first three stages in about 7 minutes:
#   bash benchmarks/device_session.sh check engine train
# What comes back fits the device's 8 files: session.log (all output), check.json, engine.json, train.json,
# papers.json and each papers' run's summary figure (papers_P_K_M.png); the runs' other files stay in /tmp/papers.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/margintheory-device-out}
# a dry run on any machine: DEVICE=cpu with small sizes, e.g.
#   DEVICE=cpu ENGINE_CASES="11x3 5x4" TRAIN_CASE=5x3x16 TRAIN_STEPS=20 CPU_STEPS=10 PAPERS_CASES=7x3x48 \
#     PAPERS_STEPS=20 bash benchmarks/device_session.sh check engine train papers
DEVICE=${DEVICE:-gpu}
mkdir -p "$OUT"
if [ -z "${_SESSION_LOGGED:-}" ]; then  # everything once more through tee, which the pipeline waits for
  _SESSION_LOGGED=1 bash "$0" "$@" 2>&1 | tee -a "$OUT/session.log"
  exit "${PIPESTATUS[0]}"
fi
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(check engine train)
for s in "${stages[@]}"; do  # all names checked before any device time is spent
  case $s in
    check | engine | train | papers) ;;
    *) echo "unknown stage '$s' (check, engine, train, papers)" >&2; exit 2 ;;
  esac
done
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH="$PYTHONPATH:/tmp/site" || { echo "installing the carried wheels failed" >&2; exit 2; }
fi
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1; nproc; uptime;
  python3 -c "import jax, optax, numpy, numba; print('jax', jax.__version__, jax.devices(), 'optax', optax.__version__,
'numpy', numpy.__version__, 'numba', numba.__version__)"; }
status=0
stage() {  # stage NAME LIMIT_SECONDS COMMAND...: one stage under its time limit, its exit code and seconds printed
  local name=$1 limit=$2; shift 2
  echo "== $name (limit ${limit} s): $*"
  local t0=$SECONDS
  timeout "$limit" "$@"
  local rc=$?
  echo "== $name: exit $rc after $((SECONDS - t0)) s"
  [ "$rc" -eq 0 ] || status=1
}
for s in "${stages[@]}"; do
  case $s in
    check) stage check 240 python3 benchmarks/device_check.py --device "$DEVICE" --json "$OUT/check.json" ;;
    engine) # shellcheck disable=SC2086
      stage engine 330 python3 benchmarks/bench_backends.py --engine ${ENGINE_CASES:-199x3 101x4 47x5} --train none \
        --backends "numpy,jax-$DEVICE" --cpu-max-points 1e7 --gpu-sub-chunks ${GPU_SUB_CHUNKS:-} --repeats 2 \
        --json "$OUT/engine.json" ;;
    train) stage train 240 python3 benchmarks/bench_backends.py --engine --train "${TRAIN_CASE:-17x3x512}" \
        --steps "${TRAIN_STEPS:-1000}" --cpu-steps "${CPU_STEPS:-100}" --repeats 2 --json "$OUT/train.json" ;;
    papers) # shellcheck disable=SC2086
      rm -rf /tmp/papers
      stage papers "${PAPERS_LIMIT:-540}" python3 benchmarks/bench_backends.py \
        "$([ "$DEVICE" = gpu ] && echo --papers || echo --papers-quick)" /tmp/papers \
        ${PAPERS_CASES:+--papers-cases $PAPERS_CASES} --papers-steps "${PAPERS_STEPS:-3000}" \
        --json "$OUT/papers.json"
      for d in /tmp/papers/*/; do
        [ -f "$d/figures/summary.png" ] && cp "$d/figures/summary.png" "$OUT/papers_$(basename "$d").png"
      done ;;
  esac
done
exit $status
