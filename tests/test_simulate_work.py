"""How much work a decision of `plan simulate` does on a long queue (README "Simulating
policies"): counted, not timed. A preemptive policy re-takes every job at each decision,
but a job needing more GPUs than are left is passed over without working out how long its
run must be clear of reservations; the view reuses what it made of a job that waited."""

from __future__ import annotations

from dataclasses import replace

import pytest
from builders import make_instance, profile, reservation

import planner.simulate.policies as policies
from planner.generate import generate
from planner.instance import Instance, Interleaving, Job, NodeGroup, Preemption
from planner.online import make_policy
from planner.read import instance_from_dict
from planner.schedule import schedule_from_dict
from planner.simulate import result_to_schedule_dict, simulate
from planner.simulate.engine import Engine
from planner.simulate.engine_state import JobViews
from planner.simulate.model import SimJob
from planner.simulate.packer import Packer
from planner.verify import verify

A = profile("A", {1: (1000, 800, 100, 50)})
QUEUE = 40


def queue_on_one_gpu(restart: int = 0) -> Instance:
    """One GPU, QUEUE jobs released together (1-QUEUE units of work), preemption on."""
    jobs = [Job(f"j{i:02d}", 1, "A", QUEUE - i) for i in range(QUEUE)]
    return make_instance(
        jobs,
        [NodeGroup("n", 1, 1)],
        [A],
        interleaving=Interleaving(False, 4),
        preemption=Preemption(True, restart),
    )


def assert_verified(inst: Instance, res) -> None:
    sched = schedule_from_dict(result_to_schedule_dict(inst, res))
    assert verify(inst, sched) == []


@pytest.mark.parametrize("policy", ["srtf", "srsf-p", "tiresias"])
@pytest.mark.parametrize("held", [False, True])
def test_a_full_cluster_passes_the_queue_over(policy, held, monkeypatch):
    calls = []

    def counted(view, members, preemptive=True):
        calls.append(view.now)
        return until(view, members, preemptive)

    until = policies.until
    monkeypatch.setattr(policies, "until", counted)
    inst = queue_on_one_gpu()
    if held:  # a hold of the GPU long after the queue is done: the packer reads `until`
        inst = replace(inst, reservations=(reservation("m", 10**6, 10**6 + 1, nodes=["n-0"]),))
    res = simulate(inst, make_policy(policy))
    assert_verified(inst, res)
    decisions = res.info["decisions"]
    # one job fits the GPU: first fit asks for it, settle once more; before, first fit
    # asked for every waiting job at every decision (QUEUE * (QUEUE + 1) / 2 and more).
    # Without a reservation or a pool no placement reads it, and it is not worked out
    assert 0 < len(calls) <= 2 * decisions if held else calls == []
    assert decisions < QUEUE * 2


def test_a_scan_passes_over_only_nodes_short_for_its_count():
    # Packer._scan skips, for each count, the leading nodes seen with fewer GPUs free than
    # that count: a node short for 2 GPUs is still looked at for 1, and a node taken later
    # is skipped for whole-node runs only from then
    inst = make_instance([], [NodeGroup("n", 4, 4)])
    p = Packer(inst, 0)

    def at(g: int) -> list[tuple[str, tuple[int, ...]]] | None:
        pl = p.place([Job(f"j{g}", g, duration=1)], 1)
        return None if pl is None else [(x.node, x.gpus) for x in pl]

    assert at(3) == [("n-0", (0, 1, 2))]
    assert at(4) == [("n-1", (0, 1, 2, 3))]
    assert at(2) == [("n-2", (0, 1))]  # n-0 and n-1 are short for 2
    assert at(1) == [("n-0", (3,))]  # n-0 is not short for 1
    assert at(8) is None  # n-3 is the only whole node left
    assert at(2) == [("n-2", (2, 3))]
    assert at(4) == [("n-3", (0, 1, 2, 3))]
    assert at(1) is None and p.free_gpus == 0


def test_the_view_remakes_only_what_changed(monkeypatch):
    made = []
    real = SimJob.__init__

    def counted(self, job, *args, **kw):
        made.append(job.id)
        real(self, job, *args, **kw)

    monkeypatch.setattr(SimJob, "__init__", counted)
    inst = queue_on_one_gpu()
    res = simulate(inst, make_policy("fifo"))
    assert_verified(inst, res)
    # each job is made once when it is first seen and once more while it runs; before,
    # every waiting job was made anew at every decision
    assert len(made) <= 2 * QUEUE
    # fifo runs the queue in order, each job alone, back to back
    t = 0
    for i in range(QUEUE):
        (seg,) = res.segments[f"j{i:02d}"]
        assert (seg.start, seg.end) == (t, t + QUEUE - i)
        t = seg.end


def test_tiresias_demotes_a_job_past_its_threshold():
    """Muri's simulator's first threshold, 3,250 GPU seconds (one-second time units here):
    the long job runs until it passes it, the short one (queue 0) then runs until it
    passes it too; both in queue 1, the one running keeps going (README "Simulating
    policies")."""
    inst = make_instance(
        [Job("long", 1, "A", 10_000), Job("short", 1, "A", 5_000, release=100)],
        [NodeGroup("n", 1, 1)],
        [A],
        interleaving=Interleaving(False, 4),
        preemption=Preemption(True, 0),
    )
    assert inst.unit_ms == 1000
    res = simulate(inst, make_policy("tiresias"))
    assert_verified(inst, res)
    spans = {a: [(s.start, s.end) for s in res.segments[a]] for a in ("long", "short")}
    assert spans == {"long": [(0, 3250), (8250, 15000)], "short": [(3250, 8250)]}


@pytest.mark.parametrize("policy", ["fifo", "srsf-p", "tiresias", "muri-s"])
def test_the_kept_views_are_the_views_made_anew(policy, monkeypatch):
    """`Engine._view` keeps each waiting job's view from one decision to the next; at every
    decision (and after resuming from a snapshot) it shows what making every active job's
    view from scratch shows, in the same order."""
    checked = []
    kept_view = Engine._view

    def compared(self, t):
        view = kept_view(self, t)
        live = {a: r for run in self.runs.values() for a, r in self._state(run, t)[0].items()}
        fresh, self.views = self.views, JobViews(self.inst, self.policy.blind)
        try:
            anew = tuple(self._sim(a, t, live) for a in self.active)
        finally:
            self.views = fresh
        assert view.jobs == anew
        checked.append(t)
        return view

    monkeypatch.setattr(Engine, "_view", compared)
    inst = instance_from_dict(generate("dl", 40, 1, 3, preemption=True))
    snaps: list = []
    whole = simulate(inst, make_policy(policy), record=snaps, every=3)
    assert_verified(inst, whole)
    assert len(checked) == whole.info["decisions"] and len(snaps) > 2
    resumed = simulate(inst, make_policy(policy), start=snaps[len(snaps) // 2])
    if policy != "tiresias":  # its queues remember what it saw before the snapshot
        assert resumed.segments == whole.segments
