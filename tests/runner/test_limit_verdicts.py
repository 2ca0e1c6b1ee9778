"""The verdict a member reads for each runner limit, and the result around it (issue 21,
survivors of runner/outcome.py and runner/explain.py)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from runner.explain import CatalogError, exception_messages, explain, load_catalog
from runner.jobs import Device, JobRequest, JobState, Limits
from runner.outcome import build_result, verdict
from runner.sandbox import RawOutcome

LIMITS = Limits(timeout_s=2.5, cpu_time_s=7, memory_mb=300, max_procs=64, file_size_mb=3,
                output_cap_bytes=1000, display_chars=10)
REQUEST = JobRequest("print()", "m:a", {"channel": "1"}, Device.CPU)


def raw(exit_code: int | None = 1, killed: str | None = None, *, stderr: bytes = b"",
        stdout: bytes = b"", kernel: bool = False, pids: bool = False, restarted: bool = True,
        over: bool = False, rss_kb: int | None = 3072, gpu: int | None = None) -> RawOutcome:
    return RawOutcome(exit_code, killed, 0.12345, stdout, stderr, over, rss_kb, gpu,
                      kernel_limits=kernel, pids_limited=pids, restarted=restarted)


@pytest.mark.parametrize(("outcome", "expected"), [
    (raw(None, "timeout"), (JobState.TIMEOUT, "killed: wall-time limit 2.5 s")),
    (raw(None, "memory"), (JobState.FAILED, "killed: memory limit 300 MB exceeded")),
    (raw(None, "output"), (JobState.FAILED,
                           "killed: output limit 1000 bytes exceeded (output so far is attached)")),
    (raw(None, "cancelled"), (JobState.CANCELLED, "cancelled")),
    (raw(None, "crashed"), (JobState.FAILED, "the sandbox stopped during this job; it has been "
                                             "restarted, other jobs are unaffected")),
    (raw(None, "crashed", restarted=False), (JobState.FAILED, "the sandbox stopped during this job "
                                                              "and could not be restarted yet; the next job will try again")),
    (raw(0), (JobState.DONE, None)),
    (raw(-signal.SIGXCPU), (JobState.TIMEOUT, "killed: CPU-time limit 7 s")),
    (raw(-signal.SIGXFSZ), (JobState.FAILED, "killed: file size limit 3 MB exceeded")),
    (raw(-signal.SIGKILL), (JobState.FAILED, "killed by signal SIGKILL")),
    (raw(1, pids=True), (JobState.FAILED, "process limit 64 reached (fork/threads)")),
    (raw(1), (JobState.FAILED, None)),
    (raw(None), (JobState.FAILED, None)),
])
def test_each_limit_has_its_verdict(outcome: RawOutcome, expected: tuple[JobState, str | None]) -> None:
    assert verdict(outcome, LIMITS) == expected


@pytest.mark.parametrize(("fragment", "message"), [
    ("MemoryError", "memory limit 300 MB exceeded"),
    ("can't allocate memory", "memory limit 300 MB exceeded"),
    ("Cannot allocate memory", "memory limit 300 MB exceeded"),
    ("Resource temporarily unavailable", "process limit 64 reached (fork/threads)"),
    ("No space left on device", "disk limit: the job's temporary space is full"),
    ("File too large", "file size limit 3 MB exceeded"),
    ("Network is unreachable", "no network access: snippets run without a network"),
    ("Connection refused", "no network access: snippets run without a network"),
    ("Read-only file system", "only the job's temporary directory is writable"),
    ("Permission denied", "permission denied: a snippet can only write in its own temporary "
                          "directory and cannot read the bot's files"),
])
def test_stderr_guesses_without_kernel_counters(fragment: str, message: str) -> None:
    stderr = f"Traceback (most recent call last):\n\xff OSError: {fragment}\n".encode("latin-1")
    assert verdict(raw(1, stderr=stderr), LIMITS) == (JobState.FAILED, message)


def test_with_kernel_counters_memory_and_process_guesses_are_not_made() -> None:
    for fragment in ("MemoryError", "can't allocate memory", "Resource temporarily unavailable"):
        assert verdict(raw(1, stderr=fragment.encode(), kernel=True), LIMITS) == (JobState.FAILED, None)
    disk = verdict(raw(1, stderr=b"No space left on device", kernel=True), LIMITS)
    assert disk == (JobState.FAILED, "disk limit: the job's temporary space is full")


def test_only_the_last_4000_characters_of_stderr_are_read() -> None:
    early = b"MemoryError\n" + b"x" * 3989  # 4001 characters: its first falls outside
    assert verdict(raw(1, stderr=early), LIMITS) == (JobState.FAILED, None)
    late = b"MemoryError\n" + b"x" * 3980
    assert verdict(raw(1, stderr=late), LIMITS) == (JobState.FAILED, "memory limit 300 MB exceeded")


def test_output_exactly_at_the_display_size_is_shown_whole() -> None:
    result = build_result("j1", REQUEST, raw(0, stdout=b"0123456789", stderr=b"abcdefghij"), LIMITS,
                          device_used="cpu", device_note=None)
    assert (result.stdout, result.stderr, result.output_truncated, result.full_output) == (
        "0123456789", "abcdefghij", False, None)


def test_clipped_output_keeps_both_streams_whole_in_the_attachment() -> None:
    result = build_result("j1", REQUEST, raw(3, stdout=b"0123456789a", stderr=b"err"), LIMITS,
                          device_used="cuda:0", device_note="GPU 0", torch_version="2.5.1")
    assert result.stdout == "0123456789\n… (truncated: 1 more characters; full output attached)"
    assert result.full_output == b"0123456789a\n--- stderr ---\nerr"
    assert (result.job_id, result.exit_code, result.duration_s) == ("j1", 3, 0.123)
    assert (result.device_used, result.device_note, result.torch_version) == ("cuda:0", "GPU 0", "2.5.1")
    assert result.peak_rss_mb == 3.0 and result.gpu_max_allocated_mb is None
    assert result.state is JobState.FAILED and result.error_message is None
    assert result.request == REQUEST


def test_output_over_the_cap_is_marked_in_the_attachment() -> None:
    result = build_result("j2", REQUEST, raw(None, "output", stdout=b"abc", over=True, rss_kb=None, gpu=0),
                          LIMITS, device_used="cpu", device_note=None)
    assert result.output_truncated and result.stdout == "abc"
    assert result.full_output == b"abc\n--- output limit reached; the rest was discarded ---\n"
    assert result.peak_rss_mb is None and result.gpu_max_allocated_mb == 0.0
    assert result.error_message == "killed: output limit 1000 bytes exceeded (output so far is attached)"
    stderr_only = build_result("j3", REQUEST, raw(1, stderr=b"e" * 11, gpu=3 * 2**20 + 2**19), LIMITS,
                               device_used="cuda:0", device_note=None)
    assert stderr_only.full_output == b"\n--- stderr ---\n" + b"e" * 11
    assert stderr_only.gpu_max_allocated_mb == 3.5


# ---- runner/explain.py --------------------------------------------------------------------


def test_messages_keep_continuation_lines_and_split_at_frames_and_chaining() -> None:
    stderr = (
        "Traceback (most recent call last):\n"
        '  File "a.py", line 1, in <module>\n'
        "KeyError: 'w'\n"
        "  detail line\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "a.py", line 3, in <module>\n'
        "torch.OutOfMemoryError: CUDA out of memory.\n"
        "Tried to allocate 2.00 GiB\n"
    )
    assert exception_messages(stderr) == [
        "KeyError: 'w'\n  detail line",
        "torch.OutOfMemoryError: CUDA out of memory.\nTried to allocate 2.00 GiB",
    ]
    assert exception_messages("   \n") == []
    assert exception_messages("Segmentation fault (core dumped)\n") == ["Segmentation fault (core dumped)"]


def test_the_matched_line_is_the_one_that_matched(tmp_path: Path) -> None:
    catalog = tmp_path / "errors.yaml"
    catalog.write_text(
        "- id: shape-mismatch\n  title: Shapes\n  patterns: ['mat1 and mat2 shapes']\n"
        "  explanation: Shapes differ.\n  fix: Reshape.\n  related: [tensors-shape]\n"
        "- id: any-runtime\n  title: Any\n  patterns: ['^RuntimeError']\n"
        "  explanation: Generic.\n  fix: Read it.\n  fix_code: 'x = 1'\n"
    )
    entries = load_catalog(catalog)
    found = explain("RuntimeError: boom\n  at line\nmat1 and mat2 shapes cannot be multiplied\nend\n", entries)
    assert found is not None
    assert (found.id, found.title, found.explanation, found.fix, found.fix_code, found.related) == (
        "shape-mismatch", "Shapes", "Shapes differ.", "Reshape.", None, ["tensors-shape"])
    assert found.matched == "mat1 and mat2 shapes cannot be multiplied"
    generic = explain("RuntimeError: boom", entries)
    assert generic is not None and (generic.id, generic.fix_code, generic.matched) == (
        "any-runtime", "x = 1", "RuntimeError: boom")
    assert explain("ValueError: nope", entries) is None


def test_catalog_problems_name_the_file_and_line(tmp_path: Path) -> None:
    missing = tmp_path / "none.yaml"
    with pytest.raises(CatalogError, match=r"none\.yaml: cannot read the error catalog"):
        load_catalog(missing)
    not_list = tmp_path / "map.yaml"
    not_list.write_text("id: x\n")
    with pytest.raises(CatalogError, match=r"map\.yaml:1: the error catalog must be a YAML list of entries$"):
        load_catalog(not_list)
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("- just text\n")
    with pytest.raises(CatalogError, match=r"scalar\.yaml:1: entry #1 must be a mapping$"):
        load_catalog(scalar)
    empty = tmp_path / "empty.yaml"
    empty.write_text("- id: ok-one\n  title: T\n  patterns: ['  ']\n  explanation: E\n  fix: F\n")
    with pytest.raises(CatalogError, match=r"empty\.yaml:1: entry 'ok-one': patterns: a pattern is empty$"):
        load_catalog(empty)


def test_sizes_are_shown_to_a_tenth_and_undecodable_bytes_do_not_fail() -> None:
    result = build_result("j4", REQUEST, raw(0, stdout=b"ok \xff", rss_kb=102_912, gpu=1_294_467), LIMITS,
                          device_used="cuda:0", device_note=None)
    assert result.stdout == "ok \ufffd"
    assert (result.peak_rss_mb, result.gpu_max_allocated_mb) == (100.5, 1.2)
    small = build_result("j5", REQUEST, raw(0, rss_kb=1500), LIMITS, device_used="cpu", device_note=None)
    assert small.peak_rss_mb == 1.5


def test_two_headers_in_a_row_are_two_messages_and_patterns_anchor_on_any_line(tmp_path: Path) -> None:
    assert exception_messages("KeyError: 'a'\n  more\nValueError: b\n") == ["KeyError: 'a'\n  more", "ValueError: b"]
    catalog = tmp_path / "errors.yaml"
    catalog.write_text("- id: oom-line\n  title: OOM\n  patterns: ['^Tried to allocate']\n"
                       "  explanation: Too big.\n  fix: Smaller.\n")
    found = explain("torch.OutOfMemoryError: CUDA out of memory.\nTried to allocate 2 GiB\nnext\nlast\n",
                    load_catalog(catalog))
    assert found is not None and found.matched == "Tried to allocate 2 GiB"


def test_an_edited_catalog_is_read_again(tmp_path: Path) -> None:
    import os

    catalog = tmp_path / "errors.yaml"
    entry = "- id: {}\n  title: T\n  patterns: ['x']\n  explanation: E\n  fix: F\n"
    catalog.write_text(entry.format("aaa-one"))
    os.utime(catalog, ns=(1_000_000_000, 1_000_000_000))
    assert [e.id for e in load_catalog(catalog)] == ["aaa-one"]
    catalog.write_text(entry.format("bbb-one"))  # same size, a new time
    os.utime(catalog, ns=(2_000_000_000, 2_000_000_000))
    assert [e.id for e in load_catalog(catalog)] == ["bbb-one"]
    catalog.write_text(entry.format("cccc-two"))  # a new size, the same time
    os.utime(catalog, ns=(2_000_000_000, 2_000_000_000))
    assert [e.id for e in load_catalog(catalog)] == ["cccc-two"]
