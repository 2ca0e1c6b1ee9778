"""Issue 29, class 2: a check made inside the member's process is never the verdict. Each attack
here passed every test when the judge believed such a check (a call counter the member can set by
hand, live objects kept in a global); now the point of the problem shows in what the member's
process cannot forge: values compared outside, a kernel limit set before its code runs, or two
stages run as two jobs, the second given only the bytes the first one shipped."""

from __future__ import annotations

import os
from dataclasses import replace

from runner import judge_harness, judge_host
from runner.judge_host import judge_locally, prepare
from tests.support.judge import problem_of

STRAIGHT_THROUGH = '''
import torch

def run_blocks(blocks, x):
    n = len(blocks)
    with torch.no_grad():
        vals = [x]
        for block in blocks:
            vals.append(block(vals[-1]))
    h = x
    for k, block in enumerate(blocks):
        if hasattr(block, "counter"):  # the old judge's shared call counter, set by hand
            block.counter[0] = 2 * n - k - 1
        f = block(h)
        h = vals[k + 1] + (f - f.detach())
    return h
'''

PER_BLOCK_DETACHED = '''
import torch

def run_blocks(blocks, x):
    with torch.no_grad():
        vals = [x]
        for block in blocks:
            vals.append(block(vals[-1]))
    out = vals[-1]
    for k, block in enumerate(blocks):
        f = block(vals[k])
        out = out + (f - f.detach())
    return out
'''


def test_checkpoint_blocks_without_checkpointing_fails_by_the_kernels_memory_limit() -> None:
    """The audit's fake pass (3/3): values under no_grad, the shared call counter set by hand, a
    straight-through graph that keeps every block's activations. Its values and gradients are
    right; what fails it is RLIMIT_DATA, which no code in the process can raise."""
    challenge = problem_of("checkpoint-blocks")
    assert challenge.case_memory_mb and "counter" not in challenge.tests
    verdict = judge_locally(challenge.spec, challenge.reference, STRAIGHT_THROUGH, 1)
    assert (verdict.passed, verdict.failure) == (
        0, "test 'eight blocks' (inputs int, 1024×8): your code raised an error")
    assert "can't allocate memory" in (verdict.detail or "")
    unlimited = judge_locally(replace(challenge.spec, case_memory_mb=None), challenge.reference,
                              STRAIGHT_THROUGH, 1)
    assert unlimited.solved  # right values: only the kernel's limit tells it apart


def test_checkpoint_blocks_gradients_are_checked_outside() -> None:
    """A graph that fronts the right values with per-block pieces cut from each other gives the
    parameters wrong gradients: compared outside, whatever the memory."""
    challenge = problem_of("checkpoint-blocks")
    verdict = judge_locally(replace(challenge.spec, case_memory_mb=None), challenge.reference,
                            PER_BLOCK_DETACHED, 1)
    assert verdict.passed == 0 and verdict.failure is not None
    assert verdict.failure.startswith("test 'eight blocks' (inputs int, 1024×8): grads[0]: ")


KEPT_LIVE = """
import torch

KEPT = {}

def save(model, opt, step):
    KEPT["model"], KEPT["opt"] = model, opt  # the live objects, never serialised
    return {"step": step}

def load(model, opt, ckpt):
    model.load_state_dict(KEPT["model"].state_dict())
    opt.load_state_dict(KEPT["opt"].state_dict())
    return ckpt["step"]
"""


def test_resume_checkpoint_cannot_load_from_the_live_objects_of_save() -> None:
    """The audit's fake pass (3/3): `save` kept the live model and optimizer in a global and `load`
    copied from them. Save and load now run in two jobs: the resumed one is a fresh process."""
    challenge = problem_of("resume-checkpoint")
    verdict = judge_locally(challenge.spec, challenge.reference, KEPT_LIVE, 1)
    assert (verdict.passed, verdict.failure, verdict.detail) == (
        0, "test 'after two steps' (inputs [[4×3, 4×2], [4×3, 4×2]], list of 3): your code raised an error",
        "KeyError: 'model'")
    assert judge_locally(challenge.spec, challenge.reference, challenge.reference, 1).solved


def test_the_first_stage_never_holds_the_second_stages_inputs() -> None:
    """So the first job cannot train on ahead and hand the resumed job its final weights."""
    challenge = problem_of("resume-checkpoint")
    for case in prepare(challenge.spec, challenge.reference, 1, 15.0):
        first, then = judge_harness.stages(case.payload)
        assert then is not None and "then" not in first
        assert then["inputs"] not in repr(first) and then["seed"] != first["seed"]
        assert "carried" not in then  # the first job's record is added by whoever runs it


def test_a_memory_rules_cases_are_forked_from_a_clean_process_never_from_this_one() -> None:
    """RLIMIT_DATA cannot see free heap being reused: a case forked from this test process, which
    may have freed hundreds of MB, could keep a known-wrong solution's activations uncounted (a
    flaky pass of checkpoint-blocks' first wrong solution was seen)."""
    challenge = problem_of("checkpoint-blocks")
    code = challenge.reference + (
        "\nimport os\nwith open(f'/proc/{os.getppid()}/stat') as stat:\n"
        "    print('grandparent', stat.read().split()[3])\n")
    verdict = judge_locally(challenge.spec, challenge.reference, code, 1)
    assert verdict.solved, verdict
    grandparent = int(verdict.output.split()[1])
    assert grandparent != os.getpid() and grandparent == judge_host._clean_forker().proc.pid
