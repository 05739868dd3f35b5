"""The cluster path of ``cowbird build`` (``cowbird.build.slurm``): the scripts, the submission with its
dependencies, waiting and failures — through a real single-host SLURM (``tests/slurm.py``) — and a
corpus built through it, byte for byte the local build's."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from cowbird.build import slurm
from cowbird.build.slurm import (
    PHASES,
    PhaseJob,
    SlurmError,
    SlurmOptions,
    Submission,
    array_spec,
    expand_array,
    job_name,
    options_from_cli,
    parse_scontrol,
    slurm_click_options,
    submit_build,
    task_count,
    task_shards,
    wait_for,
    write_script,
)
from tests.build import pages
from tests.slurm import SlurmCluster, slurm_cluster_fixture  # noqa: F401  (the fixture slurm_cluster)

# ---------------------------------------------------------------------------------------------------------
# without SLURM: the arithmetic and the scripts


def test_tasks_cover_every_shard_once() -> None:
    for shards in (1, 2, 7, 30):
        for per in (1, 2, 4, 64):
            count = task_count("clean", shards, per)
            covered = [k for t in range(count) for k in task_shards(t, shards, per)]
            assert covered == list(range(shards))
            assert all(task_shards(t, shards, per) for t in range(count))  # no task without a shard
    assert task_count("dedup", 30, 2) == 1 and task_count("encode", 1, 1) == 1
    assert task_count("annotate", 29_800, 3) == 9_934  # the Common Crawl thesis: ~9,900 jobs


def test_array_specs_round_trip() -> None:
    assert array_spec([0]) == "0"
    assert array_spec([0, 1, 2, 3]) == "0-3"
    assert array_spec([7, 0, 1, 9, 10, 3]) == "0-1,3,7,9-10"
    assert expand_array("0-1,3,7,9-10") == [0, 1, 3, 7, 9, 10]
    assert expand_array("1-4%2") == [1, 2, 3, 4]  # a throttle is no task
    assert expand_array("0-6:3") == [0, 3, 6]


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="--slurm-shards-per-task must be at least 1, not 0"):
        SlurmOptions(shards_per_task=0)
    with pytest.raises(ValueError, match="--slurm-cpus must be at least 1, not -2"):
        SlurmOptions(cpus=-2)


def test_the_command_line_options_make_slurm_options() -> None:
    seen: list[SlurmOptions] = []

    @click.command()
    @slurm_click_options
    def build(**values: Any) -> None:
        seen.append(options_from_cli(**values))

    argv = ["--slurm-partition", "short", "--slurm-time", "1:00:00", "--slurm-mem", "6G", "--slurm-cpus", "3",
            "--slurm-shards-per-task", "4", "--slurm-option", "--account=ling", "--slurm-option", "--qos=low",
            "--no-wait"]
    assert CliRunner().invoke(build, argv).exit_code == 0
    assert seen == [SlurmOptions(partition="short", time="1:00:00", mem="6G", cpus=3, shards_per_task=4,
                                 extra=("--account=ling", "--qos=low"), wait=False)]
    refused = CliRunner().invoke(build, ["--slurm-shards-per-task", "0"])
    assert refused.exit_code == 2 and "--slurm-shards-per-task" in refused.output


def test_job_names_are_safe() -> None:
    assert job_name("clean", "cow-en 2026/1") == "cowbird-cow-en_2026_1-clean"
    assert job_name("encode", "") == "cowbird-encode"


def test_scontrol_records_are_read() -> None:
    text = ("JobId=14 ArrayJobId=12 ArrayTaskId=2 JobName=cowbird-clean UserId=root(0) JobState=FAILED "
            "Reason=NonZeroExitCode Dependency=(null) ExitCode=1:0 StdOut=/o/cowbird-clean-12_2.out\n"
            "JobId=12 ArrayJobId=12 ArrayTaskId=3-5 JobName=cowbird-clean JobState=PENDING Reason=Resources "
            "ExitCode=0:0\n")
    records = parse_scontrol(text)
    assert [(r["ArrayTaskId"], r["JobState"], r["ExitCode"], r["Reason"]) for r in records] == [
        ("2", "FAILED", "1:0", "NonZeroExitCode"), ("3-5", "PENDING", "0:0", "Resources")]


def test_scripts_are_valid_bash_and_say_what_they_run(tmp_path: Path) -> None:
    options = SlurmOptions(partition="short", time="2:00:00", mem="3G", cpus=2, shards_per_task=3)
    for phase in PHASES:
        script = write_script(tmp_path, phase, 7, options, ["/opt/py/bin/python", "-m", "cowbird", "build",
                                                             "step"], "cow en")
        assert script == tmp_path / "work" / "slurm" / f"{phase}.sbatch"
        assert script.stat().st_mode & stat.S_IXUSR
        text = script.read_text()
        subprocess.run(["bash", "-n", str(script)], check=True)
        assert f"#SBATCH --job-name=cowbird-cow_en-{phase}\n" in text
        assert f"#SBATCH --output={tmp_path}/work/slurm/logs/%x-%A_%a.out\n" in text
        assert "#SBATCH --partition=short\n#SBATCH --time=2:00:00\n#SBATCH --mem=3G\n" in text
        assert "#SBATCH --cpus-per-task=2\n" in text
        if phase in ("clean", "annotate"):
            assert f'/opt/py/bin/python -m cowbird build step {phase} {tmp_path} --shard "$1"' in text
            assert "SHARDS=7\nPER_TASK=3\n" in text
            assert f"sbatch --array=0-2 {script}" in text  # the comment saying how to resubmit
        else:
            assert f"exec /opt/py/bin/python -m cowbird build step {phase} {tmp_path}\n" in text


def test_a_script_runs_its_group_of_shards_and_fails_when_one_fails(tmp_path: Path) -> None:
    """The script's own shell logic, without SLURM: task 1 of 7 shards in threes runs shards 3, 4, 5 (two
    at once, as --cpus-per-task=2 allows) and exits 1 because shard 4 failed, after running the others."""
    step = fake_step(tmp_path, fail={"clean-4"})
    script = write_script(tmp_path, "clean", 7, SlurmOptions(cpus=2, shards_per_task=3), step, "")
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": "1", "SLURM_CPUS_PER_TASK": "2"}
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert sorted(ran(tmp_path)) == ["clean-3", "clean-4", "clean-5"]
    assert "cowbird build: clean shard 4 failed (exit 1)" in done.stderr
    env["SLURM_ARRAY_TASK_ID"] = "2"  # the last task has one shard
    assert subprocess.run(["bash", str(script)], env=env, capture_output=True).returncode == 0
    assert sorted(ran(tmp_path)) == ["clean-3", "clean-4", "clean-5", "clean-6"]


def test_without_sbatch_it_says_where_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SlurmError, match="sbatch is not on PATH: --cluster slurm submits through SLURM"):
        submit_build(tmp_path, 3, SlurmOptions(), step=["true"], echo=lambda _: None)


def fake_scontrol(folder: Path, answer: str, status: int) -> None:
    """An ``scontrol`` on PATH that gives one answer (on stderr when it fails, as the real one does)."""
    folder.mkdir(exist_ok=True)
    program = folder / "scontrol"
    stream = ">&2" if status else ""
    program.write_text(f"#!/bin/sh\necho '{answer}' {stream}\nexit {status}\n")
    program.chmod(0o755)


def a_submission(out: Path) -> Submission:
    options = SlurmOptions(shards_per_task=2, poll_seconds=0.01)
    jobs = [PhaseJob("clean", "41", "cowbird-clean", (0, 1), out / "clean.sbatch"),
            PhaseJob("dedup", "42", "cowbird-dedup", (0,), out / "dedup.sbatch")]
    return Submission(out=out, shards=3, options=options, jobs=jobs)


def test_jobs_slurm_has_forgotten_are_judged_by_their_markers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_scontrol(tmp_path / "bin", "slurm_load_jobs error: Invalid job id specified", 1)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    markers = {("clean", 0), ("clean", 1), ("clean", 2), ("dedup", None)}
    messages: list[str] = []
    wait_for(a_submission(tmp_path), finished=lambda phase, shard: (phase, shard) in markers, echo=messages.append)
    assert messages[-1].startswith("slurm: tasks done: clean 2/2, dedup 1/1")
    markers.discard(("clean", 2))  # task 1 (shards 2-3 of 3: shard 2) left no marker
    with pytest.raises(SlurmError, match=r"SLURM task cowbird-clean 41_1 \(clean, shard 00002\) ended FAILED, "
                                         r"reason no marker after the job; its log: .*/cowbird-clean-41_1.out"):
        wait_for(a_submission(tmp_path), finished=lambda phase, shard: (phase, shard) in markers, echo=messages.append)
    with pytest.raises(SlurmError, match="SLURM no longer knows job 41 .clean; its records expire MinJobAge"):
        wait_for(a_submission(tmp_path), echo=messages.append)


def test_a_controller_that_does_not_answer_is_asked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_scontrol(tmp_path / "bin", "slurm_load_jobs error: Socket timed out on send/recv operation", 1)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(slurm, "MAX_TROUBLES", 3)
    messages: list[str] = []
    with pytest.raises(SlurmError, match=r"scontrol show job 41 failed: .*Socket timed out.* \(3 times in a row\); "
                                         r"the jobs go on"):
        wait_for(a_submission(tmp_path), echo=messages.append, sleep=lambda _: None)
    assert len(messages) == 2 and "asking again" in messages[0]


# ---------------------------------------------------------------------------------------------------------
# through a real SLURM, with a stand-in step


def fake_step(root: Path, fail: Collection[str] = ()) -> list[str]:
    """A step command that records each call in ``root/ran/PHASE-SHARD`` (the time order kept by a
    sequence file) and exits 1 for the calls named in ``fail``."""
    (root / "ran").mkdir(exist_ok=True)
    program = root / "step.py"
    program.write_text(textwrap.dedent(f"""\
        import sys, time
        from pathlib import Path
        phase, out = sys.argv[1], sys.argv[2]
        shard = sys.argv[4] if len(sys.argv) > 4 else "all"
        name = f"{{phase}}-{{shard}}"
        with open({str(root / "order.txt")!r}, "a") as order:
            order.write(name + "\\n")
        Path({str(root / "ran")!r}, name).write_text(out)
        print("step", name, "in", out)
        sys.exit(1 if name in {sorted(fail)!r} else 0)
        """))
    return [sys.executable, str(program)]


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A build's output folder, made."""
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def wait_for_no_jobs(cluster: SlurmCluster, seconds: float = 30) -> None:
    """Until no job of ``cluster`` is queued or running, ``seconds`` at most (scancel takes a moment)."""
    deadline = time.monotonic() + seconds
    while cluster.jobs() and time.monotonic() < deadline:
        time.sleep(0.2)


