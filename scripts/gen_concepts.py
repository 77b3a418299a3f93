#!/usr/bin/env python3
"""Write gitmem/data/concepts/concepts.index from concepts.jsonl (the compact form a
process reads: see gitmem/concepts.py); --check: fail if the shipped one differs.

    python scripts/gen_concepts.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gitmem import concepts  # noqa: E402


def main() -> int:
    text = concepts.dump_index(concepts.DATA.read_bytes())
    if "--check" in sys.argv[1:]:
        if concepts.INDEX.read_text("utf-8") != text:
            print(f"{concepts.INDEX} is stale: run scripts/gen_concepts.py", file=sys.stderr)
            return 1
        return 0
    concepts.INDEX.write_text(text, "utf-8")
    t = concepts.compile_lines(concepts.DATA.read_bytes())
    print(f"{concepts.INDEX}: {len(t.words)} entries, {len(t.records)} first words, "
          f"{t.skipped} lines skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
