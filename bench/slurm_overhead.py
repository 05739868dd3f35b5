"""What the SLURM path of `cowbird build` costs over the local build: the same generated corpus built with
``--jobs 2`` and through a real single-host SLURM (``tests/slurm.py``: Debian's slurmctld, slurmd and
munge on this machine, 2 cores), wall time of each and whether the outputs are the same bytes.

The difference is SLURM's: scheduling and starting each array task (a fresh Python that imports cowbird
and loads its models once per task, where the local build's workers load them once per process),
the dependencies between the four jobs, and waiting's poll interval (``--wait`` asks ``scontrol``
every 10 s: the command returns up to 10 s after the encode job ended).

Run (as root, with slurm-wlm and munge installed): ``.venv/bin/python -m bench.slurm_overhead [FILES PAGES]``
(default 6 WARC files of 50 pages); the figures go into bench/RESULTS.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.build import pages
from tests.slurm import missing_programs, start_cluster, stop_cluster


def built(out: Path) -> dict[str, bytes]:
    """The output's files (not the work folder, not the report page), the folder's own path taken out."""
    return {p.relative_to(out).as_posix(): p.read_bytes().replace(str(out).encode(), b"OUT")
            for p in sorted(out.rglob("*")) if p.is_file() and not p.relative_to(out).as_posix().startswith("work/")
            and p.name not in ("build.json", "report.html")}


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return time.monotonic() - started


def main() -> None:
    files, per_file = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (6, 50)
    if missing_programs() or os.geteuid() != 0:
        raise SystemExit("needs root and Debian's slurm-wlm and munge: apt-get install slurm-wlm munge")
    with tempfile.TemporaryDirectory(prefix="cowbird-bench-slurm-") as folder:
        root = Path(folder)
        (root / "in").mkdir()
        every = pages.make_pages(66, files * per_file)
        inputs = [str(pages.write_warc(root / "in" / f"crawl-{k:02d}.warc.gz", every[k * per_file:(k + 1) * per_file]))
                  for k in range(files)]
        (root / "cluster").mkdir()
        cluster = start_cluster(root / "cluster")
        try:
            env = cluster.env
            build = [sys.executable, "-m", "cowbird", "build", *inputs, "--name", "bench"]
            local = timed([*build, "-o", str(root / "local"), "--jobs", "2"], env)
            rows = []
            for per_task in (1, files // 2):
                out = root / f"slurm-{per_task}"
                seconds = timed([*build, "-o", str(out), "--cluster", "slurm", "--slurm-mem", "1500M",
                                 "--slurm-shards-per-task", str(per_task)], env)
                same = built(out) == built(root / "local")
                rows.append((per_task, seconds, same))
        finally:
            stop_cluster(cluster)
    print(f"{files} WARC files x {per_file} pages; local --jobs 2: {local:.1f} s")
    print("| shards per task | array tasks (clean, annotate) | wall time | over local | same bytes |")
    print("|---|---|---|---|---|")
    for per_task, seconds, same in rows:
        tasks = -(-files // per_task)
        print(f"| {per_task} | {tasks} | {seconds:.1f} s | {seconds - local:+.1f} s | {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
