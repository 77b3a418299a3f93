"""The op format: canonical encoding, ids, packs, partition names."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem import ops, replay

FIXTURES = Path(__file__).parent.parent / "fixtures"

text = st.text(min_size=1, max_size=200).filter(lambda s: s.strip() != "")
names = st.lists(st.text(min_size=1, max_size=20), max_size=5)

bodies = st.builds(
    ops.MemoryBody,
    kind=st.sampled_from(ops.KINDS),
    text=text,
    key=st.none() | st.text(min_size=1, max_size=30),
    tags=names,
    entities=names,
    importance=st.floats(min_value=0, max_value=1),
    valid_from=st.none() | st.integers(ops.MIN_TIME, ops.MAX_TIME),
    valid_until=st.none() | st.integers(ops.MIN_TIME, ops.MAX_TIME),
    source=st.none() | st.text(max_size=20),
    session=st.none() | st.text(max_size=20),
    anchors=st.builds(ops.Anchors, commit=st.none() | st.just("a" * 40), paths=names),
)
authors = st.builds(ops.Author, name=st.text(min_size=1, max_size=20),
                    email=st.emails())
envelope = dict(v=st.just(1), partition=st.text(min_size=1, max_size=40),
                clock=st.integers(0, ops.MAX_CLOCK - 1), at=st.integers(ops.MIN_TIME, ops.MAX_TIME),
                tz=st.integers(-1439, 1439), author=authors)
op_ids = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
any_op = st.one_of(
    st.builds(ops.AddOp, memory=bodies, supersedes=st.lists(op_ids, max_size=3), **envelope),
    st.builds(ops.InvalidateOp, target=op_ids, reason=st.none() | st.text(max_size=40), **envelope),
    st.builds(ops.ForgetOp, target=op_ids, reason=st.none() | st.text(max_size=40), **envelope),
)


@settings(max_examples=300, deadline=None)
@given(any_op)
def test_ops_round_trip_and_encoding_is_canonical(op: ops.Op) -> None:
    data = ops.encode(op)
    assert b"\n" not in data  # one op, one line
    back = ops.decode(data)
    assert back == op
    assert ops.encode(back) == data  # re-encoding is a fixed point


def test_op_id_is_sha256_of_the_line_bytes() -> None:
    line = ops.encode(ops.InvalidateOp(v=1, author=ops.Author(name="A", email="a@x"),
                                       partition="a-1-2", clock=3, at=4, target="0" * 64))
    assert ops.op_id(line) == hashlib.sha256(line).hexdigest()
    assert len(ops.op_id(line)) == 64


def test_documented_example_op_decodes_and_has_the_documented_id() -> None:
    """fixtures/op-example.jsonl is quoted in docs/data-model.md: keep them true."""
    line = (FIXTURES / "op-example.jsonl").read_bytes().rstrip(b"\n")
    op = ops.decode(line)
    assert isinstance(op, ops.AddOp)
    assert ops.encode(op) == line
    doc = (Path(__file__).parent.parent / "docs" / "data-model.md").read_text()
    assert line.decode() in doc
    assert ops.op_id(line) in doc


def test_unknown_fields_from_a_newer_writer_keep_the_id() -> None:
    line = (FIXTURES / "op-example.jsonl").read_bytes().rstrip(b"\n")
    newer = line[:-1] + b',"future_field":[1,2,3]}'
    item = replay.check_line(newer, json.loads(line)["partition"])
    assert isinstance(item, replay.Decoded)
    assert item.id == hashlib.sha256(newer).hexdigest()


def test_pack_split_ignores_blank_lines() -> None:
    assert ops.split_pack(ops.encode_pack([b"{}", b"[]"]) + b"\n\n") == [b"{}", b"[]"]


@pytest.mark.parametrize("email,clone", [("Ada@Example.com", "abc123"), ("x.y+z@q", "0f"),
                                         ("@@", "1")])
def test_partition_names_are_single_level_and_carry_the_email_hash(email: str, clone: str) -> None:
    name = ops.partition_name(email, clone)
    assert "/" not in name and name.endswith("-" + clone)
    assert ops.partition_email_hash(name) == ops.email_hash(email)
    assert ops.partition_email_hash(name) == ops.email_hash(email.upper())


def test_decoder_rejects_unknown_op_type_and_bad_kind() -> None:
    with pytest.raises(msgspec.ValidationError):
        ops.decode(b'{"op":"teleport","v":1}')
    line = (FIXTURES / "op-example.jsonl").read_bytes().rstrip(b"\n")
    with pytest.raises(msgspec.ValidationError):
        ops.decode(line.replace(b'"kind":"procedure"', b'"kind":"gossip"'))


@pytest.mark.parametrize("field,value", [("clock", 2**63), ("clock", -1), ("at", 10**14),
                                         ("tz", 100000)])
def test_out_of_range_numbers_are_refused_by_the_decoder(field: str, value: int) -> None:
    """A teammate's op with such a value is skipped, never allowed to break reads."""
    op = json.loads((FIXTURES / "op-example.jsonl").read_bytes())
    op[field] = value
    item = replay.check_line(json.dumps(op, separators=(",", ":")).encode(), op["partition"])
    assert isinstance(item, replay.Skip) and "malformed op" in item.reason
