"""Rebuild the curated benchmark set instances/bench/ (what `make bench` plans).

Usage: python scripts/make_bench_set.py [--shared ../shared/datasets] [-o instances/bench]

Reads the public data in ../shared only to REBUILD the set; the committed JSON files are what
`make bench` uses, so the repository stands alone. Every file is validated before it is
written. Sources (see instances/bench/README.md):
- Muri testbed trace (cluster_trace.csv, 8 nodes x 8 V100): the first 50, 100, 200 jobs;
- Muri simulation trace trace1.csv: 100-job windows at three offsets on 12 nodes x 8 GPUs
  (the windows offer 115-150 busy GPUs on average, so queues form on 96 GPUs);
- PSPLIB j30 (Kolisch & Sprecher 1996): four instances from instances/psplib/j30 (the
  CP-SAT developer's copies), else from the shared PSPLIB folder;
- planner.generate: two `dl` and one `mixed` instance (fixed seeds).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.export import write_json  # noqa: E402
from planner.generate import generate  # noqa: E402
from planner.importers.muri import muri_to_instance  # noqa: E402
from planner.importers.psplib import parse_sm  # noqa: E402
from planner.read import instance_from_dict  # noqa: E402

TESTBED = [50, 100, 200]  # first N jobs of cluster_trace.csv
TRACE1_OFFSETS = [300, 700, 1300]  # 100-job windows of trace1.csv
TRACE1_NODES = 12
PSPLIB_J30 = ["j301_1", "j3013_1", "j3025_1", "j3029_9"]
SYNTHETIC = [("dl", 40, 4, 1), ("dl", 60, 6, 2), ("mixed", 25, 4, 3)]  # family, jobs, nodes, seed


def build(shared: Path) -> dict[str, dict[str, Any]]:
    """file name -> instance dict."""
    muri = shared / "muri"
    out: dict[str, dict[str, Any]] = {}
    for n in TESTBED:
        name = f"muri-testbed-{n}"
        out[name] = muri_to_instance(
            muri / "cluster_trace.csv",
            name=name,
            nodes=8,
            gpus_per_node=8,
            first=n,
            file="cluster_trace.csv",
        )
    for off in TRACE1_OFFSETS:
        name = f"muri-trace1-{off}"
        out[name] = muri_to_instance(
            muri / "trace1.csv",
            name=name,
            nodes=TRACE1_NODES,
            gpus_per_node=8,
            first=100,
            offset=off,
            file="trace1.csv",
        )
    for inst in PSPLIB_J30:
        local = ROOT / "instances" / "psplib" / "j30" / f"{inst}.sm"
        src = local if local.exists() else shared / "psplib" / "j30" / f"{inst}.sm"
        doc = parse_sm(src.read_text(encoding="utf-8"), name=f"psplib-{inst}")
        doc["name"] = f"psplib-{inst}"
        doc["description"] = (
            f"PSPLIB j30 instance {inst} (Kolisch & Sprecher 1996, "
            "EJOR 96:205-216), converted by planner.importers.psplib"
        )
        out[doc["name"]] = doc
    for family, jobs, nodes, seed in SYNTHETIC:
        name = f"gen-{family}-{jobs}j-{nodes}n-s{seed}"
        doc = generate(family, jobs, nodes, seed)
        doc["name"] = name
        doc["description"] = (
            f"planner.generate.generate({family!r}, jobs={jobs}, nodes={nodes}, seed={seed})"
        )
        out[name] = doc
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "instances" / "bench")
    args = ap.parse_args()
    if not (args.shared / "muri").is_dir():
        raise SystemExit(
            f"{args.shared}: no muri/ folder here: give the public datasets with --shared DIR"
        )
    docs = build(args.shared)
    for name, doc in docs.items():
        inst = instance_from_dict(doc, file=name)  # refuse to write a bad instance
        write_json(args.output / f"{name}.json", doc)
        print(f"{name}: {len(inst.jobs)} jobs, {len(inst.nodes)} nodes")


if __name__ == "__main__":
    main()