def ran(root: Path) -> list[str]:
    return [p.name for p in (root / "ran").iterdir()]


def order(root: Path) -> list[str]:
    return (root / "order.txt").read_text().split()


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_phases_run_as_dependent_array_jobs(slurm_cluster: SlurmCluster, tmp_path: Path, out: Path) -> None:
    messages: list[str] = []
    options = SlurmOptions(partition=slurm_cluster.partition, time="10:00", mem="200M", shards_per_task=2,
                           poll_seconds=0.5, extra=("--nice=0",))
    submission = submit_build(out, 5, options, name="demo", step=fake_step(tmp_path), echo=messages.append)
    assert [(j.phase, j.tasks) for j in submission.jobs] == [
        ("clean", (0, 1, 2)), ("dedup", (0,)), ("annotate", (0, 1, 2)), ("encode", (0,))]
    steps = order(tmp_path)
    assert sorted(steps[:5]) == [f"clean-{k}" for k in range(5)]
    assert steps[5] == "dedup-all"
    assert sorted(steps[6:11]) == [f"annotate-{k}" for k in range(5)]
    assert steps[11:] == ["encode-all"]
    assert all((tmp_path / "ran" / s).read_text() == str(out) for s in steps)
    assert messages[-1].startswith("slurm: tasks done: clean 3/3, dedup 1/1, annotate 3/3, encode 1/1")
    clean = submission.jobs[0]
    assert "step clean-4 in" in clean.log(out, 2).read_text()
    assert clean.log(out, 2) == out / "work" / "slurm" / "logs" / f"cowbird-demo-clean-{clean.job_id}_2.out"
    # the dependencies SLURM was given: each phase afterok the one before
    first = parse_scontrol(slurm_cluster.run("scontrol", "--oneliner", "show", "job", submission.jobs[1].job_id))
    assert first[0]["JobName"] == "cowbird-demo-dedup" and first[0]["JobState"] == "COMPLETED"
    submit = (out / "work" / "slurm" / "submit.sh").read_text()
    assert '--dependency=afterok:"$clean"' in submit and "--array=0-2" in submit
    subprocess.run(["bash", "-n", str(out / "work" / "slurm" / "submit.sh")], check=True)


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_failed_task_is_named_with_its_log(slurm_cluster: SlurmCluster, tmp_path: Path, out: Path) -> None:
    options = SlurmOptions(shards_per_task=2, poll_seconds=0.5, mem="200M")
    with pytest.raises(SlurmError) as failure:
        submit_build(out, 5, options, step=fake_step(tmp_path, fail={"clean-3"}), echo=lambda _: None)
    message = str(failure.value)
    assert "SLURM task cowbird-clean " in message and "_1 (clean, shards 00002-00003) ended FAILED (exit code 1:0)" \
        in message
    log = out / "work" / "slurm" / "logs"
    assert f"its log: {log}/cowbird-clean-" in message
    assert "cowbird build: clean shard 3 failed (exit 1)" in message  # the log's last lines are shown
    assert "Run the same cowbird build again to resume" in message
    assert "dedup-all" not in order(tmp_path)  # the later phases never ran: they were cancelled
    wait_for_no_jobs(slurm_cluster)
    assert slurm_cluster.jobs() == []


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_build_whose_jobs_still_run_is_not_submitted_twice(
        slurm_cluster: SlurmCluster, tmp_path: Path, out: Path) -> None:
    held = SlurmOptions(wait=False, extra=("--hold",), mem="200M")
    first = submit_build(out, 3, held, step=fake_step(tmp_path), echo=lambda _: None)
    ids = [job.job_id for job in first.jobs]
    assert (out / "work" / "slurm" / "jobs.tsv").read_text().splitlines() == [
        "phase\tjob\ttasks", f"clean\t{ids[0]}\t0-2", f"dedup\t{ids[1]}\t0", f"annotate\t{ids[2]}\t0-2",
        f"encode\t{ids[3]}\t0"]
    with pytest.raises(SlurmError, match=rf"jobs of this build are still queued or running \({', '.join(ids)}; "
                                         r".*jobs.tsv\): wait for them to end, or scancel them"):
        submit_build(out, 3, held, step=fake_step(tmp_path), echo=lambda _: None)
    slurm_cluster.run("scancel", *ids)
    wait_for_no_jobs(slurm_cluster)
    again = submit_build(out, 3, SlurmOptions(poll_seconds=0.5, mem="200M"), step=fake_step(tmp_path),
                         echo=lambda _: None)
    assert len(again.jobs) == 4 and order(tmp_path)[-1] == "encode-all"


