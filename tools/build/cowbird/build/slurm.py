"""`cowbird build --cluster slurm`: the build's phases as SLURM jobs, through plain sbatch scripts.

COW14 and enC³ were built on SLURM clusters this way: a shard of inputs per array task, then the
corpus-wide steps as jobs that depend on them. Here each phase is one array job whose tasks run the
build's step entry (``python -m cowbird build step PHASE OUT [--shard K]``) with the same Python and
cowbird as the submitting process: clean (one task per group of ``shards_per_task`` shards), dedup
(one task, ``afterok`` clean), annotate (per group, ``afterok`` dedup), encode (one task, ``afterok``
annotate). The steps are the local build's own, so the output is the same bytes as a local build.

Why sbatch scripts rather than submitit or dask-jobqueue: the scripts are files a site can read,
change and resubmit by hand (``OUT/work/slurm/*.sbatch`` and ``submit.sh``), they need nothing on the
cluster but the cowbird installation, and dependencies between array jobs are what SLURM itself
offers (``--dependency=afterok``); submitit and dask-jobqueue pickle Python callables and keep a
driver process (or a scheduler) alive, which a multi-day build on ~10,000 tasks must not depend on.

There is no accounting database on many small clusters (and none in the tests), so waiting polls
``scontrol show job`` (the controller's own records), counts the tasks done per phase and, when a task
fails, names it and its log file, cancels the build's remaining jobs and stops. Submitting again
resumes: the steps skip shards whose markers say they are finished, and only the groups with a
shard still to do are submitted.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import click

PHASES = ("clean", "dedup", "annotate", "encode")
PER_SHARD = frozenset({"clean", "annotate"})
"""The phases run per shard (array tasks over groups of shards); the others run once over the corpus."""

FAILED_STATES = frozenset({"FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL",
                           "DEADLINE", "PREEMPTED", "SPECIAL_EXIT", "REVOKED"})
"""Job states of a task that ended without finishing its work (``squeue --help``; ``man squeue``)."""

LOG_PATTERN = "%x-%A_%a.out"
"""Each task's log in ``OUT/work/slurm/logs/``: job name, array job id, task id."""


Command = TypeVar("Command", bound=Callable[..., Any])


class SlurmError(Exception):
    """A submission that SLURM refused, or a task that failed; the message says which and where its log is."""


class TransientError(SlurmError):
    """scontrol did not answer (the controller busy or restarting): waiting asks again."""


MAX_TROUBLES = 30
"""Polls in a row that may fail before waiting gives up (the jobs go on regardless)."""


@dataclass(frozen=True)
class SlurmOptions:
    """How the build's jobs are submitted (``--slurm-*`` options of ``cowbird build``)."""

    partition: str | None = None  # sbatch --partition; None: the cluster's default partition
    time: str | None = None  # sbatch --time per task, e.g. "4:00:00"; None: the partition's default
    mem: str | None = None  # sbatch --mem per task, e.g. "4G"; None: the cluster's default
    cpus: int = 1  # sbatch --cpus-per-task; a task runs this many of its shards at once
    shards_per_task: int = 1  # input files (shards) per array task of the per-shard phases
    extra: tuple[str, ...] = ()  # further sbatch options, passed as they are (e.g. "--account=ling")
    wait: bool = True  # wait for the jobs, showing progress, and fail when a task fails
    poll_seconds: float = 10.0  # how often waiting asks scontrol

    def __post_init__(self) -> None:
        if self.cpus < 1:
            raise ValueError(f"--slurm-cpus must be at least 1, not {self.cpus}")
        if self.shards_per_task < 1:
            raise ValueError(f"--slurm-shards-per-task must be at least 1, not {self.shards_per_task}")
        if self.poll_seconds <= 0:
            raise ValueError(f"the poll interval must be positive, not {self.poll_seconds}")


