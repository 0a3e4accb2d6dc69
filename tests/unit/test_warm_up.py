"""An assignment's warm-up (``Assignment.warm_up``, run by the fork server before it forks any worker) pays torch's
first-call costs and leaves nothing behind: no module of the reference imported, no object of a contract class
alive (and, for the LM, the global random numbers as they were). Run in a fresh interpreter, as a fork server runs
it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import gc, json, sys, torch
from grader.assignment import load
a = load(sys.argv[1])
names = {n for t in a.tasks for n in t.names}
torch.manual_seed(1234)
before = torch.get_rng_state().clone()
a.run_warm_up()
after = torch.get_rng_state()
ref = str(a.reference.resolve())
modules = [n for n, m in list(sys.modules.items()) if str(getattr(m, "__file__", None) or "").startswith(ref)]
alive = sorted({type(o).__name__ for o in gc.get_objects() if type(o).__name__ in names})
print(json.dumps({"warm": a.warm_up, "rng_same": bool(torch.equal(before, after)), "modules": modules,
                  "alive": alive}))
"""


@pytest.mark.parametrize("name", ["transformer", "decoder_lm"])
def test_a_warm_up_leaves_no_reference_no_contract_object_and_the_random_numbers(name):
    done = subprocess.run([sys.executable, "-c", SCRIPT, name], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["warm"], f"{name} has no warm-up: its workers pay torch's first-call costs in the checks"
    assert seen["modules"] == [] and seen["alive"] == [], seen
    # The Transformer's warm-up draws its modules' initial weights from the global generator, as it always has (its
    # workers' checks seed their own draws); the LM's puts the state back.
    if name == "decoder_lm":
        assert seen["rng_same"], seen
