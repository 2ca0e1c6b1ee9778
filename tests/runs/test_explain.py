"""The error catalog against real PyTorch failures.

Every CPU-reproducible error is raised by a real snippet (in a clean namespace of a warm
interpreter, or its own interpreter when it starts processes), and its real stderr goes
through explain(). CUDA-only failures use torch's exact message
format as fixtures. The table must cover every catalog entry, so an entry cannot be added
without a snippet proving that its patterns match what torch prints.
"""

from __future__ import annotations

import importlib.util
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.core.content.bank import Snippet, load_library
from bot.core.content.keys import Outcome
from bot.snippet_pool import run_all
from runner.explain import (
    DEFAULT_CATALOG,
    CatalogError,
    exception_messages,
    explain,
    load_catalog,
)


@dataclass(frozen=True)
class Case:
    name: str
    expected: str  # catalog id that must be chosen
    code: str | None = None  # a real snippet, run with `python -c`
    stderr: str | None = None  # CUDA-only: torch's message as a stderr fixture
    matched: str = ""  # text the matched line must contain


def snippet(name: str, expected: str, code: str, matched: str = "") -> Case:
    return Case(name, expected, code=textwrap.dedent(code).strip() + "\n", matched=matched)


def fixture(name: str, expected: str, stderr: str, matched: str = "") -> Case:
    return Case(name, expected, stderr=textwrap.dedent(stderr).lstrip("\n"), matched=matched)


_TRACEBACK = 'Traceback (most recent call last):\n  File "job.py", line 12, in <module>\n'

