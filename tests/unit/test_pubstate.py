"""The published state's encoding (semgraph.graph.pubstate): what is stored decodes to what
was written, and any change to what is stored is detected, never decoded into other digests."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from semgraph.graph import pubstate
from semgraph.graph.pubstate import StateInvalid, decode, encode, version
from semgraph.graph.rows import ROWS_VERSION

OWNER = "shop|shop/util.py"
KINDS = sorted(pubstate._CODE)
keys = st.one_of(
    st.text(max_size=30).map(lambda tail: OWNER + tail),  # under the prefix (the usual case)
    st.text(max_size=30),  # any other key
)
entries = st.dictionaries(
    st.tuples(keys, st.sampled_from(KINDS)), st.binary(min_size=16, max_size=16), max_size=12
)


@given(entries=entries, bundle=st.text(max_size=30))
def test_what_is_stored_decodes_to_what_was_written(entries: pubstate.Entries, bundle: str) -> None:
    stored = encode(OWNER, OWNER, bundle, entries)
    assert all(isinstance(row, str) for row in stored)
    assert decode(OWNER, OWNER, bundle, stored) == entries


@given(entries=entries, data=st.data())
def test_any_change_to_a_stored_row_is_detected(
    entries: pubstate.Entries, data: st.DataObject
) -> None:
    stored = encode(OWNER, OWNER, "b", entries)
    i = data.draw(st.integers(0, len(stored) - 1))
    row = stored[i]
    j = data.draw(st.integers(0, max(0, len(row) - 1)))
    new = data.draw(st.characters().filter(lambda c: row[j : j + 1] != c))
    damaged = [*stored[:i], row[:j] + new + row[j + 1 :], *stored[i + 1 :]]
    with pytest.raises(StateInvalid):
        decode(OWNER, OWNER, "b", damaged)


@pytest.mark.parametrize(
    "stored",
    [None, "a string", [], [1, 2], ["#not-the-checksum"]],
)
def test_what_is_not_a_state_is_refused(stored: object) -> None:
    with pytest.raises(StateInvalid):
        decode(OWNER, OWNER, "b", stored)


def test_a_state_belongs_to_its_owner_and_bundle() -> None:
    """A state copied to another file, or kept with another bundle, does not decode."""
    stored = encode(OWNER, OWNER, "b", {(OWNER, "node:File"): bytes(16)})
    with pytest.raises(StateInvalid):
        decode("shop|shop/other.py", "shop|shop/other.py", "b", stored)
    with pytest.raises(StateInvalid):
        decode(OWNER, OWNER, "c", stored)


def test_the_version_names_the_format_the_rows_and_the_repository() -> None:
    assert version("shop") == version("shop")
    assert version("shop") != version("store")
    fmt, rows, _ = version("shop").split("/")
    assert (fmt, rows) == (pubstate.STATE_FORMAT, ROWS_VERSION)
