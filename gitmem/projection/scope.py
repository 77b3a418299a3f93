"""Which memories a query may see, as SQL conditions.

Why this exists: every read (lexical, vector, keyed, top, neighbours...) must
agree on what "current", "as of" and "valid at" mean, so the conditions are
built in one place and appended to each query. ``Scope`` is part of the public
API (the api and recall build one per question).
"""

from __future__ import annotations


import msgspec

from .. import ops
from .tables import KIND_CODE, STATE_CODE

ACTIVE, FORGOTTEN = STATE_CODE["active"], STATE_CODE["forgotten"]


class Scope(msgspec.Struct, frozen=True):
    """Which memories a query may return.

    By default: current truth (active, not the losing value of a keyed
    conflict) and not quarantined. ``as_of`` (unix seconds) answers with what
    the log believed then: memories recorded by then and not yet retired then.
    ``valid_at`` answers with what was true in the world then: validity
    intervals, closed by replacements and retirements. Both may be combined.
    """

    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    retired: bool = False  # also invalidated, superseded and losing values
    quarantined: bool = False  # also memories the write gate would refuse
    as_of: int | None = None
    valid_at: int | None = None
    shadow: bool = True  # hide losing values of keyed conflicts
    # Current truth also leaves out what expired (valid_until) before ``now``.
    now: int | None = None
    # Authors (emails) left out: the context profile looks past one author's flood.
    not_by: tuple[str, ...] = ()
    # What the user narrowed to (recall and list filters). authors: any of them, by
    # name or email, case-insensitive; about and paths: all of them; a path matches
    # a memory anchored to it, to a directory above it or to anything below it.
    authors: tuple[str, ...] = ()
    about: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    since: int | None = None  # recorded at or after (unix seconds)
    until: int | None = None  # recorded at or before


def live(a: str, scope: Scope) -> tuple[str, list[object]]:
    """SQL on memory alias ``a``: current under ``scope`` (conflicts aside)."""
    # (state, the status's number: comparing ``status``, its name, computes the name)
    conds = [f"{a}.state != {FORGOTTEN}"]
    args: list[object] = []
    if not scope.quarantined:
        conds.append(f"{a}.quarantine IS NULL")
    if scope.as_of is None and scope.valid_at is None:
        if not scope.retired:
            conds.append(f"{a}.state = {ACTIVE}")
            if scope.now is not None:
                conds.append(f"({a}.valid_until IS NULL OR {a}.valid_until > ?)")
                args.append(scope.now)
        return " AND ".join(conds), args
    known = ""  # retirements the log knew of at as_of (all of them without it)
    if scope.as_of is not None:
        conds.append(f"{a}.at <= ?")
        args.append(scope.as_of)
        known = " AND l.at <= ?"
        if not scope.retired:
            conds.append("NOT EXISTS (SELECT 1 FROM links l WHERE l.target = "
                         f"{a}.id AND l.type != 'forget' AND l.at <= ?)")
            args.append(scope.as_of)
    if scope.valid_at is not None and scope.retired:
        # --all: whatever its own interval covers, retired since or not.
        conds.append(f"coalesce({a}.valid_from, {a}.at) <= ? AND "
                     f"({a}.valid_until IS NULL OR ? < {a}.valid_until)")
        args.extend([scope.valid_at, scope.valid_at])
    if scope.valid_at is not None and not scope.retired:
        w = scope.valid_at
        conds.append(f"coalesce({a}.valid_from, {a}.at) <= ? AND "
                     f"({a}.valid_until IS NULL OR ? < {a}.valid_until) AND "
                     f"NOT EXISTS (SELECT 1 FROM links l WHERE l.target = {a}.id "
                     f"AND l.closes <= ?{known})")
        args.extend([w, w, w] + ([scope.as_of] if known else []))
    return " AND ".join(conds), args


def filters(sql: str, args: list[object], scope: Scope) -> tuple[str, list[object]]:
    """Append the conditions of ``scope`` on alias ``m`` to ``sql``."""
    cond, live_args = live("m", scope)
    sql += " AND " + cond
    args.extend(live_args)
    if scope.shadow and not scope.retired:
        if scope.as_of is None and scope.valid_at is None:
            sql += " AND m.shadowed_by IS NULL"
        else:
            # The winner of a key is recomputed among the values live then
            # (replay.keyed_winner's rule, in SQL: greatest (clock, id) wins).
            inner, inner_args = live("m2", scope)
            sql += (" AND (m.key IS NULL OR NOT EXISTS (SELECT 1 FROM memories m2 "
                    "WHERE m2.key = m.key AND (m2.clock > m.clock OR "
                    f"(m2.clock = m.clock AND m2.digest > m.digest)) AND {inner}))")
            args.extend(inner_args)
    if scope.kinds:  # by number: memories_top and memories_author hold it
        sql += f" AND m.kind_code IN ({','.join('?' * len(scope.kinds))})"
        args.extend(KIND_CODE.get(kind, -1) for kind in scope.kinds)
    if scope.not_by:
        sql += (" AND m.author NOT IN (SELECT au.id FROM authors au WHERE au.email IN "
                f"({','.join('?' * len(scope.not_by))}))")
        args.extend(scope.not_by)
    for tag in scope.tags:  # (stored folded: ops.folded)
        sql += " AND EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?)"
        args.append(ops.folded(tag))
    if scope.authors:
        marks = ",".join("?" * len(scope.authors))
        sql += (" AND m.author IN (SELECT au.id FROM authors au WHERE "
                f"lower(au.email) IN ({marks}) OR lower(au.name) IN ({marks}))")
        folded = [a.lower() for a in scope.authors]
        args.extend(folded + folded)
    for name in scope.about:
        sql += " AND EXISTS (SELECT 1 FROM json_each(m.entities) WHERE lower(value) = ?)"
        args.append(name.lower())
    for path in scope.paths:
        # substr, not LIKE: a path may hold % or _. "." is the whole repository.
        # (A path from another clone may end in '/': compared without it.)
        sql += (" AND EXISTS (SELECT 1 FROM (SELECT rtrim(value, '/') AS v FROM json_each(m.paths))"
                " WHERE v = ? OR v IN ('.', '') OR ? = '.' OR substr(v, 1, length(?) + 1) = ? || '/'"
                " OR substr(?, 1, length(v) + 1) = v || '/')")
        args.extend([path, path, path, path, path])
    if scope.since is not None:
        sql += " AND m.at >= ?"
        args.append(scope.since)
    if scope.until is not None:
        sql += " AND m.at <= ?"
        args.append(scope.until)
    return sql, args
