"""Every line of human output the commands print (``--json`` is the envelope's).

One function per result, named after what it renders; each takes what the
library returned and gives the text for stdout (None: print nothing). Memory
text is data written by people and agents: where it is shown whole it is an
indented block, never mistaken for our own output; in lists it is one
clipped line. Only ``added`` also writes to stderr, so that stdout stays the
id a script captures. Recall's hits are rendered in render_recall.py, on the
helpers here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

from .. import api
from ..model import (CodeAnchorInfo, CodeStatus, Listing, OpInfo, Record, RefreshReport,
                     ScratchNote)
from .stdio import echo

if TYPE_CHECKING:
    from ..agents.settings import HooksReport


# Characters a terminal acts on instead of showing: C0 and C1 controls (ESC starts
# CSI/OSC sequences: colours, cursor moves, OSC 52 clipboard writes, OSC 8 links)
# and the bidi controls that reorder what is shown ("Trojan Source"). Memory
# text, author names, sessions and paths come from teammates: every line we
# print goes through ``safe`` first, so they show as inert escapes.
_UNSAFE = dict.fromkeys(
    [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0D, 0x20), *range(0x7F, 0xA0),
     0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
_ESCAPES = {cp: (f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}") for cp in _UNSAFE}


def safe(text: str) -> str:
    """``text`` with every character a terminal would act on written as an escape
    (``\\x1b``, ``\\u202e``); newlines and tabs are kept."""
    return text.translate(_ESCAPES)


# What commands whose library call returns a list print under --json: the list
# wrapped in an object, so the envelope's data is always an object.
class Keys(TypedDict):
    keys: list[api.FactValue]


class Conflicts(TypedDict):
    conflicts: list[api.Conflict]
    # Memories replaced twice at once (only when there are any).
    forks: NotRequired[list[api.Fork]]


class Pairs(TypedDict):
    pairs: list[api.SimilarPair]


class Ops(TypedDict):
    ops: list[OpInfo]


def ref_name(name: str) -> str:
    """A partition's name as printed: git mem writes ASCII names only (a slug, two hex
    parts), so any other character came from a teammate and is written as an escape.
    Two refs that differ only in how an accent is encoded (NFC "café", NFD "café")
    would otherwise look the same in ``status`` while git holds them apart."""
    return name if name.isascii() else name.encode("ascii", "backslashreplace").decode("ascii")


def clip_line(text: str | None, n: int = 70) -> str:
    first = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return first if len(first) <= n else first[: n - 1] + "…"


def block(text: str) -> str:
    """Memory text as an indented block: data, never mistaken for our output."""
    return "\n".join("    " + line for line in (text.splitlines() or [""]))


def short_ids(ids: list[str]) -> str:
    """Up to three ids, shortened, and how many more."""
    return ", ".join(i[:12] for i in ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")


# -- writes ------------------------------------------------------------------------


def added(r: api.Added) -> str:
    """The id alone on stdout (scripts capture it); what else happened on stderr."""
    if r.duplicate_of:
        echo(f"note: duplicate of {r.id[:12]}: reinforced it, nothing new stored", err=True)
    if r.superseded:
        echo("note: supersedes " + ", ".join(x[:12] for x in r.superseded), err=True)
    for s in r.similar:
        echo(f"note: similar to {str(s['id'])[:12]} (cosine {s['cosine']:.3f}); "
                   "review with 'git mem similar'", err=True)
    return r.id[:12]


def confirmed(r: api.Confirmed) -> str:
    if r.outcome is not None:
        return (f"recorded: {r.target[:12]} {r.outcome}"
                + ("; re-anchored at the code as it is now" if r.reanchored else ""))
    return (f"confirmed {r.target[:12]} ({r.confirms} confirmation"
            f"{'s' if r.confirms != 1 else ''})"
            + ("; re-anchored at the code as it is now" if r.reanchored else ""))


def noted(n: ScratchNote) -> str:
    """A working-memory note: its id, and where it lives (stderr)."""
    fate = "proposed for the log at session end" if n.keep else "dropped at session end"
    echo(f"note: kept in this session's working memory only ({fate})", err=True)
    return n.id


def code_changed(code: CodeStatus | None) -> str | None:
    """``code changed since: src/a.py (3 commits, +12 -4), db/ renamed to store/``."""
    if code is None or not code.stale:
        return None
    parts = []
    for c in code.paths:
        if c.state == "renamed":
            parts.append(f"{c.path} renamed to {c.renamed_to}")
        elif c.state == "deleted":
            parts.append(f"{c.path} deleted")
        elif c.state == "changed" and c.range_touched is not False:
            how = [f"{c.commits} commit{'s' if c.commits != 1 else ''}"] if c.commits else []
            if c.added is not None:
                how.append(f"+{c.added} -{c.deleted}")
            if c.range_touched:
                how.append("its lines touched")
            parts.append(f"{c.path} ({', '.join(how)})" if how else c.path)
    return "code changed since: " + ", ".join(parts)


def _code_unchanged(code: CodeStatus) -> str:
    """What ``show`` says of anchored code that did not change, or that git could not
    compare (a blob too big to diff, an object a shallow clone lacks: state unknown)."""
    unknown = [c.path for c in code.paths if c.state == "unknown"]
    if not unknown:
        return "unchanged since"
    return f"cannot tell for {', '.join(unknown)} (too big to compare, or not in this clone)"


def bootstrapped(r: api.BootstrapReport) -> str:
    if not r.files:
        return ("no instruction files found (CLAUDE.md, AGENTS.md, GEMINI.md, .cursorrules, "
                ".cursor/rules/, .github/copilot-instructions.md, CONTRIBUTING.md, docs/adr/)")
    verb = {"new": "would add" if r.dry_run else "add", "added": "added", "known": "known",
            "refused": "refused", "similar": "similar"}
    out = []
    for i in r.items:
        if i.status == "known":
            continue
        mark = f"  (supersedes {', '.join(x[:12] for x in i.supersedes)})" if i.supersedes else ""
        mark += f"  ({i.why})" if i.why else ""
        tags = "".join(f" #{t}" for t in i.tags)
        out.append(f"{verb[i.status]:<9} {i.kind:<9} {i.source}{tags}{mark}")
        out.append(block(i.text))
    counts = {s: sum(1 for i in r.items if i.status == s) for s in verb}
    summary = ", ".join(f"{n} {verb[s]}" for s, n in counts.items() if n)
    out.append(f"from {len(r.files)} file(s): {summary or 'nothing'}"
               + ("; run again with --yes to add them" if r.dry_run and counts["new"] else ""))
    return "\n".join(out)


def exported(r: api.Exported) -> str:
    if r.path is not None:
        return (f"wrote {r.count} memories into {r.path}" if r.changed
                else f"{r.path} is up to date ({r.count} memories)")
    return r.text.rstrip("\n")


def records(rs: list[Record]) -> str:
    """``git mem stale`` and ``git mem about``: one memory a block."""
    if not rs:
        return "no memories"
    out = []
    for m in rs:
        out.append(f"{m.id[:12]}  {m.kind:<9} {m.author}  {m.recorded_at[:10]}")
        out.append(block(m.text or ""))
        note = code_changed(m.code)
        if note:
            out.append(f"    [{note}]")
    return "\n".join(out)


def imported(r: api.Imported) -> str:
    return (f"imported {r.count} memories in {len(r.commits)} commit(s)"
            + (f"; {len(r.duplicates)} duplicate line(s) not added (existing memories "
               "reinforced)" if r.duplicates else ""))


def invalidated(r: api.Retired) -> str | None:
    return f"invalidated {r.target[:12]}" if r.changed else None


def forgot(r: api.Retired) -> str | None:
    p = r.purge
    if p is None:
        return f"forgot {r.target[:12]}" if r.changed else None
    would = "would " if p.dry_run else ""
    out = ["dry run: nothing written"] if p.dry_run else []
    if p.tombstone:
        out.append(f"{'would forget' if p.dry_run else 'forgot'} {r.target[:12]}")
    out.append(f"{'would purge' if p.dry_run else 'purged'} {r.target[:12]} from "
               f"refs/memory/{ref_name(p.partition)}: "
               f"{len(p.ops_removed)} op(s) removed, {len(p.commits_rewritten)} commit(s) "
               f"rewritten, {len(p.commits_dropped)} dropped")
    out.extend(f"{would}rewrite backup {b}" for b in p.backups)
    for c in p.remotes:
        held = "holds it" if c.has_content else "does not hold it"
        out.append(f"{c.remote} {held}; next 'git mem push' or 'sync': {c.next_push}")
    return "\n".join(out)


# -- keyed facts -------------------------------------------------------------------


def value(v: api.FactValue) -> str:
    out = [v.value]
    for c in v.conflicts:
        out.append(f"conflict: {c.key} = {clip_line(c.text)} ({c.id[:12]}, {c.author}, "
                   f"{c.recorded_at[:10]}); set the key again to resolve it")
    return "\n".join(out)


def keys(r: Keys) -> str:
    return "\n".join(f"{v.key} = {clip_line(v.value)}" + ("  [conflict]" if v.conflicts else "")
                     for v in r["keys"])


def history(h: api.KeyHistory) -> str:
    out = []
    for r in h.values:
        if r.id == h.current:
            state = "current"
        elif r.id in h.conflicts:
            state = f"conflict (loses to {(r.conflict_with or '')[:12]})"
        elif r.status == "active":
            state = "quarantined" if r.quarantine else "active"
        else:
            state = f"{r.status} {(r.retired_at or '')[:19]}"
            state += f" ({r.retired_reason})" if r.retired_reason else ""
        valid = f"  valid {r.valid_from[:10]}.." if r.valid_from else ""
        out.append(f"{r.recorded_at}  {r.id[:12]}  {r.author:<16} {clip_line(r.text, 40):<40}"
                   f"  {state}{valid}")
    return "\n".join(out)


def conflicts(r: Conflicts) -> str:
    out = []
    for c in r["conflicts"]:
        out.append(f"{c.key}: {clip_line(c.current.text)} ({c.current.id[:12]}, "
                   f"{c.current.author}) wins over")
        out.extend(f"    {clip_line(o.text)} ({o.id[:12]}, {o.author}, {o.recorded_at[:10]})"
                   for o in c.others)
    for f in r.get("forks") or []:
        out.append(f"replaced twice ({short_ids(f.replaced)}): each of these is current")
        out.extend(f"    {clip_line(h.text)} ({h.id[:12]}, {h.author}, {h.recorded_at[:10]})"
                   + (" [personal]" if h.pool == "personal" else "") for h in f.heads)
    if r.get("forks"):
        out.append("(end a fork with one more: git mem add TEXT --supersedes ID --supersedes ID)")
    return "\n".join(out) if out else "no conflicts"


# -- reads -------------------------------------------------------------------------


def listing(r: Listing) -> str:
    if not r.memories:
        return "no memories" + (" match these filters" if r.total == 0 else " on this page")
    lines = []
    for m in r.memories:
        mark = "" if m.status == "active" else f" [{m.status}]"
        mark += f" [conflict: loses to {m.conflict_with[:12]}]" if m.conflict_with else ""
        mark += " [quarantined]" if m.quarantine else ""
        mark += " [personal]" if m.pool == "personal" else ""
        text = f"{m.key}: {m.text}" if m.key else m.text  # a fact's value means little alone
        lines.append(f"{m.id[:12]}  {m.recorded_at[:10]}  {m.kind:<9} {clip_line(m.author, 24)}  "
                     f"{clip_line(text, 70)}{mark}")
    last = r.offset + len(r.memories)
    more = f"; next page: --offset {r.next_offset}" if r.next_offset is not None else ""
    lines.append(f"({r.offset + 1}-{last} of {r.total}{more})")
    return "\n".join(lines)


def context(r: api.Context) -> str:
    return r.markdown.rstrip("\n") or "(no memories yet)"


def similar(r: Pairs) -> str:
    out = []
    for p in r["pairs"]:
        mark = "  near-duplicate" if p.near_duplicate else ""
        out.append(f"{p.cosine:.3f}  {p.older.kind}{mark}")
        for m in (p.older, p.newer):
            out.append(f"    {m.id[:12]}  {m.recorded_at[:10]}  {clip_line(m.text)}")
    return "\n".join(out) if out else "no similar memories"


def show(r: api.Shown) -> str:
    m: Record = r.memory
    rows = [
        ("id", m.id), ("kind", m.kind), ("status", m.status), ("key", m.key),
        ("tags", ", ".join(m.tags)), ("about", ", ".join(m.entities)),
        ("importance", f"{m.importance:g}"), ("valid from", m.valid_from),
        ("valid until", m.valid_until), ("source", m.source), ("session", m.session),
        ("author", f"{m.author} <{m.author_email}>"), ("recorded", m.recorded_at),
        ("partition", m.partition), ("commit", m.commit), ("clock", str(m.clock)),
        ("head", m.anchors.commit), ("paths", ", ".join(m.anchors.paths)),
        ("anchored", ", ".join(_anchor(a) for a in m.anchors.code)),
        ("code", code_changed(m.code) or (_code_unchanged(m.code) if m.code else None)),
        ("supersedes", ", ".join(x[:12] for x in m.supersedes)),
        ("retired", f"{m.retired_at} by {(m.retired_by or '')[:12]}" if m.retired_by else None),
        ("reason", m.retired_reason),
        ("quarantine", m.quarantine),
        ("conflict", f"loses to {m.conflict_with[:12]}" if m.conflict_with else None),
    ]
    out = [f"{k + ':':<12} {v}" for k, v in rows if v]
    out.append("text:")
    out.append(block(m.text) if m.text is not None else "    (forgotten)")
    out.append("ops:")
    out.extend("    " + op_line(o) for o in r.ops)
    return "\n".join(out)


def _anchor(a: CodeAnchorInfo) -> str:
    where = a.path + (f":{a.start}-{a.end}" if a.start is not None else "")
    return where + (f" ({a.symbol})" if a.symbol else "") + f" {a.type} {a.oid[:12]}"


def log(r: Ops) -> str:
    return "\n".join(op_line(o) for o in r["ops"])


def op_line(o: OpInfo) -> str:
    if o.type == "add":
        what = o.summary if o.summary is not None else "(forgotten)"
    else:
        what = (o.target or "")[:12]
    if o.reason:
        what += f" ({o.reason})"
    return f"{o.id[:12]}  {o.recorded_at}  {o.type:<10} {o.author}  {what}"


# -- the store and its sync --------------------------------------------------------


def status(st: api.Status) -> str:
    out = [f"repository: {st.repository}", f"your partition: {st.partition or '(no identity)'}"]
    total = max(st.partitions_total, len(st.partitions))
    out.append(f"partitions: {total}")
    for p in st.partitions:
        mark = "*" if p.mine else " "
        out.append(f"  {mark} {ref_name(p.name)}  {p.ops} ops  {p.tip[:12]}  {', '.join(p.authors)}")
    if total > len(st.partitions):
        out.append(f"    ... and {total - len(st.partitions)} more (git for-each-ref refs/memory/)")
    ops_txt = ", ".join(f"{k} {v}" for k, v in sorted(st.ops.items()) if k != "total")
    mem_txt = ", ".join(f"{k} {v}" for k, v in sorted(st.memories.items()) if k != "total")
    out.append(f"ops: {st.ops.get('total', 0)}" + (f" ({ops_txt})" if ops_txt else ""))
    out.append(f"memories: {st.memories.get('total', 0)}" + (f" ({mem_txt})" if mem_txt else ""))
    proj = st.projection
    out.append(
        f"projection: {proj['path']} (schema {proj['schema']}, {proj['size_bytes']} bytes, "
        "up to date)"
    )
    if st.skipped:
        total = max(st.skipped_total, len(st.skipped))
        out.append(f"skipped ops: {total}")
        for s in st.skipped:
            # (A whole commit that cannot be read has no line: -1.)
            where = f" line {s.line}" if s.line >= 0 else ""
            out.append(f"  {ref_name(s.partition)} {s.commit[:12]}{where}: {ref_name(s.reason)}")
        if total > len(st.skipped):
            out.append(f"  ... and {total - len(st.skipped)} more (the first {len(st.skipped)} "
                       "are listed; the library's Store.skipped() has every one)")
    if st.future_dated:
        out.append(f"dated in the future: {st.future_dated} memories (a skewed or forged clock; "
                   "ranked as if recorded a day from now): "
                   + ", ".join(i[:12] for i in st.future_dated_ids))
    if st.shallow:
        out.append("history cut: a shallow fetch left partitions without their older ops; "
                   "run 'git fetch --unshallow' (the next command reads the history it brings)")
    u = st.unpushed
    if u is not None:
        if u["commits"]:
            never = "" if u["fetched_before"] else " (memory never pushed to or fetched from it)"
            out.append(f"not pushed to {u['remote']}: {u['ops']} op(s) in {u['commits']} "
                       f"commit(s){never}; run 'git mem push'")
        else:
            out.append(f"not pushed to {u['remote']}: nothing")
    return "\n".join(out)


def refreshed(r: RefreshReport) -> str:
    return (f"refreshed: {r.ops_applied} ops from {r.partitions_changed} partition(s)"
            + (f", {r.ops_skipped} skipped" if r.ops_skipped else "")
            + f", {r.embedded} embedded in {r.seconds:.2f}s")


def rebuilt(r: RefreshReport) -> str:
    return (f"rebuilt: {r.ops_applied} ops from {r.partitions_changed} partition(s)"
            + (f", {r.ops_skipped} skipped" if r.ops_skipped else "")
            + f" in {r.seconds:.2f}s")


def sync(r: api.SyncReport) -> str:
    out = []
    if r.fetched:
        parts = [f"{len(r.created)} new", f"{len(r.fast_forwarded)} updated"]
        if r.replaced:
            parts.append(f"{len(r.replaced)} replaced (rewritten by their owner)")
        applied = r.refresh.ops_applied if r.refresh else 0
        out.append(f"pulled from {r.remote}: partitions {', '.join(parts)}; "
                   f"{applied} ops replayed")
    for p in r.pushed:
        out.append(f"pushed to {r.remote}: {p['partition']} ({p['status']})")
    if not r.fetched and not r.pushed:
        out.append(f"nothing to push to {r.remote}: this clone has written no memory yet")
    return "\n".join(out)


def init(r: api.InitReport) -> str:
    out = [f"clone id: {r.clone_id}", f"partition: {r.partition or '(no identity yet)'}"]
    for name, new in r.fetch_refspecs_added.items():
        out.append(f"fetch refspec for {name}: {'added' if new else 'already present'}")
    hook = {"installed": "installed: 'git push' also pushes memory",
            "chained": "installed (your earlier pre-push hook runs first): 'git push' also "
                       "pushes memory",
            "already": "already installed",
            "removed": "removed",
            "absent": "not installed (sharing is opt-in: git mem init --pre-push)"}
    out.append(f"pre-push hook: {hook.get(r.pre_push, r.pre_push)}")
    return "\n".join(out)


def rekeyed(r: api.RekeyReport) -> str:
    return f"new clone id {r.new_clone_id} (was {r.old_clone_id}); moved {r.moved_ops} op(s)"


# -- agents ------------------------------------------------------------------------


def hooks(r: HooksReport) -> str:
    events = f" ({', '.join(r.events)})" if r.events else ""
    return f"{r.status}: {r.path}{events}"