@dataclass(frozen=True)
class PhaseJob:
    """One submitted phase: its array job and the task ids submitted."""

    phase: str
    job_id: str
    job_name: str
    tasks: tuple[int, ...]
    script: Path

    def log(self, out: Path, task: int) -> Path:
        """The log file of one of its tasks (``LOG_PATTERN`` filled in)."""
        return slurm_folder(out) / "logs" / f"{self.job_name}-{self.job_id}_{task}.out"


@dataclass
class TaskState:
    """A task's state as ``scontrol show job`` reports it."""

    state: str
    exit_code: str = ""
    reason: str = ""


@dataclass
class Submission:
    """What was submitted for a build: its phases' jobs in order (phases with nothing to do are left out)."""

    out: Path
    shards: int
    options: SlurmOptions
    jobs: list[PhaseJob] = field(default_factory=list)


def slurm_folder(out: Path) -> Path:
    return out / "work" / "slurm"


def task_count(phase: str, shards: int, per_task: int) -> int:
    """The number of array tasks of a phase: groups of ``per_task`` shards, or one."""
    if phase not in PER_SHARD:
        return 1
    return max(1, -(-shards // per_task))


def task_shards(task: int, shards: int, per_task: int) -> range:
    """The shards (numbers) array task ``task`` of a per-shard phase runs: the same arithmetic as its script."""
    first = task * per_task
    return range(first, min(first + per_task, shards))


def shard_name(number: int) -> str:
    return f"{number:05d}"


def job_name(phase: str, name: str) -> str:
    """``cowbird-NAME-PHASE`` with what SLURM and file names do not like replaced."""
    clean = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")
    return f"cowbird-{clean}-{phase}" if clean else f"cowbird-{phase}"


def default_step() -> list[str]:
    """The step entry the tasks run: this Python's cowbird (``python -m cowbird build step``)."""
    return [sys.executable, "-m", "cowbird", "build", "step"]


def array_spec(tasks: Sequence[int]) -> str:
    """SLURM's ``--array`` value for task ids: ranges of consecutive ids, e.g. ``0-3,7,9-10``."""
    parts: list[str] = []
    ordered = sorted(set(tasks))
    start = previous = ordered[0]
    for task in [*ordered[1:], None]:
        if task is not None and task == previous + 1:
            previous = task
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if task is not None:
            start = previous = task
    return ",".join(parts)


def expand_array(spec: str) -> list[int]:
    """Task ids from an ``ArrayTaskId`` value as scontrol shows it (``3``, ``1-4``, ``1,3-5%2``)."""
    ids: list[int] = []
    for part in spec.split("%", 1)[0].split(","):
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            step = 1
            if ":" in high:
                high, step_text = high.split(":", 1)
                step = int(step_text)
            ids.extend(range(int(low), int(high) + 1, step))
        else:
            ids.append(int(part))
    return ids


def write_script(out: Path, phase: str, shards: int, options: SlurmOptions, step: Sequence[str], name: str) -> Path:
    """Write ``OUT/work/slurm/PHASE.sbatch``: the batch script of one phase, commented for a site's reader."""
    folder = slurm_folder(out)
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    command = " ".join(shlex.quote(part) for part in step)
    target = shlex.quote(str(out))
    tasks = task_count(phase, shards, options.shards_per_task)
    lines = [
        "#!/bin/bash",
        f"# cowbird build, phase {phase!r} of {out}",
        "# written by `cowbird build --cluster slurm` (cowbird.build.slurm); submit.sh beside it submits the",
        "# four phases with their dependencies (clean -> dedup -> annotate -> encode, each afterok the one before).",
    ]
    if phase in PER_SHARD:
        lines += [
            f"# An array job: task T runs shards T*{options.shards_per_task} .. T*{options.shards_per_task}"
            f"+{options.shards_per_task - 1} of {shards} (OUT/work/shards.tsv names their input files),",
            f"# tasks 0-{tasks - 1}; up to --cpus-per-task of them at once. A finished shard is skipped (its",
            "# marker in OUT/work/), so resubmitting a task, or all of them, redoes only unfinished shards:",
            f"#   sbatch --array=0-{tasks - 1} {folder / (phase + '.sbatch')}",
        ]
    else:
        lines += [
            "# One task over the whole corpus (an array of one, so that its log is named as the others').",
            "# Finished work is skipped (its marker in OUT/work/): resubmitting it is safe.",
        ]
    lines += [
        f"#SBATCH --job-name={job_name(phase, name)}",
        f"#SBATCH --output={folder / 'logs' / LOG_PATTERN}",
        f"#SBATCH --chdir={out}",
        f"#SBATCH --cpus-per-task={options.cpus}",
        "#SBATCH --ntasks=1",
        "#SBATCH --kill-on-invalid-dep=yes",
    ]
    if options.partition:
        lines.append(f"#SBATCH --partition={options.partition}")
    if options.time:
        lines.append(f"#SBATCH --time={options.time}")
    if options.mem:
        lines.append(f"#SBATCH --mem={options.mem}")
    lines += ["", "set -u", 'echo "cowbird build: $(date -u +%FT%TZ) on $(hostname): task ${SLURM_ARRAY_TASK_ID:-}"']
    if phase in PER_SHARD:
        lines += [
            f"SHARDS={shards}",
            f"PER_TASK={options.shards_per_task}",
            'TASK="${SLURM_ARRAY_TASK_ID:?this script runs as a task of a SLURM array job (sbatch --array)}"',
            "FIRST=$((TASK * PER_TASK))",
            "LAST=$((FIRST + PER_TASK - 1))",
            "if [ \"$LAST\" -ge \"$SHARDS\" ]; then LAST=$((SHARDS - 1)); fi",
            'AT_ONCE="${SLURM_CPUS_PER_TASK:-1}"',
            "",
            "run_shard() {",
            f'    echo "cowbird build: {phase} shard $1 starts"',
            f'    if {command} {phase} {target} --shard "$1"; then',
            f'        echo "cowbird build: {phase} shard $1 done"',
            "    else",
            "        status=$?",
            f'        echo "cowbird build: {phase} shard $1 failed (exit $status)" >&2',
            "        return 1",
            "    fi",
            "}",
            "",
            "failed=0",
            "running=0",
            'for ((k = FIRST; k <= LAST; k++)); do',
            '    run_shard "$k" &',
            "    running=$((running + 1))",
            '    if [ "$running" -ge "$AT_ONCE" ]; then',
            "        wait -n || failed=1",
            "        running=$((running - 1))",
            "    fi",
            "done",
            'while [ "$running" -gt 0 ]; do',
            "    wait -n || failed=1",
            "    running=$((running - 1))",
            "done",
            'exit "$failed"',
            "",
        ]
    else:
        lines += [f"exec {command} {phase} {target}", ""]
    script = folder / f"{phase}.sbatch"
    temporary = script.with_suffix(".sbatch.tmp")
    temporary.write_text("\n".join(lines))
    temporary.chmod(0o755)
    temporary.replace(script)
    return script


def sbatch_command(script: Path, tasks: Sequence[int], dependency: str | None, options: SlurmOptions) -> list[str]:
    """The sbatch command line of one phase (the script's #SBATCH lines hold the rest)."""
    command = ["sbatch", "--parsable", f"--array={array_spec(tasks)}"]
    if dependency is not None:
        command.append(f"--dependency=afterok:{dependency}")
    return [*command, *options.extra, str(script)]


def require(program: str) -> None:
    """SlurmError unless one of SLURM's client commands is on PATH."""
    if shutil.which(program) is None:
        raise SlurmError(f"{program} is not on PATH: --cluster slurm submits through SLURM's own commands "
                         f"(sbatch, squeue, scontrol, scancel); run cowbird build on a host of the cluster "
                         f"(a login node)")


def run_slurm(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run one of SLURM's client commands; SlurmError when it is not installed."""
    require(command[0])
    return subprocess.run(list(command), capture_output=True, text=True, timeout=300)


def submit_build(
    out: Path,
    shards: int,
    options: SlurmOptions,
    *,
    name: str = "",
    step: Sequence[str] | None = None,
    pending: Mapping[str, Collection[int]] | None = None,
    finished: Callable[[str, int | None], bool] | None = None,
    echo: Callable[[str], None] = print,
    sleep: Callable[[float], None] = time.sleep,
) -> Submission:
    """Write the phases' scripts into ``OUT/work/slurm/`` and submit them, each afterok the one before.

    ``shards`` is the number of shards (``OUT/work/shards.tsv``, prepared before). ``pending`` names,
    per phase, the shards still to do (for dedup and encode: ``{0}`` or empty); a group of shards none
    of which is pending is not submitted, nor a phase with nothing to do — so a resubmission runs only
    what is left. ``finished(phase, shard)`` says whether a step's work is done (its marker); waiting
    asks it about a task whose record SLURM no longer keeps. With ``options.wait``, waits until the
    last job ends, showing the tasks done per phase, and raises SlurmError naming a failed task and
    its log. Returns what was submitted.
    """
    out = out.resolve()
    if shards < 1:
        raise SlurmError(f"nothing to build in {out}: no input shards")
    command = list(step) if step is not None else default_step()
    submission = Submission(out=out, shards=shards, options=options)
    for program in ("sbatch", "scontrol", "scancel", "squeue"):
        require(program)
    check_array_size(shards, options)
    still = active_jobs(out)
    if still:
        raise SlurmError(f"jobs of this build are still queued or running ({', '.join(still)}; "
                         f"{slurm_folder(out) / 'jobs.tsv'}): wait for them to end, or scancel them, then submit "
                         f"again (two tasks must not work on one shard)")
    dependency: str | None = None
    scripts = {phase: write_script(out, phase, shards, options, command, name) for phase in PHASES}
    _write(slurm_folder(out) / "submit.sh", submit_script(out, shards, options, scripts), executable=True)
    for phase in PHASES:
        tasks = [t for t in range(task_count(phase, shards, options.shards_per_task))
                 if pending is None or _has_pending(phase, t, shards, options, pending)]
        if not tasks:
            echo(f"slurm: {phase}: nothing left to do")
            continue
        argv = sbatch_command(scripts[phase], tasks, dependency, options)
        done = run_slurm(argv)
        if done.returncode != 0:
            _cancel(submission.jobs)
            raise SlurmError(f"sbatch refused the {phase} job ({shlex.join(argv)}): {done.stderr.strip()}"
                             + (" (the jobs submitted before it were cancelled)" if submission.jobs else ""))
        job_id = done.stdout.strip().split(";", 1)[0]
        if not job_id.isdigit():
            _cancel(submission.jobs)
            raise SlurmError(f"sbatch answered {done.stdout.strip()!r} for the {phase} job, not a job id")
        after = f" after job {dependency}" if dependency is not None else ""
        submission.jobs.append(PhaseJob(phase=phase, job_id=job_id, job_name=job_name(phase, name),
                                        tasks=tuple(tasks), script=scripts[phase]))
        dependency = job_id
        echo(f"slurm: {phase}: job {job_id}, {len(tasks)} task{'s' if len(tasks) != 1 else ''}{after}")
    if submission.jobs:
        _write(slurm_folder(out) / "jobs.tsv", "phase\tjob\ttasks\n" + "".join(
            f"{j.phase}\t{j.job_id}\t{array_spec(j.tasks)}\n" for j in submission.jobs))
        echo(f"slurm: scripts and logs in {slurm_folder(out)}")
    if options.wait and submission.jobs:
        wait_for(submission, finished=finished, echo=echo, sleep=sleep)
    return submission


def submit_script(out: Path, shards: int, options: SlurmOptions, scripts: Mapping[str, Path]) -> str:
    """``OUT/work/slurm/submit.sh``: the four phases submitted by hand, all their tasks, each afterok the
    one before — what a site runs to resubmit a build (the steps skip what is finished)."""
    lines = [
        "#!/bin/bash",
        f"# Submits the build of {out} to SLURM, as `cowbird build --cluster slurm --no-wait` does:",
        "# each phase an array job, afterok the one before (written by cowbird.build.slurm). Run it again",
        "# to resume a build whose jobs failed or were cancelled: the steps skip finished shards.",
        "set -euo pipefail",
    ]
    previous = ""
    for phase in PHASES:
        tasks = list(range(task_count(phase, shards, options.shards_per_task)))
        argv = [shlex.quote(a) for a in sbatch_command(scripts[phase], tasks, None, options)]
        if previous:
            argv.insert(3, f'--dependency=afterok:"${previous}"')
        lines.append(f"{phase}=$({' '.join(argv)})")
        lines.append(f'{phase}="${{{phase}%%;*}}"  # "id;cluster" on a multi-cluster site')
        previous = phase
    lines.append('echo "submitted: ' + " ".join(f"{phase} ${phase}" for phase in PHASES) + '"')
    return "\n".join(lines) + "\n"


def active_jobs(out: Path) -> list[str]:
    """The jobs of this build's last submission (``OUT/work/slurm/jobs.tsv``) still queued or running."""
    listed = slurm_folder(out) / "jobs.tsv"
    if not listed.is_file():
        return []
    ids = [line.split("\t")[1] for line in listed.read_text().splitlines()[1:] if line.count("\t") == 2]
    if not ids:
        return []
    done = run_slurm(["squeue", "-h", "-o", "%F", "-j", ",".join(ids)])
    if done.returncode != 0:
        if "Invalid job id" in done.stderr:
            return []  # all of them ended long enough ago to be forgotten
        raise SlurmError(f"squeue -j {','.join(ids)} failed: {done.stderr.strip()}")
    return sorted(set(done.stdout.split()) & set(ids), key=int)


def max_array_size() -> int | None:
    """The cluster's MaxArraySize (``scontrol show config``; SLURM's default is 1001: task ids 0-1000), or
    None when scontrol does not say."""
    done = run_slurm(["scontrol", "show", "config"])
    found = re.search(r"^MaxArraySize\s*=\s*(\d+)", done.stdout, re.MULTILINE)
    return int(found.group(1)) if done.returncode == 0 and found else None


def check_array_size(shards: int, options: SlurmOptions) -> None:
    """Fail before submitting anything when the per-shard phases would need task ids above the cluster's
    MaxArraySize (sbatch would refuse the array), saying how many shards per task fit."""
    limit = max_array_size()
    tasks = task_count("clean", shards, options.shards_per_task)
    if limit is not None and tasks > limit:
        fits = -(-shards // limit)
        raise SlurmError(f"{shards} shards at {options.shards_per_task} per task make {tasks} array tasks, more "
                         f"than this cluster's MaxArraySize of {limit} (scontrol show config): use "
                         f"--slurm-shards-per-task {fits} or more")


def _has_pending(phase: str, task: int, shards: int, options: SlurmOptions,
                 pending: Mapping[str, Collection[int]]) -> bool:
    todo = pending.get(phase, ())
    if phase not in PER_SHARD:
        return bool(todo)
    return any(k in todo for k in task_shards(task, shards, options.shards_per_task))


def _write(path: Path, text: str, executable: bool = False) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    if executable:
        temporary.chmod(0o755)
    temporary.replace(path)


def parse_scontrol(text: str) -> list[dict[str, str]]:
    """The records of ``scontrol --oneliner show job``: one dict of its ``Key=Value`` fields per line."""
    records = []
    for line in text.splitlines():
        if "JobId=" not in line:
            continue
        records.append(dict(re.findall(r"(?:^|\s)([A-Za-z/:_]+)=(\S*)", line)))
    return records


def job_states(job: PhaseJob) -> dict[int, TaskState] | None:
    """Each submitted task's state, from the controller's records; None when SLURM no longer knows the job
    (its records expire MinJobAge seconds after it ends)."""
    try:
        done = run_slurm(["scontrol", "--oneliner", "show", "job", job.job_id])
    except subprocess.TimeoutExpired as error:
        raise TransientError(f"scontrol show job {job.job_id} did not answer within {error.timeout:.0f} s") from error
    if done.returncode != 0:
        if "Invalid job id" in done.stderr or "Invalid job id" in done.stdout:
            return None
        raise TransientError(f"scontrol show job {job.job_id} failed: {done.stderr.strip()}")
    states: dict[int, TaskState] = {}
    for record in parse_scontrol(done.stdout):
        state = TaskState(state=record.get("JobState", "UNKNOWN"), exit_code=record.get("ExitCode", ""),
                          reason=record.get("Reason", ""))
        ids = expand_array(record["ArrayTaskId"]) if record.get("ArrayTaskId") else [0]
        for task in ids:
            states[task] = state
    return states


def wait_for(
    submission: Submission,
    *,
    finished: Callable[[str, int | None], bool] | None = None,
    echo: Callable[[str], None] = print,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Poll the submitted jobs until the last has finished, showing the tasks done per phase when that
    changes; on a task that failed (or a job SLURM no longer knows whose work is not done), cancel the
    build's remaining jobs and raise SlurmError naming the task, its shards and its log file."""
    shown = ""
    started = time.monotonic()
    final: dict[tuple[str, int], TaskState] = {}  # tasks seen COMPLETED: not asked about again
    troubles = 0
    while True:
        complete = True
        counts = []
        try:
            for job in submission.jobs:
                states: dict[int, TaskState] = {}
                if any((job.phase, task) not in final for task in job.tasks):
                    known = job_states(job)
                    states = known if known is not None else _judged_by_markers(submission, job, finished)
                done = 0
                for task in job.tasks:
                    state = final.get((job.phase, task)) or states.get(task) or _missing(submission, job, task,
                                                                                          finished)
                    if state.state in FAILED_STATES or (state.state == "PENDING"
                                                        and state.reason == "DependencyNeverSatisfied"):
                        _fail(submission, job, task, state)
                    if state.state == "COMPLETED":
                        final[(job.phase, task)] = state
                        done += 1
                    else:
                        complete = False
                counts.append(f"{job.phase} {done}/{len(job.tasks)}")
        except TransientError as error:
            troubles += 1
            if troubles >= MAX_TROUBLES:
                raise SlurmError(f"{error} ({troubles} times in a row); the jobs go on: "
                                 f"squeue --me shows them, and waiting again resumes") from error
            echo(f"slurm: {error}; asking again in {submission.options.poll_seconds:.0f} s")
            sleep(submission.options.poll_seconds)
            continue
        troubles = 0
        line = "slurm: tasks done: " + ", ".join(counts)
        if line != shown:
            echo(f"{line} ({time.monotonic() - started:.0f} s)")
            shown = line
        if complete:
            return
        sleep(submission.options.poll_seconds)


def _missing(submission: Submission, job: PhaseJob, task: int,
             finished: Callable[[str, int | None], bool] | None) -> TaskState:
    """A task the controller's records of its job no longer show (its record expired, MinJobAge after it
    ended, while the job's other tasks still run): judged by its markers where cowbird can tell; else
    pending, which holds until the job itself is gone and judged whole."""
    if finished is None:
        return TaskState("PENDING")
    return _judged_by_markers(submission, job, finished)[task]


def _judged_by_markers(submission: Submission, job: PhaseJob,
                       finished: Callable[[str, int | None], bool] | None) -> dict[int, TaskState]:
    """The tasks of a job SLURM has forgotten: done where the steps' markers say so, else failed."""
    if finished is None:
        raise SlurmError(f"SLURM no longer knows job {job.job_id} ({job.phase}; its records expire MinJobAge "
                         f"after it ends) and cowbird cannot tell whether it finished: see its logs in "
                         f"{slurm_folder(submission.out) / 'logs'}")
    states = {}
    for task in job.tasks:
        if job.phase in PER_SHARD:
            shards = task_shards(task, submission.shards, submission.options.shards_per_task)
            ok = all(finished(job.phase, k) for k in shards)
        else:
            ok = finished(job.phase, None)
        states[task] = TaskState("COMPLETED" if ok else "FAILED", reason="" if ok else "no marker after the job")
    return states


def _fail(submission: Submission, job: PhaseJob, task: int, state: TaskState) -> None:
    cancelled = _cancel(submission.jobs)
    log = job.log(submission.out, task)
    what = job.phase
    if job.phase in PER_SHARD:
        shards = task_shards(task, submission.shards, submission.options.shards_per_task)
        names = [shard_name(k) for k in shards]
        what += f", shard{'s' if len(names) > 1 else ''} " + (names[0] if len(names) == 1
                                                              else f"{names[0]}-{names[-1]}")
    if state.state == "PENDING":
        ended = f"can never start ({state.reason}: a job it depends on failed)"
    else:
        ended = f"ended {state.state}" + (f" (exit code {state.exit_code})" if state.exit_code else "")
        if state.reason and state.reason not in ("None", "NonZeroExitCode"):  # the exit code says that
            ended += f", reason {state.reason}"
    tail = ""
    if log.is_file():
        lines = log.read_text(errors="replace").splitlines()[-10:]
        tail = "\nits last lines:\n" + "\n".join(f"  {line}" for line in lines)
    raise SlurmError(
        f"SLURM task {job.job_name} {job.job_id}_{task} ({what}) {ended}; its log: {log}{tail}\n"
        + (f"Cancelled what was left of the build's jobs ({', '.join(cancelled)}). " if cancelled else "")
        + "Run the same cowbird build again to resume: finished shards are kept.")


def _cancel(jobs: Sequence[PhaseJob]) -> list[str]:
    """scancel the given jobs (those not ended yet); the ids asked to cancel."""
    ids = [job.job_id for job in jobs]
    if ids and shutil.which("scancel") is not None:
        subprocess.run(["scancel", *ids], capture_output=True, text=True, timeout=120)
    return ids


def slurm_click_options(command: Command) -> Command:
    """The ``--slurm-*`` and ``--wait/--no-wait`` options of ``cowbird build`` (read with ``options_from_cli``)."""
    decorators = [
        click.option("--slurm-partition", metavar="NAME", default=None,
                     help="With --cluster slurm: the partition the jobs run in (default: the cluster's default)."),
        click.option("--slurm-time", metavar="TIME", default=None,
                     help="With --cluster slurm: the time limit per array task, as sbatch --time (e.g. 4:00:00)."),
        click.option("--slurm-mem", metavar="SIZE", default=None,
                     help="With --cluster slurm: memory per array task, as sbatch --mem (e.g. 4G); it must cover "
                          "--slurm-cpus shards at once."),
        click.option("--slurm-cpus", type=click.IntRange(min=1), default=1, show_default=True,
                     help="With --cluster slurm: CPUs per array task; a task runs that many of its shards at once."),
        click.option("--slurm-shards-per-task", type=click.IntRange(min=1), default=1, show_default=True,
                     help="With --cluster slurm: input files (shards) per array task of the clean and annotate jobs."),
        click.option("--slurm-option", "slurm_extra", metavar="OPTION", multiple=True,
                     help="With --cluster slurm: an sbatch option passed as it is (repeatable), e.g. --account=ling."),
        click.option("--wait/--no-wait", "slurm_wait", default=True, show_default=True,
                     help="With --cluster slurm: wait for the jobs, showing the tasks done per phase, and fail "
                          "naming a task that failed; --no-wait submits and returns."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def options_from_cli(slurm_partition: str | None, slurm_time: str | None, slurm_mem: str | None, slurm_cpus: int,
                     slurm_shards_per_task: int, slurm_extra: Sequence[str], slurm_wait: bool) -> SlurmOptions:
    """SlurmOptions from the values of ``slurm_click_options``."""
    return SlurmOptions(partition=slurm_partition, time=slurm_time, mem=slurm_mem, cpus=slurm_cpus,
                        shards_per_task=slurm_shards_per_task, extra=tuple(slurm_extra), wait=slurm_wait)
