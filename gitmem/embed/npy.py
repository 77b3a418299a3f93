"""A .npy file mapped without numpy: just enough of the format for the embedder's tables.

Why this exists: the query path reads a few rows of the embedding matrix (and
their scales) and must not import numpy (~55 ms) to do it. numpy's .npy format
is a magic string, a header that is a Python dict literal, then the raw array;
this parses the header numpy writes and hands back the map and where the data
starts, for ``struct`` to read rows from.
"""

from __future__ import annotations

import mmap
import struct
import sys
from pathlib import Path

_NPY_MAGIC = b"\x93NUMPY"
STRUCT_CODES = {"i1": "b", "f2": "e", "f4": "f"}  # the dtypes the data may use -> struct codes
META_DTYPES = {"int8": "i1", "float16": "f2", "float32": "f4"}  # meta.json's names for them


def parse_header(header: str) -> tuple[str, bool, tuple[int, ...]]:
    """(descr, fortran_order, shape) from a header numpy wrote: a dict literal with those three keys."""
    body = header.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise ValueError(f"unsupported .npy header {body!r}")
    fields: dict[str, str] = {}
    rest = body[1:-1]
    for key in ("descr", "fortran_order", "shape"):
        at = rest.find(f"'{key}':")
        if at < 0:
            raise ValueError(f".npy header has no {key!r}: {body!r}")
        value = rest[at + len(key) + 3 :].lstrip()
        end = value.find(")") + 1 if value.startswith("(") else value.find(",", 1 if value[:1] == "'" else 0)
        fields[key] = value[:end] if end > 0 else value.rstrip(", ")
    descr = fields["descr"].strip("'")
    shape = tuple(int(x) for x in fields["shape"].strip("()").split(",") if x.strip())
    return descr, fields["fortran_order"] == "True", shape


def open_npy(path: Path) -> tuple[mmap.mmap, int, str, tuple[int, ...]]:
    """Map a .npy file: (map, offset of the data, struct code with byte order, shape). No numpy."""
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        if mm[:6] != _NPY_MAGIC:
            raise ValueError(f"{path}: not a .npy file")
        major = mm[6]
        if major == 1:
            (size,), start = struct.unpack_from("<H", mm, 8), 10
        elif major in (2, 3):
            (size,), start = struct.unpack_from("<I", mm, 8), 12
        else:
            raise ValueError(f"{path}: .npy format version {major} is not supported")
        descr, fortran, shape = parse_header(mm[start : start + size].decode("utf-8" if major == 3 else "latin-1"))
        order, kind = descr[:-2], descr[-2:]
        if fortran or kind not in STRUCT_CODES or order not in ("<", ">", "|", "=", ""):
            raise ValueError(f"{path}: dtype {descr!r} (fortran_order {fortran}) is not supported")
        byteorder = ">" if order == ">" else "<" if order in ("<", "|") or sys.byteorder == "little" else ">"
        itemsize = struct.calcsize("<" + STRUCT_CODES[kind])
        count = 1
        for n in shape:
            count *= n
        if len(mm) < start + size + count * itemsize:
            raise ValueError(f"{path}: file is shorter than its header says")
        return mm, start + size, byteorder + STRUCT_CODES[kind], shape
    except BaseException:
        mm.close()
        raise
