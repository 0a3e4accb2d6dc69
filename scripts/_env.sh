# Sourced by scripts/gradekit and scripts/test: make sure .venv exists and holds
# torch, this package (editable) and its dependencies. Safe to run every time:
# each step is skipped when it has nothing to do.
#
#   GRADEKIT_PYTHON   interpreter used to create the venv (default: python3)
#   GRADEKIT_TORCH    pip requirement for torch when none is installed
#                     (default: torch==2.13.0; e.g. set it to
#                     "torch --index-url https://download.pytorch.org/whl/cpu"
#                     for a CPU-only build on Linux)
set -e
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
if [ ! -x "$PY" ]; then
    echo "gradekit: creating $VENV" >&2
    "${GRADEKIT_PYTHON:-python3}" -m venv "$VENV"
fi
# Whether torch is installed, from its metadata (pip writes it last): a tenth of a second, where importing torch to
# find out cost every command 1.5 s of CPU before it imported torch again.
if ! "$PY" -c "import importlib.metadata as m; m.version('torch')" >/dev/null 2>&1; then
    echo "gradekit: installing ${GRADEKIT_TORCH:-torch==2.13.0}" >&2
    # shellcheck disable=SC2086
    "$PY" -m pip install -q ${GRADEKIT_TORCH:-torch==2.13.0}
fi
# GRADEKIT_EXTRAS: optional dependency groups to install too (scripts/test sets "test").
EXTRAS="${GRADEKIT_EXTRAS:-}"
STAMP="$VENV/.gradekit-installed${EXTRAS:+-$EXTRAS}"
if [ ! -f "$STAMP" ] || [ "$ROOT/pyproject.toml" -nt "$STAMP" ]; then
    echo "gradekit: installing gradekit${EXTRAS:+[$EXTRAS]} and its dependencies into $VENV" >&2
    "$PY" -m pip install -q -e "$ROOT${EXTRAS:+[$EXTRAS]}"
    touch "$STAMP"
fi
