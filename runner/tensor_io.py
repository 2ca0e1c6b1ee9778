"""Tensors across the judge's boundary: safetensors bytes whose header is checked before anything
is allocated.

The header (its length, then JSON naming each tensor's dtype, shape and byte range) is validated
here in plain Python against caps on header size, tensor count, dimensions and total bytes, and
the byte ranges must tile the data exactly (no overlap, no gap, no tail). Tensor names are keys
the member's process chose (a dict key it returned becomes part of one), so they are held to a
declared charset and length: no markup, mention or link can travel in a name. Only then does
safetensors build the tensors, so a hostile record costs at most the caps, never a huge
allocation. Used on the trusted side only (runner.judge_host); torch is imported lazily.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass
from typing import Any

HEADER_CAP = 64 * 1024
TENSOR_CAP = 64
DIM_CAP = 8
BYTES_CAP = 8 * 1024 * 1024
META_VALUE_CAP = 4096
NAME_CAP = 200
NAME = re.compile(rf"[A-Za-z0-9_.: -]{{1,{NAME_CAP}}}")  # r.out.0, w:r.out, 3:r.out.loss, r.running mean
ITEM_SIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
             "U8": 1, "BOOL": 1, "U16": 2, "U32": 4, "U64": 8, "F8_E4M3": 1, "F8_E5M2": 1,
             "C64": 8}


def valid_name(name: object) -> bool:
    """Whether `name` may name a tensor in a record (the declared charset, capped length)."""
    return isinstance(name, str) and NAME.fullmatch(name) is not None


class Unreadable(ValueError):
    """The bytes are not a record the judge accepts; the member reads 'could not be read'."""


@dataclass(frozen=True)
class Caps:
    header: int = HEADER_CAP
    tensors: int = TENSOR_CAP
    dims: int = DIM_CAP
    total: int = BYTES_CAP


def check_header(data: bytes, caps: Caps = Caps()) -> tuple[dict[str, str], dict[str, Any]]:
    """(metadata, tensor entries) of a safetensors blob, or Unreadable; allocates nothing big."""
    if len(data) < 8:
        raise Unreadable("too short")
    (n,) = struct.unpack("<Q", data[:8])
    if n > caps.header or 8 + n > len(data):
        raise Unreadable("header size out of bounds")
    try:
        header = json.loads(data[8:8 + n])
    except (UnicodeDecodeError, ValueError) as exc:
        raise Unreadable("header is not JSON") from exc
    if not isinstance(header, dict):
        raise Unreadable("header is not a mapping")
    meta = header.pop("__metadata__", None) or {}
    if not isinstance(meta, dict) or not all(
            valid_name(k) and isinstance(v, str) and len(v) <= META_VALUE_CAP
            for k, v in meta.items()):
        raise Unreadable("bad metadata")
    if len(header) > caps.tensors:
        raise Unreadable("too many tensors")
    body = len(data) - 8 - n
    if body > caps.total:
        raise Unreadable("too many bytes")
    spans = []
    for name, entry in header.items():
        if not valid_name(name):
            raise Unreadable("a tensor name outside the accepted characters or length")
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise Unreadable(f"bad entry {name[:40]!r}")
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in ITEM_SIZE or not isinstance(shape, list) or len(shape) > caps.dims \
                or not all(isinstance(d, int) and 0 <= d <= caps.total for d in shape):
            raise Unreadable(f"bad dtype or shape for {name[:40]!r}")
        if not (isinstance(offsets, list) and len(offsets) == 2
                and all(isinstance(o, int) for o in offsets)):
            raise Unreadable(f"bad offsets for {name[:40]!r}")
        begin, end = offsets
        size = math.prod(shape) * ITEM_SIZE[dtype]
        if size > caps.total or not 0 <= begin <= end <= body or end - begin != size:
            raise Unreadable(f"declared size of {name[:40]!r} does not match its bytes")
        spans.append((begin, end))
    position = 0
    for begin, end in sorted(spans):
        if begin != position:
            raise Unreadable("byte ranges overlap or leave gaps")
        position = end
    if position != body:
        raise Unreadable("bytes after the last tensor")
    return meta, header


def read(data: bytes, caps: Caps = Caps()) -> tuple[dict[str, str], dict[str, Any]]:
    """(metadata, tensors) of a checked record; Unreadable when it is not one."""
    meta, _ = check_header(data, caps)
    from safetensors.torch import load

    try:
        return meta, load(data)
    except Exception as exc:  # the checks above make this unexpected; still never a crash
        raise Unreadable("safetensors refused it") from exc


def write(tensors: dict[str, Any], meta: dict[str, str] | None = None) -> bytes:
    """Contiguous copies of the tensors as safetensors bytes (trusted side: case inputs)."""
    from safetensors.torch import save

    return save({k: t.detach().contiguous() for k, t in tensors.items()}, metadata=meta)
