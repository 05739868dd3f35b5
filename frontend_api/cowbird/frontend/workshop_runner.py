"""A workshop job's runner: ``python -P -m cowbird.frontend.workshop_runner JOBDIR``.

The front end starts it detached (a session of its own), so a job goes on when the front end restarts.
It runs the job's stages one after the other as ``cowbird`` commands — ``crawl`` (for a crawl job), then
``build`` — with their output in JOBDIR/job.log, and keeps JOBDIR/state.json current: ``state`` (running,
stopping, stopped, finished, failed), ``stage``, ``done`` (the stages finished), ``pid``, ``error``. SIGTERM
stops it: the stage under way gets SIGTERM (the crawl stops cleanly, the build where it is), and the job is
``stopped``; started again, the runner resumes it (the crawl from its frontier, the build from its work
folder), skipping the stages done.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def write_json(path: Path, value: dict[str, Any]) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.part")  # a signal handler too
    partial.write_text(json.dumps(value, indent=1) + "\n", encoding="utf-8")
    os.replace(partial, path)


def stage_command(jobdir: Path, spec: dict[str, Any], stage: str) -> list[str]:
    """The ``cowbird`` command of one stage of the job ``spec`` (job.json, written by the front end)."""
    cowbird = [sys.executable, "-P", "-m", "cowbird"]
    if stage == "crawl":
        command = [*cowbird, "crawl", str(jobdir / "seeds.txt"), "-o", str(jobdir / "crawl"),
                   "--lang", spec["language"], "--pages", str(spec["pages"]), "--delay", str(spec["delay"]), "-q"]
        for cidr in spec.get("allow", []):
            command += ["--allow", cidr]
        return command
    inputs = [str(jobdir / "crawl" / "warc")] if spec["kind"] == "crawl" else list(spec["inputs"])
    return [*cowbird, "build", *inputs, "-o", str(jobdir / "corpus"), "--name", spec["name"],
            "--language", spec["language"], "-j", str(spec.get("jobs", 1))]


def main(jobdir: Path) -> int:
    spec = read_json(jobdir / "job.json")
    state_path = jobdir / "state.json"
    state = read_json(state_path)
    stages = ["crawl", "build"] if spec.get("kind") == "crawl" else ["build"]
    done: list[str] = [s for s in state.get("done", []) if s in stages]
    state.update(state="running", pid=os.getpid(), started=time.time(), error=None, done=done)
    write_json(state_path, state)
    current: dict[str, subprocess.Popen[bytes] | None] = {"child": None}

    def stop(signum: int, frame: object) -> None:
        state["state"] = "stopping"
        write_json(state_path, state)
        child = current["child"]
        if child is not None and child.poll() is None:
            if state.get("stage") == "crawl":  # the crawl stops cleanly and ends its own workers
                child.send_signal(signal.SIGTERM)
            else:  # the build, with its worker processes (it resumes from its work folder)
                os.killpg(child.pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with (jobdir / "job.log").open("ab") as log:
        for stage in stages:
            if stage in done:
                continue
            if state["state"] == "stopping":
                break
            state["stage"] = stage
            write_json(state_path, state)
            log.write(f"\n== {time.strftime('%Y-%m-%d %H:%M:%S')} {stage}\n".encode())
            log.flush()
            child = subprocess.Popen(stage_command(jobdir, spec, stage), stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
            current["child"] = child
            code = child.wait()
            current["child"] = None
            if state["state"] == "stopping":
                break
            if code != 0:
                log.flush()
                tail = (jobdir / "job.log").read_bytes()[-2000:].decode("utf-8", "replace").strip().splitlines()
                state.update(state="failed", error=f"{stage} ended with exit status {code}: "
                             + (tail[-1] if tail else "no output"), ended=time.time())
                write_json(state_path, state)
                return 1
            done.append(stage)
            state["done"] = done
            write_json(state_path, state)
    finished = all(stage in done for stage in stages)
    state.update(state="finished" if finished else "stopped", ended=time.time(), pid=None)
    write_json(state_path, state)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
