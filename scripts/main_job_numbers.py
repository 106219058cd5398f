"""Measure the main job (`optcmp run` with no arguments) for README: wall time, CPU time, verdict.

Run from the repository root::

    python scripts/main_job_numbers.py

Runs ``python -m optcmp run --no-progress`` in a child process and prints, as markdown to paste
into README ("Output of the main job"): the machine (cores), the load average before and after,
the child's wall time and CPU time (user + system, from ``os.wait4``: on an idle machine the
single-threaded job's wall time is close to it), the number of contended runs, and the verdict
line. Deterministic parts (statuses, iterations) are the same on every run; the times are not.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def main() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPTCMP_CONTENTION_MARGIN"}
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "optcmp", "run", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    load1 = os.getloadavg()[0]
    cpu = usage.ru_utime + usage.ru_stime
    lines = out.splitlines()
    verdict = next((ln for ln in lines if ln.startswith("verdict:")), "(no verdict)")
    contended = sum(1 for ln in lines[2:] if ln.rstrip().endswith(" yes"))
    print(f"`optcmp run` on {os.cpu_count()} cores, load average {load0:.2f} before and "
          f"{load1:.2f} after: {wall:.1f} s wall, {cpu:.1f} s CPU (user + system), "
          f"{contended} contended run(s), exit status {os.waitstatus_to_exitcode(status)}.")
    print()
    print("```text")
    print("$ optcmp run")
    print(out.rstrip())
    print("```")
    print()
    print(verdict)


if __name__ == "__main__":
    main()
