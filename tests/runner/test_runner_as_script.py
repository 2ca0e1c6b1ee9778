"""/run runs a snippet the way `python snippet.py` would, so the banks' answers hold there.

Found by `torchdrill content verify` (issue 20): in the sandbox `__main__` was not a real
module (pickle and mp.spawn could not find a snippet's functions), the source was not on
disk (inspect.getsource, torch.export failed; tracebacks had no source lines), and the
template's forks all drew the same random numbers. Real sandboxed runs on this host.
"""

from __future__ import annotations

import os
import textwrap

import pytest
import pytest_asyncio

from bot.snippet_verify import traceback_facts
from runner.embedded import EmbeddedRunner
from runner.isolation import Level, detect
from runner.jobs import JobRequest, JobResult, JobState
from runner.settings import RunnerSettings
from tests.support.run_desk import Collector

REQUIRE = os.environ.get("TORCHDRILL_REQUIRE_SERVICES") == "1"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runner(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("as-script")
    service = EmbeddedRunner(RunnerSettings(
        cpu_slots=1, gpus=[], timeout_s=30, cpu_time_s=30, memory_mb=1024, max_procs=64,
        rate_per_minute=100, journal_path=tmp / "journal.sqlite3",
        allow_weak_isolation=not REQUIRE and detect().level is Level.WEAK))
    results = Collector()
    service.on_result(results)
    await service.start()
    service.results = results  # type: ignore[attr-defined]
    yield service
    await service.close()


async def run(runner: EmbeddedRunner, code: str) -> JobResult:
    sub = await runner.submit(JobRequest(textwrap.dedent(code), "t:member", {"platform": "t"}))
    return await runner.results.wait(sub.job_id)  # type: ignore[attr-defined]


@pytest.mark.asyncio(loop_scope="module")
async def test_main_is_a_module_so_pickle_and_spawn_find_the_snippets_functions(runner) -> None:
    result = await run(runner, """
        import multiprocessing as mp
        import pickle

        class Config:
            size = 3

        def square(x):
            return x * x

        if __name__ == "__main__":
            print(type(pickle.loads(pickle.dumps(Config()))).__name__, Config.__module__)
            with mp.get_context("spawn").Pool(1) as pool:
                print(pool.map(square, [3, 4]))
    """)
    assert result.state is JobState.DONE, result.stderr
    assert result.stdout.splitlines() == ["Config __main__", "[9, 16]"]


@pytest.mark.asyncio(loop_scope="module")
async def test_the_source_is_on_disk_for_inspect_and_tracebacks(runner) -> None:
    result = await run(runner, """\
        import inspect
        import os

        def answer():
            return 42

        print(inspect.getsource(answer).splitlines()[0])
        print(os.path.basename(__file__), os.path.isfile(__file__))
        raise ValueError("shown with its line")
    """)
    assert result.state is JobState.FAILED
    assert result.stdout.splitlines() == ["def answer():", "snippet.py True"]
    assert ', line 9, in <module>\n    raise ValueError("shown with its line")' in result.stderr
    assert result.stderr.rstrip().endswith("ValueError: shown with its line")


@pytest.mark.asyncio(loop_scope="module")
async def test_each_job_draws_its_own_random_numbers_like_a_new_interpreter(runner) -> None:
    """Forks of one template would otherwise all print the same "random" tensor."""
    code = "import torch\nprint(torch.initial_seed(), torch.rand(2).tolist())"
    first, second = [await run(runner, code) for _ in range(2)]
    assert first.state is second.state is JobState.DONE, first.stderr
    assert first.stdout.count(" ") == 2 and first.stdout != second.stdout


def test_error_facts_come_from_the_last_traceback_not_quoted_frames() -> None:
    dynamo = textwrap.dedent('''\
        W1203 some warning line
        Traceback (most recent call last):
          File "snippet.py", line 9, in <module>
            g(torch.ones(2))
          File "/site-packages/torch/_dynamo/eval_frame.py", line 1, in _fn
            return fn(*args)
        torch._dynamo.exc.Unsupported: Failed to trace builtin operator
          Explanation: print is a graph break

        from user code:
           File "snippet.py", line 5, in f
            print("inside")

        Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace
    ''')
    assert traceback_facts(dynamo) == (
        "torch._dynamo.exc.Unsupported: Failed to trace builtin operator", 9)
    chained = ('Traceback (most recent call last):\n  File "snippet.py", line 2, in <module>\n'
               'KeyError: 1\n\nDuring handling of the above exception, another exception '
               'occurred:\n\nTraceback (most recent call last):\n  File "snippet.py", line 4, '
               'in <module>\nValueError: second\n')
    assert traceback_facts(chained) == ("ValueError: second", 4)
    syntax = '  File "snippet.py", line 3\n    x = (\n        ^\nSyntaxError: \'(\' was never closed\n'
    assert traceback_facts(syntax) == ("SyntaxError: '(' was never closed", 3)
    assert traceback_facts("just a log line\n") == (None, None)
