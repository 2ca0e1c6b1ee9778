"""The template's warm-up, in-process: a GPU slot's template must leave the CUDA driver alone.

Autograd's first backward counts the CUDA devices, which initialises the driver in that
process; every job forked from it then fails with "CUDA error: initialization error" (seen on
an H200: tests/runner/test_runner_gpu.py failed all three cases before this). Without a GPU here, the
test pins the cause: a GPU slot's warm-up runs no backward, a CPU slot's still does."""

from __future__ import annotations

import pytest

from runner import zygote

torch = pytest.importorskip("torch")


@pytest.fixture
def backwards(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    calls: list[object] = []
    real = torch.Tensor.backward

    def counting(self, *args, **kwargs):
        calls.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "backward", counting)
    threads = torch.get_num_threads()
    yield calls
    torch.set_num_threads(threads)


@pytest.mark.parametrize(("visible", "expected"), [("0", 0), ("3", 0), ("", 1)])
def test_only_cpu_slots_warm_autograd(backwards, monkeypatch, visible: str, expected: int) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    monkeypatch.setenv("TORCHDRILL_WARM", "1")
    assert zygote.warm_up() is True
    assert len(backwards) == expected


def test_a_cold_template_imports_nothing(backwards, monkeypatch) -> None:
    monkeypatch.setenv("TORCHDRILL_WARM", "0")
    assert zygote.warm_up() is False and backwards == []
