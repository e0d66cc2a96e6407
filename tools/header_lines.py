"""Line counts of muh's generated tuning headers beside CUB's own, per CCCL tuning header.

Each muh family names the CCCL 3.0 header its policies correspond to (``Family.cub_header``); the
table sums muh's ``tuning_<family>.cuh`` per CCCL header and prints CUB's line count beside it.
Usage: python tools/header_lines.py generated/nvidia [--before OLD_GENERATED_DIR] [--cub CUB_TUNING_DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from muh.schema.catalog import FAMILIES

CUB_TUNING = Path("/usr/local/cuda/include/cccl/cub/device/dispatch/tuning")


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.is_file() else 0


def table(generated: Path, before: Path | None, cub: Path) -> str:
    rows = [
        "| CCCL header | CUB lines | muh families | muh lines" + (" before | muh lines now |" if before else " |"),
        "|---|---|---|---|" + ("---|" if before else ""),
    ]
    totals = [0, 0, 0]
    by_header: dict[str, list[str]] = {}
    for name, fam in sorted(FAMILIES.items()):
        if fam.cub_header and (generated / "include/muh/tuning" / f"tuning_{name}.cuh").is_file():
            by_header.setdefault(fam.cub_header, []).append(name)
    for header, families in sorted(by_header.items()):
        ours = sum(lines(generated / "include/muh/tuning" / f"tuning_{f}.cuh") for f in families)
        old = sum(lines(before / "include/muh/tuning" / f"tuning_{f}.cuh") for f in families) if before else 0
        theirs = lines(cub / header)
        totals = [totals[0] + theirs, totals[1] + old, totals[2] + ours]
        rows.append(
            f"| `{header}` | {theirs} | {', '.join(families)} | " + (f"{old} | " if before else "") + f"{ours} |"
        )
    rows.append(f"| **all** | **{totals[0]}** | | " + (f"**{totals[1]}** | " if before else "") + f"**{totals[2]}** |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("generated", type=Path)
    ap.add_argument("--before", type=Path)
    ap.add_argument("--cub", type=Path, default=CUB_TUNING)
    args = ap.parse_args()
    print(table(args.generated, args.before, args.cub))


if __name__ == "__main__":
    main()