@pytest.mark.e2e
def test_the_test_cluster_listens_on_loopback_only(slurm_cluster: SlurmCluster) -> None:
    conf = slurm_cluster.conf.read_text()
    ports = {int(p) for p in re.findall(r"^Slurm(?:ctld|d)Port=(\d+)$", conf, re.MULTILINE)}
    assert len(ports) == 2
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port = local.rsplit(":", 1)
            if state == "0A" and int(port, 16) in ports:  # 0A: LISTEN
                listening.append(address)
    assert sorted(listening) == ["0100007F", "0100007F"]  # 127.0.0.1, twice: not 0.0.0.0 nor ::


@pytest.mark.e2e
def test_more_tasks_than_the_cluster_allows_say_how_many_shards_per_task(
        slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    with pytest.raises(SlurmError, match=r"2003 shards at 2 per task make 1002 array tasks, more than this "
                                         r"cluster's MaxArraySize of 1001 \(scontrol show config\): use "
                                         r"--slurm-shards-per-task 3 or more"):
        submit_build(tmp_path, 2003, SlurmOptions(shards_per_task=2), step=["true"], echo=lambda _: None)
    assert slurm_cluster.jobs() == [] and not (tmp_path / "work").exists()  # nothing submitted or written


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_resubmission_runs_only_what_is_left(slurm_cluster: SlurmCluster, tmp_path: Path, out: Path) -> None:
    messages: list[str] = []
    pending = {"clean": {4}, "dedup": {0}, "annotate": {0, 1, 2, 3, 4}, "encode": {0}}
    submission = submit_build(out, 5, SlurmOptions(shards_per_task=2, poll_seconds=0.5, mem="200M"),
                              step=fake_step(tmp_path), pending=pending, echo=messages.append)
    assert [(j.phase, j.tasks) for j in submission.jobs] == [
        ("clean", (2,)), ("dedup", (0,)), ("annotate", (0, 1, 2)), ("encode", (0,))]
    assert order(tmp_path)[0] == "clean-4" and order(tmp_path).count("clean-4") == 1
    assert not any(s in order(tmp_path) for s in ("clean-0", "clean-1", "clean-2", "clean-3"))
    nothing = {"clean": set(), "dedup": set(), "annotate": {3}, "encode": {0}}
    again = submit_build(out, 5, SlurmOptions(shards_per_task=2, poll_seconds=0.5, mem="200M"),
                         step=fake_step(tmp_path), pending=nothing, echo=messages.append)
    assert [(j.phase, j.tasks) for j in again.jobs] == [("annotate", (1,)), ("encode", (0,))]
    assert "slurm: clean: nothing left to do" in messages and "slurm: dedup: nothing left to do" in messages


# ---------------------------------------------------------------------------------------------------------
# a corpus built through SLURM: the same bytes as the local build


def corpus_inputs(folder: Path) -> list[Path]:
    """Three WARC files of ten generated pages each (English and German, some near copies): three shards."""
    folder.mkdir()
    every = pages.make_pages(66, 30)
    return [pages.write_warc(folder / f"crawl-{k}.warc.gz", every[k * 10:(k + 1) * 10]) for k in range(3)]


def cowbird(*argv: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``python -m cowbird ...`` as a user runs it (the SLURM tasks run the same Python)."""
    return subprocess.run([sys.executable, "-m", "cowbird", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def built_files(out: Path) -> dict[str, bytes]:
    """A build's output as bytes per relative path: the VRT, the encoded data, the registry and manifest (with
    the output folder's own path taken out: two builds live in two folders), not the work folder."""
    files: dict[str, bytes] = {}
    for path in sorted(out.rglob("*")):
        relative = path.relative_to(out).as_posix()
        if not path.is_file() or relative.startswith("work/") or relative in ("build.json", "report.html"):
            continue
        files[relative] = path.read_bytes().replace(str(out).encode(), b"OUT")
    return files


SLURM_ARGS = ("--cluster", "slurm", "--slurm-mem", "1500M", "--slurm-shards-per-task", "2", "--slurm-time", "20:00")


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_corpus_built_through_slurm_is_the_local_build_byte_for_byte(
        slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    inputs = corpus_inputs(tmp_path / "in")
    local = cowbird("build", *inputs, "-o", tmp_path / "local", "--name", "webtest", "--jobs", "2")
    assert local.returncode == 0, local.stderr
    through = cowbird("build", *inputs, "-o", tmp_path / "slurm", "--name", "webtest", *SLURM_ARGS,
                      "--slurm-partition", slurm_cluster.partition)
    assert through.returncode == 0, through.stdout + through.stderr
    output = through.stdout + through.stderr
    assert "slurm: clean: job " in output and "slurm: tasks done: clean 2/2, dedup 1/1, annotate 2/2, encode 1/1" \
        in output
    ours, theirs = built_files(tmp_path / "slurm"), built_files(tmp_path / "local")
    assert "webtest.vrt.gz" in ours and any(name.startswith("data/") for name in ours)
    assert sorted(ours) == sorted(theirs)
    for name in ours:
        assert ours[name] == theirs[name], f"{name} differs between the SLURM and the local build"
    logs = sorted(p.name for p in (tmp_path / "slurm" / "work" / "slurm" / "logs").iterdir())
    assert len(logs) == 6 and all(re.fullmatch(r"cowbird-webtest-(clean|dedup|annotate|encode)-\d+_\d\.out", n)
                                  for n in logs)
    # submitted again, nothing is left to do: no job at all
    again = cowbird("build", *inputs, "-o", tmp_path / "slurm", "--name", "webtest", *SLURM_ARGS)
    assert again.returncode == 0, again.stderr
    assert all(f"slurm: {phase}: nothing left to do" in again.stdout for phase in PHASES), again.stdout
    assert "job" not in again.stdout.split("built webtest")[0]
    assert built_files(tmp_path / "slurm") == ours


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_an_input_gone_before_its_task_runs_fails_that_task_by_name(
        slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    """The jobs are submitted held; an input file is removed; released, its clean task fails and the build
    names it and its log; with the file back, the same command resumes and finishes."""
    inputs = corpus_inputs(tmp_path / "in")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "cowbird", "build", *map(str, inputs), "-o", str(out), "--name", "webtest",
               *SLURM_ARGS, "--slurm-shards-per-task", "1", "--slurm-option=--hold"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as build:
        deadline = time.monotonic() + 120
        while len(slurm_cluster.jobs()) < 4:  # the four phases submitted, held
            assert build.poll() is None and time.monotonic() < deadline, "the jobs were not submitted"
            time.sleep(0.2)
        kept = inputs[1].read_bytes()
        inputs[1].unlink()
        slurm_cluster.run("scontrol", "release", *slurm_cluster.jobs())
        output, _ = build.communicate(timeout=600)
    assert build.returncode != 0, output
    assert re.search(r"SLURM task cowbird-webtest-clean \d+_1 \(clean, shard 00001\) ended FAILED \(exit code "
                     r"\d+:0\); its log: \S+/work/slurm/logs/cowbird-webtest-clean-\d+_1\.out", output), output
    assert "cowbird build: clean shard 1 failed" in output
    inputs[1].write_bytes(kept)
    resumed = cowbird("build", *inputs, "-o", out, "--name", "webtest", *SLURM_ARGS, "--slurm-shards-per-task", "1")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    clean = re.search(r"slurm: clean: job \d+, (\d+) tasks?", resumed.stdout)
    assert clean is not None and int(clean.group(1)) < 3, resumed.stdout  # the shards finished before: not again
    assert (out / "webtest.vrt.gz").is_file()