CASES: list[Case] = [
    # --- memory
    snippet(
        "cpu_alloc_too_large",
        "cpu-out-of-memory",
        "import torch\ntorch.empty(2**45, dtype=torch.uint8)",
        matched="DefaultCPUAllocator",
    ),
    # c10/cuda/CUDACachingAllocator.cpp (torch >= 2.5 raises torch.OutOfMemoryError).
    fixture(
        "cuda_oom_new_format",
        "cuda-out-of-memory",
        _TRACEBACK
        + "    y = model(x)\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.10 GiB of which 1.06 GiB is free. Including non-PyTorch memory, "
        "this process has 78.03 GiB memory in use. Of the allocated memory 76.52 GiB is "
        "allocated by PyTorch, and 1.01 GiB is reserved by PyTorch but unallocated. If reserved "
        "but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:"
        "True to avoid fragmentation.  See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n",
        matched="Tried to allocate 2.00 GiB",
    ),
    # The torch 1.x format, still pasted in every forum thread.
    fixture(
        "cuda_oom_old_format",
        "cuda-out-of-memory",
        _TRACEBACK
        + "RuntimeError: CUDA out of memory. Tried to allocate 36.00 MiB (GPU 0; 7.93 GiB total "
        "capacity; 130.35 MiB already allocated; 47.06 MiB free; 188.00 MiB reserved in total by "
        "PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to "
        "avoid fragmentation.  See documentation for Memory Management and "
        "PYTORCH_CUDA_ALLOC_CONF\n",
    ),
    # A CUDA runtime allocation failure (cudaErrorMemoryAllocation) outside the caching
    # allocator, e.g. while creating a context or a cuBLAS workspace: c10_cuda_check_implementation.
    fixture(
        "cuda_error_out_of_memory",
        "cuda-out-of-memory",
        _TRACEBACK
        + "    torch.cuda.synchronize()\n"
        "torch.AcceleratorError: CUDA error: out of memory\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n\n",
        matched="CUDA error: out of memory",
    ),
    # --- CUDA: c10_cuda_check_implementation + get_cuda_check_suffix; the kernel's assertion
    # line is printed by the device before the Python traceback.
    fixture(
        "cuda_device_side_assert",
        "cuda-device-side-assert",
        "/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: "
        "block: [0,0,0], thread: [1,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
        + _TRACEBACK
        + "    print(loss.item())\n"
        "torch.AcceleratorError: CUDA error: device-side assert triggered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n\n",
        matched="CUDA error: device-side assert triggered",
    ),
    snippet(
        "cuda_on_cpu_build",
        "cuda-not-available",
        "import torch\nmodel = torch.nn.Linear(2, 2).to('cuda')",
    ),
    snippet(
        "torch_load_cuda_checkpoint",
        "load-gpu-checkpoint-on-cpu",
        # A real checkpoint whose storage location says cuda:0, as one saved on a GPU would.
        """
        import io, zipfile, torch
        saved = io.BytesIO()
        torch.save(torch.ones(2), saved)
        gpu_ckpt = io.BytesIO()
        with zipfile.ZipFile(saved) as src, zipfile.ZipFile(gpu_ckpt, 'w') as dst:
            for info in src.infolist():
                data = src.read(info)
                if info.filename.endswith('data.pkl'):
                    data = data.replace(b'X\\x03\\x00\\x00\\x00cpu', b'X\\x06\\x00\\x00\\x00cuda:0')
                dst.writestr(info, data)
        gpu_ckpt.seek(0)
        torch.load(gpu_ckpt)
        """,
    ),
    # --- devices and numpy
    snippet(
        "numpy_on_meta_tensor",
        "numpy-on-device-tensor",
        "import torch\ntorch.ones(2, device='meta').numpy()",
    ),
    # torch/csrc/utils/tensor_numpy.cpp with a CUDA tensor.
    fixture(
        "numpy_on_cuda_tensor",
        "numpy-on-device-tensor",
        _TRACEBACK
        + "TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy "
        "the tensor to host memory first.\n",
    ),
    snippet(
        "numpy_requires_grad",
        "numpy-requires-grad",
        "import torch\nimport numpy as np\nw = torch.ones(2, requires_grad=True)\nnp.asarray(w * 2)",
    ),
    snippet(
        "meta_model_cpu_input",
        "device-mismatch",
        "import torch\nmodel = torch.nn.Linear(2, 2, device='meta')\nmodel(torch.ones(1, 2))",
        matched="is not on the expected device",
    ),
    # aten/src/ATen/core/adaption.cpp, current format.
    fixture(
        "cuda_cpu_mix_new_format",
        "device-mismatch",
        _TRACEBACK
        + "RuntimeError: Expected all tensors to be on the same device, but got mat1 is on cpu, "
        "different from other tensors on cuda:0 (when checking argument in method "
        "wrapper_CUDA_addmm)\n",
    ),
    # Same file, torch 1.x - 2.4 format.
    fixture(
        "cuda_cpu_mix_old_format",
        "device-mismatch",
        _TRACEBACK
        + "RuntimeError: Expected all tensors to be on the same device, but found at least two "
        "devices, cuda:0 and cpu! (when checking argument for argument mat1 in method "
        "wrapper_CUDA_addmm)\n",
    ),
    fixture(
        "conv_cuda_input_cpu_weight",
        "device-mismatch",
        _TRACEBACK
        + "RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) "
        "should be the same or input should be a MKLDNN tensor and weight is a dense tensor\n",
    ),
    # --- autograd
    snippet(
        "backward_twice",
        "backward-twice",
        """
        import torch
        x = torch.ones(2, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()
        """,
    ),
    snippet(
        "leaf_inplace_update",
        "leaf-inplace",
        "import torch\nw = torch.ones(2, requires_grad=True)\nw -= 0.1",
    ),
    snippet(
        "sigmoid_output_modified",
        "inplace-modified-for-grad",
        """
        import torch
        x = torch.ones(2, requires_grad=True)
        y = torch.sigmoid(x)
        y.mul_(2)
        y.sum().backward()
        """,
        matched="output 0 of Sigmoid",
    ),
    snippet(
        "loss_under_no_grad",
        "backward-no-grad-fn",
        """
        import torch
        w = torch.ones(2, requires_grad=True)
        with torch.no_grad():
            loss = (w * 2).sum()
        loss.backward()
        """,
    ),
    snippet(
        "backward_non_scalar",
        "grad-non-scalar",
        "import torch\nx = torch.ones(3, requires_grad=True)\n(x * 2).backward()",
    ),
    snippet(
        "int_parameter",
        "int-requires-grad",
        "import torch\ntorch.nn.Parameter(torch.tensor([1, 2]))",
    ),
    # --- losses
    snippet(
        "cross_entropy_float_target",
        "loss-target-dtype",
        "import torch\ntorch.nn.CrossEntropyLoss()(torch.randn(3, 5), torch.tensor([1.0, 2.0, 0.0]))",
    ),
    snippet(
        "nll_int32_target",
        "loss-target-dtype",
        "import torch\nimport torch.nn.functional as F\n"
        "F.nll_loss(torch.randn(3, 5), torch.tensor([1, 2, 0], dtype=torch.int32))",
    ),
    snippet(
        "cross_entropy_one_hot_long",
        "loss-target-dtype",
        "import torch\nimport torch.nn.functional as F\n"
        "F.cross_entropy(torch.randn(3, 5), F.one_hot(torch.tensor([0, 1, 2]), 5))",
        matched="class probabilities",
    ),
    snippet(
        "cross_entropy_labels_n_by_1",
        "loss-multi-target",
        "import torch\ntorch.nn.CrossEntropyLoss()(torch.randn(3, 5), torch.tensor([[0], [1], [2]]))",
    ),
    snippet(
        "cross_entropy_batch_mismatch",
        "loss-batch-size-mismatch",
        "import torch\ntorch.nn.CrossEntropyLoss()(torch.randn(4, 5), torch.tensor([1, 2]))",
    ),
    snippet(
        "cross_entropy_label_too_big",
        "loss-target-out-of-bounds",
        "import torch\ntorch.nn.CrossEntropyLoss()(torch.randn(2, 3), torch.tensor([0, 3]))",
    ),
    # --- shapes
    snippet(
        "linear_in_features",
        "matmul-shape-mismatch",
        "import torch\ntorch.nn.Linear(3, 4)(torch.ones(2, 5))",
        matched="(2x5 and 3x4)",
    ),
    snippet(
        "linear_float64_input",
        "dtype-mismatch",
        "import numpy as np, torch\nx = torch.from_numpy(np.ones((1, 2)))\n"
        "torch.nn.Linear(2, 2)(x)",
        matched="Double and Float",
    ),
    snippet(
        "conv_float64_input",
        "dtype-mismatch",
        "import torch\ntorch.nn.Conv2d(1, 1, 2)(torch.ones(1, 1, 3, 3, dtype=torch.float64))",
    ),
    snippet(
        "add_broadcast",
        "broadcast-mismatch",
        "import torch\ntorch.ones(3) + torch.ones(4)",
    ),
    snippet(
        "view_after_transpose",
        "view-non-contiguous",
        "import torch\ntorch.ones(2, 3).t().view(6)",
    ),
    snippet(
        "view_wrong_numel",
        "reshape-invalid-size",
        "import torch\ntorch.ones(6).view(4, 2)",
    ),
    # DataLoader re-raises the worker's error; the worker's own (inner) message must be used.
    snippet(
        "collate_variable_length",
        "cat-stack-size-mismatch",
        """
        import torch
        from torch.utils.data import DataLoader
        samples = [torch.ones(2), torch.ones(3)]
        list(DataLoader(samples, batch_size=2, num_workers=1))
        """,
        matched="stack expects each tensor to be equal size",
    ),
    snippet(
        "conv_unbatched_2d",
        "conv-input-dims",
        "import torch\ntorch.nn.Conv2d(3, 8, 3)(torch.ones(28, 28))",
    ),
    snippet(
        "batchnorm_2d_input",
        "conv-input-dims",
        "import torch\ntorch.nn.BatchNorm2d(3)(torch.ones(4, 3))",
    ),
    snippet(
        "conv_channels_last",
        "conv-channel-mismatch",
        "import torch\ntorch.nn.Conv2d(3, 8, 3)(torch.ones(1, 32, 32, 3))",
    ),
    snippet(
        "item_on_vector",
        "tensor-to-scalar",
        "import torch\ntorch.ones(3).item()",
    ),
    snippet(
        "embedding_id_too_big",
        "embedding-index-out-of-range",
        "import torch\ntorch.nn.Embedding(10, 4)(torch.tensor([3, 10]))",
    ),
    snippet(
        "lstm_float64_input",
        "dtype-mismatch",
        "import torch\ntorch.nn.LSTM(4, 8)(torch.randn(2, 3, 4, dtype=torch.float64))",
        matched="RNN input dtype (torch.float64) does not match weight dtype (torch.float32)",
    ),
    snippet(
        "lstm_wrong_input_size",
        "rnn-input-size",
        "import torch\ntorch.nn.LSTM(4, 8)(torch.randn(2, 3, 5))",
        matched="Expected 4, got 5",
    ),
    snippet(
        "batchnorm_one_sample",
        "batchnorm-single-sample",
        "import torch\ntorch.nn.BatchNorm1d(3)(torch.randn(1, 3))",
        matched="got input size torch.Size([1, 3])",
    ),
    snippet(
        "embedding_float_ids",
        "embedding-float-indices",
        "import torch\ntorch.nn.Embedding(10, 3)(torch.tensor([1.0, 2.0]))",
        matched="but got torch.FloatTensor instead",
    ),
    snippet(
        "index_past_the_end",
        "index-out-of-bounds",
        "import torch\nx = torch.zeros(3, 2)\nx[:, 4]",
        matched="index 4 is out of bounds for dimension 1 with size 2",
    ),
    snippet(
        "optimizer_plain_list_of_layers",
        "optimizer-empty-params",
        """
        import torch
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = [torch.nn.Linear(2, 2)]  # a plain list registers nothing
        torch.optim.SGD(Net().parameters(), lr=0.1)
        """,
    ),
    snippet(
        "anomaly_sqrt_at_zero",
        "anomaly-nan",
        """
        import torch
        x = torch.zeros(1, requires_grad=True)
        with torch.autograd.detect_anomaly():
            (x.sqrt() * 0).sum().backward()
        """,
        matched="Function 'SqrtBackward0' returned nan values in its 0th output",
    ),
    snippet(
        "rank_before_init_process_group",
        "process-group-not-initialized",
        "import torch.distributed as dist\ndist.get_rank()",
    ),
    snippet(
        "torch_load_custom_class",
        "load-weights-only",
        """
        import io, torch
        class Config:
            pass
        buffer = io.BytesIO()
        torch.save({"config": Config(), "w": torch.ones(1)}, buffer)
        buffer.seek(0)
        torch.load(buffer)
        """,
        matched="Weights only load failed",
    ),
    snippet(
        "nll_loss_one_hot_target",
        "loss-multi-target",
        """
        import torch
        import torch.nn.functional as F
        one_hot = F.one_hot(torch.tensor([0, 2]), 3)
        F.nll_loss(torch.randn(2, 3).log_softmax(1), one_hot)
        """,
    ),
    # --- data loading
    snippet(
        "dataloader_dataset_holds_open_file",
        "dataloader-pickle",
        """
        import multiprocessing as mp, os
        from torch.utils.data import DataLoader, Dataset
        class Lines(Dataset):
            def __init__(self):
                self.file = open(os.devnull)  # opened once, in the main process
            def __len__(self):
                return 2
            def __getitem__(self, i):
                return i
        if __name__ == '__main__':
            mp.set_start_method('spawn')
            list(DataLoader(Lines(), num_workers=1))
        """,
        matched="cannot pickle '_io.TextIOWrapper' object",
    ),
    snippet(
        "dataloader_lambda_spawn",
        "dataloader-pickle",
        """
        import multiprocessing as mp
        from torch.utils.data import DataLoader
        if __name__ == '__main__':
            mp.set_start_method('spawn')
            list(DataLoader(list(range(4)), num_workers=1, collate_fn=lambda batch: batch))
        """,
    ),
    snippet(
        "dataloader_worker_killed",
        "dataloader-worker-killed",
        """
        import os, signal
        from torch.utils.data import DataLoader, Dataset
        class Killed(Dataset):
            def __len__(self):
                return 4
            def __getitem__(self, i):
                os.kill(os.getpid(), signal.SIGKILL)
        list(DataLoader(Killed(), num_workers=1))
        """,
    ),
    # --- checkpoints
    snippet(
        "state_dict_from_dataparallel",
        "state-dict-module-prefix",
        """
        import torch
        model = torch.nn.Linear(2, 2)
        saved = {'module.' + k: v for k, v in model.state_dict().items()}
        model.load_state_dict(saved)
        """,
        matched='Unexpected key(s) in state_dict: "module.weight"',
    ),
    snippet(
        "state_dict_size_mismatch",
        "state-dict-mismatch",
        "import torch\ntorch.nn.Linear(2, 2).load_state_dict(torch.nn.Linear(3, 2).state_dict())",
    ),
]

