"""Muri's own simulator on cluster_trace.csv, 8 x 8 GPUs, Muri's restart costs: (avg JCT s,
makespan s) per policy, run here once and quoted (not recomputed) by simulate_fidelity.py
and policies.py."""

MURI = {
    "srsf-p": (233_909, 4_198_587),
    "srtf": (247_453, 4_066_820),
    "tiresias": (328_737, 3_991_729),
    "muri-s": (120_034, 2_663_199),
    "muri-l": (127_846, 2_671_191),
}
