"""The fault injector inside one worker process (local/faults.py describes the rules).

local/lambda_worker.py loads this file by path when the stack gave the function fault rules
(PSAP_LOCAL_FAULT_RULES); without them nothing of it is loaded. It installs the hook that
psap.faults.fault_point calls, answers AWS calls with the rules' errors
(local/fault_aws_calls.py), and acts at the start of each invocation for rules without a
point. Standard library only at import, like the worker itself.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import random
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

# What a crashed Lambda runtime reports ("Runtime exited with error: signal: killed").
CRASH_STATUS: Final = 137
# A stalled invocation sleeps until the runtime ends it at the function's Timeout.
STALL_SECONDS: Final = 24 * 3600.0
_POINT_FAULTS: Final = ("crash", "timeout", "latency")


def fires(rule: Mapping[str, Any], seed: int, state_dir: Path) -> bool:
    """Whether this meeting of the rule fails: drawn from the seed, the rule and how many
    times it was met across the stack, never more than `times` firings. The counts live in
    files under `state_dir`, locked, so they are the stack's and not one worker's."""
    index = int(rule["index"])
    with open(state_dir / f"rule-{index}.json", "a+", encoding="utf-8") as counter:
        fcntl.flock(counter, fcntl.LOCK_EX)
        counter.seek(0)
        text = counter.read()
        state = json.loads(text) if text else {"met": 0, "fired": 0}
        met, fired = int(state["met"]), int(state["fired"])
        # Seeded draws, not secrets.
        draw = random.Random(f"{seed}:{index}:{met}").random()  # noqa: S311
        times = rule.get("times")
        fire = draw < float(rule.get("probability", 1.0)) and (times is None or fired < int(times))
        counter.seek(0)
        counter.truncate()
        counter.write(json.dumps({"met": met + 1, "fired": fired + int(fire)}))
    return fire


def act(rule: Mapping[str, Any], where: str) -> None:
    fault = rule["fault"]
    if fault == "latency":
        time.sleep(int(rule.get("milliseconds", 0)) / 1000)
        return
    print(f"[FAULT] {fault} at {where} (rule {int(rule['index']) + 1})", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    if fault == "crash":
        os._exit(CRASH_STATUS)
    time.sleep(STALL_SECONDS)


class WorkerFaults:
    """One function's rules in its worker process."""

    def __init__(self, document: Mapping[str, Any], state_dir: Path) -> None:
        self.seed = int(document.get("seed", 0))
        self.state_dir = state_dir
        rules = list(document.get("rules") or [])
        self._at_points = [r for r in rules if r["fault"] in _POINT_FAULTS and r.get("point")]
        self._at_invoke = [r for r in rules if r["fault"] in _POINT_FAULTS and not r.get("point")]
        self._aws_calls = [r for r in rules if r["fault"] not in _POINT_FAULTS]

    def fires(self, rule: Mapping[str, Any]) -> bool:
        return fires(rule, self.seed, self.state_dir)

    def at_point(self, name: str) -> None:
        for rule in self._at_points:
            if rule["point"] == name and self.fires(rule):
                act(rule, name)

    def at_invoke(self) -> None:
        for rule in self._at_invoke:
            if self.fires(rule):
                act(rule, "the start of the invocation")

    def install(self) -> None:
        if self._at_points:
            # The function's own layer, on its path only inside the worker.
            from psap import faults  # noqa: PLC0415

            faults.install(self.at_point)
        if self._aws_calls:
            _sibling("fault_aws_calls").install(self._aws_calls, self.fires)


def _sibling(name: str) -> Any:
    """A module beside this file, loaded by path (the repository is not on the path)."""
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_psap_local_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def from_environment(rules: str, state_dir: str) -> WorkerFaults:
    faults = WorkerFaults(json.loads(rules), Path(state_dir))
    faults.install()
    return faults