SNIPPETS = [c for c in CASES if c.code is not None]


@pytest.fixture(scope="module")
def real_stderr() -> dict[str, Outcome]:
    """Run every snippet once, in warm interpreters (bot/snippet_pool.py): a clean namespace
    each, the stderr python prints; multiprocessing snippets get an interpreter of their own."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (it is in the `runner` extra)")
    snippets = [Snippet(code=case.code) for case in SNIPPETS if case.code is not None]
    results = run_all(snippets, workers=max(1, min(3, os.cpu_count() or 1)), timeout=180)
    return {case.name: result for case, result in zip(SNIPPETS, results, strict=True)}


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_explains_real_error(case: Case, real_stderr: dict[str, Outcome]) -> None:
    if case.code is not None:
        proc = real_stderr[case.name]
        assert proc.returncode != 0, f"snippet did not fail:\n{case.code}\n{proc.stdout}"
        stderr = proc.stderr
    else:
        assert case.stderr is not None
        stderr = case.stderr
    result = explain(stderr)
    assert result is not None, f"nothing matched:\n{stderr[-2000:]}"
    assert result.id == case.expected, f"chose {result.id} for:\n{result.matched}"
    assert case.matched in result.matched
    assert result.matched in stderr


def test_every_catalog_entry_is_tested() -> None:
    ids = {entry.id for entry in load_catalog()}
    tested = {case.expected for case in CASES}
    assert ids - tested == set(), "catalog entries without a test case"
    assert tested - ids == set(), "test cases expecting ids that are not in the catalog"


def test_catalog_validates_and_has_the_core_errors() -> None:
    catalog = load_catalog()
    assert len(catalog) >= 15
    for entry in catalog:
        assert entry.explanation and entry.fix and entry.patterns
    assert load_catalog() == catalog  # cached load returns the same entries


def test_related_ids_exist_in_the_question_banks() -> None:
    library = load_library()
    if len(library) == 0:
        pytest.skip("no question bank in content/ loaded, so related ids cannot be checked")
    missing = {
        entry.id: [qid for qid in entry.related if qid not in library]
        for entry in load_catalog()
    }
    assert {k: v for k, v in missing.items() if v} == {}
    assert any(entry.related for entry in load_catalog())


def test_unrelated_error_is_not_explained() -> None:
    stderr = _TRACEBACK + "ZeroDivisionError: division by zero\n"
    assert explain(stderr) is None
    assert explain("") is None
    assert explain("all good\n") is None


def test_last_exception_wins_over_earlier_output() -> None:
    # An earlier, handled torch error is printed to the log; the job then dies of another one.
    stderr = (
        "warning: RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)\n"
        + _TRACEBACK
        + "RuntimeError: view size is not compatible with input tensor's size and stride\n"
    )
    result = explain(stderr)
    assert result is not None and result.id == "view-non-contiguous"


def test_chained_traceback_falls_back_to_the_cause() -> None:
    stderr = (
        _TRACEBACK
        + "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        + _TRACEBACK
        + "ValueError: training step 3 failed\n"
    )
    messages = exception_messages(stderr)
    assert messages == [
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
        "ValueError: training step 3 failed",
    ]
    result = explain(stderr)
    assert result is not None and result.id == "matmul-shape-mismatch"
    assert result.matched.endswith("(2x3 and 4x5)")


def test_multiline_message_stays_with_its_header() -> None:
    stderr = (
        _TRACEBACK
        + "RuntimeError: Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "module.fc.weight". \n'
        '\tUnexpected key(s) in state_dict: "fc.weight". \n'
    )
    (message,) = exception_messages(stderr)
    assert message.count("\n") == 2
    result = explain(stderr)
    assert result is not None and result.id == "state-dict-module-prefix"
    assert result.matched.startswith("Missing key(s)")


def test_message_without_traceback_is_still_matched() -> None:
    result = explain("ERROR: Unexpected bus error encountered in worker. This might be caused by "
                     "insufficient shared memory (shm).\n")
    assert result is not None and result.id == "dataloader-worker-killed"


def test_huge_stderr_is_scanned_from_the_end() -> None:
    stderr = "x" * 5_000_000 + "\n" + _TRACEBACK + "RuntimeError: Target 7 is out of bounds.\n"
    result = explain(stderr)
    assert result is not None and result.id == "loss-target-out-of-bounds"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "errors.yaml"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def test_bad_regex_names_entry_and_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        - id: good-one
          title: Fine
          patterns: ['fine']
          explanation: ok
          fix: ok
        - id: broken-one
          title: Broken
          patterns: ['unclosed (group']
          explanation: ok
          fix: ok
        """,
    )
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    message = str(info.value)
    assert f"{path}:6:" in message
    assert "'broken-one'" in message and "not a valid regex" in message


def test_missing_field_and_unknown_field_are_reported(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        - id: no-fix
          title: T
          patterns: ['x']
          explanation: e
          colour: red
        """,
    )
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    message = str(info.value)
    assert f"{path}:1: entry 'no-fix'" in message
    assert "fix: Field required" in message and "colour" in message


def test_duplicate_id_and_bad_yaml(tmp_path: Path) -> None:
    entry = "- {id: same-id, title: T, patterns: [x], explanation: e, fix: f}\n"
    path = _write(tmp_path, entry + entry)
    with pytest.raises(CatalogError, match=r":2: duplicate id 'same-id' \(first at line 1\)"):
        load_catalog(path)
    path.write_text("- id: [unclosed\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"invalid YAML"):
        load_catalog(path)
    path.write_text("id: not-a-list\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"must be a YAML list"):
        load_catalog(path)


def test_default_catalog_is_the_content_file() -> None:
    assert DEFAULT_CATALOG.name == "errors.yaml" and DEFAULT_CATALOG.parent.name == "content"
