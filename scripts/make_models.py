"""Derive the model catalogue (models/<model>.json) from the Muri trace CSVs.

Usage: python scripts/make_models.py [DATASETS_MURI_DIR] [-o models/]

Every row of every CSV carries the measured solo iteration time and the three stage times of
its (model, GPU count). They agree across rows except resnet18 at 32 GPUs, which has two
variants; we keep the most frequent row for each (model, GPU count). GPU memory is not in the
data: the per-model estimates below are explained in models/README.md. Restart costs are
not in the CSVs either: they are the stop-and-restart times Muri measured on its testbed
(its simulator's table, credited in models/README.md).
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter, defaultdict
from pathlib import Path

# Peak training memory per GPU (GB) at the trace's batch size; reasoning in models/README.md.
GPU_MEM_GB = {
    "vgg16": 5.0,
    "vgg19": 5.5,
    "resnet18": 5.0,
    "shufflenet_v2_x1_0": 4.0,
    "bert": 8.0,
    "gpt2": 12.0,
    "a2c": 1.5,
    "dqn": 2.0,
}

# Measured cost of stopping and restarting a job (seconds), per GPU count and model, from
# the Muri artifact's simulator (contract §8: the catalogue carries them as restart_ms).
RESTART_S = {
    1: {
        "vgg16": 7,
        "vgg19": 7,
        "resnet18": 4,
        "shufflenet_v2_x1_0": 4,
        "bert": 10,
        "gpt2": 10,
        "a2c": 38,
        "dqn": 5,
    },
    2: {
        "vgg16": 7,
        "vgg19": 7,
        "resnet18": 5,
        "shufflenet_v2_x1_0": 4,
        "bert": 10,
        "gpt2": 10,
        "a2c": 39,
        "dqn": 5,
    },
    4: {
        "vgg16": 8,
        "vgg19": 8,
        "resnet18": 5,
        "shufflenet_v2_x1_0": 5,
        "bert": 10,
        "gpt2": 10,
        "a2c": 39,
        "dqn": 6,
    },
    8: {
        "vgg16": 9,
        "vgg19": 9,
        "resnet18": 7,
        "shufflenet_v2_x1_0": 5,
        "bert": 10,
        "gpt2": 10,
        "a2c": 46,
        "dqn": 6,
    },
    16: {
        "vgg16": 9,
        "vgg19": 10,
        "resnet18": 7,
        "shufflenet_v2_x1_0": 7,
        "bert": 10,
        "gpt2": 10,
        "a2c": 46,
        "dqn": 8,
    },
    32: {
        "vgg16": 10,
        "vgg19": 10,
        "resnet18": 7,
        "shufflenet_v2_x1_0": 8,
        "bert": 10,
        "gpt2": 10,
        "a2c": 46,
        "dqn": 8,
    },
}


def _num(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


def collect(folder: Path) -> dict[str, dict]:
    stages: dict[tuple[str, int], Counter] = defaultdict(Counter)
    batch: dict[str, Counter] = defaultdict(Counter)
    for path in sorted(folder.glob("*.csv")):
        with path.open(newline="") as fh:
            for row in csv.DictReader(fh):
                key = (row["model_name"], int(row["num_gpu"]))
                stages[key][
                    (
                        row["iteration_time"],
                        row["resource_time_0"],
                        row["resource_time_1"],
                        row["resource_time_2"],
                    )
                ] += 1
                batch[row["model_name"]][int(row["batch_size"])] += 1
    out: dict[str, dict] = {}
    for (model, gpus), counts in sorted(stages.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        (it, data, gpu, net), _ = counts.most_common(1)[0]
        prof = out.setdefault(
            model,
            {
                "model": model,
                "batch_size": batch[model].most_common(1)[0][0],
                "gpu_mem_gb": GPU_MEM_GB[model],
                "by_gpus": {},
            },
        )
        prof["by_gpus"][str(gpus)] = {
            "iteration_ms": _num(it),
            "stages_ms": {"data": _num(data), "gpu": _num(gpu), "net": _num(net)},
        }
        restart = RESTART_S.get(gpus, {}).get(model)
        if restart is not None:
            prof["by_gpus"][str(gpus)]["restart_ms"] = restart * 1000
    return out


def dump(prof: dict) -> str:
    """JSON with one line per GPU count, so a diff shows which figure changed."""
    head = {k: v for k, v in prof.items() if k != "by_gpus"}
    lines = [f' "{k}": {json.dumps(v)},' for k, v in head.items()]
    rows = [f'  "{g}": {json.dumps(e)}' for g, e in prof["by_gpus"].items()]
    return "{\n" + "\n".join(lines) + '\n "by_gpus": {\n' + ",\n".join(rows) + "\n }\n}\n"


def main() -> None:
    here = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=str(here.parent / "shared" / "datasets" / "muri"))
    ap.add_argument("-o", "--out", default=str(here / "models"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for model, prof in collect(Path(args.folder)).items():
        (out / f"{model}.json").write_text(dump(prof))


if __name__ == "__main__":
    main()
