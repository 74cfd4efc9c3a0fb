"""Experiment grids (docs/explanation/experiments.md#experiments) from Python, in this process or as Dask tasks.

    import boostlab.experiment
    from distributed import Client

    summary = boostlab.experiment.run("experiments/tadaboost.toml", "results/tada",
                                      client=Client("tcp://scheduler:8786"))

The spec, the results directory and the records are those of ``boostlab experiment``: the client
opens the directory (``spec.json`` written or checked, cells already recorded are skipped), the
pending cells go to the workers in batches — the cells of one (dataset, fold) together, so that
a worker splits and bins that fold once — each task runs the Rust cell runner on the spec's text
and returns the records, and the client writes each record atomically as its task completes.
A cell's record depends only on the spec and the cell, so a Dask run, a local run and any mix of
the two (a run interrupted and resumed by the other) give the same records. The workers read the
datasets themselves: their paths (relative to the spec file) must be readable on every worker.

The command line runs the same code: ``boostlab experiment SPEC.toml --dask ADDRESS`` executes
``python3 -m boostlab.experiment SPEC.toml --dask ADDRESS --out DIR``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ._boostlab import ExperimentRun, experiment_run_cells

__all__ = ["RunSummary", "run"]

# Cells per task: large enough that a task outweighs Dask's per-task cost (~1 ms), small enough
# that an interruption loses little and the workers stay balanced.
DEFAULT_BATCH_SIZE = 32


@dataclass
class RunSummary:
    """What :func:`run` did (the fields of the Rust ``RunSummary``)."""

    total: int
    already_done: int
    completed: int = 0
    #: ``(cell key, message)`` of every cell that failed; they are not recorded and run again on
    #: the next run.
    failures: list = field(default_factory=list)

    @property
    def is_complete(self) -> bool:
        """True when every cell of the experiment is recorded."""
        return not self.failures and self.already_done + self.completed == self.total


class _Progress:
    """The command line's progress display: a bar of cells on a terminal, else one line per 10 %."""

    def __init__(self, total: int, done: int, quiet: bool):
        self.total, self.done, self.quiet = total, done, quiet
        self.tty = not quiet and sys.stderr.isatty()
        self.start = time.monotonic()
        self.first = done
        self.decile = done * 10 // max(total, 1)
        self._draw()

    def _draw(self) -> None:
        if not self.tty:
            return
        el = time.monotonic() - self.start
        width = 40
        fill = width * self.done // max(self.total, 1)
        bar = "=" * fill + (">" if fill < width else "") + " " * max(width - fill - 1, 0)
        ran = self.done - self.first
        eta = el / ran * (self.total - self.done) if ran else 0.0
        hms = lambda s: time.strftime("%H:%M:%S", time.gmtime(s))  # noqa: E731
        sys.stderr.write(f"\r{hms(el)} [{bar}] {self.done}/{self.total} cells, ETA {hms(eta)}")
        sys.stderr.flush()

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._draw()
        if not self.tty and not self.quiet:
            decile = self.done * 10 // max(self.total, 1)
            if decile > self.decile:
                self.decile = decile
                print(f"{self.done}/{self.total} cells, {time.monotonic() - self.start:.0f} s", file=sys.stderr)

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


def _run_batch(spec_text: str, base_dir: str, indices: list, n_threads: int) -> list:
    """A Dask task: runs cells by index with the Rust cell runner; ``(index, record, error)``."""
    return experiment_run_cells(spec_text, base_dir, list(indices), n_threads)


def _batches(pending: list, batch_size: int) -> list:
    """Pending cells grouped by (dataset, fold), in cell order, cut into batches of at most
    ``batch_size`` cell indices."""
    groups: dict = {}
    for index, _key, dataset, fold in pending:
        groups.setdefault((dataset, fold), []).append(index)
    out: list[list[int]] = []
    for idx in groups.values():
        out.extend(idx[i : i + batch_size] for i in range(0, len(idx), batch_size))
    return out


def _spec_name(text: str) -> str:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        raise ValueError(
            "give `out` (the results directory): reading the spec's name needs Python ≥ 3.11"
        ) from None
    return tomllib.loads(text).get("name", "")


def _default_client(client):
    if isinstance(client, str) and client == "local":
        return None
    if client is not None:
        return client
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


def run(
    spec,
    out=None,
    client=None,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    threads_per_task: int = 1,
    quiet: bool = True,
    stop_after: int | None = None,
) -> RunSummary:
    """Runs every cell of the experiment ``spec`` not yet recorded in ``out``.

    Parameters
    ----------
    spec : str or os.PathLike
        The spec file (TOML, the format of ``boostlab experiment``; relative dataset paths are
        relative to its directory).
    out : str or os.PathLike, optional
        Results directory. By default ``results/<spec name>``.
    client : distributed.Client or "local", optional
        Where the cells run: one Dask task per batch of cells. By default the current default
        client, or, when there is none (or ``distributed`` is not installed), this process;
        ``"local"``: this process, even when there is a default client.
    batch_size : int
        At most this many cells per task; a task holds cells of one (dataset, fold). Default 32.
    threads_per_task : int
        Threads of each task (cells of a batch in parallel). Default 1: Dask runs one task per
        worker thread. Results do not depend on it.
    quiet : bool
        Print nothing (default). ``False`` prints what ``boostlab experiment`` prints: the plan, a
        progress bar of cells (one line per 10 % when standard error is not a terminal), the summary.
    stop_after : int, optional
        Testing aid: once this many cells are recorded by this run, cancel the remaining tasks and
        return, as if the run had been killed.

    Returns
    -------
    RunSummary
        Cells already recorded, run now, and failed (a failed cell is not recorded; the next run
        retries it). Raises ``ValueError`` / ``OSError`` for harness problems: an invalid spec or
        parameters, an unreadable results directory, or one created by a different spec.
    """
    if batch_size < 1:
        raise ValueError(f"invalid parameter `batch_size`: expected an integer ≥ 1, got {batch_size}")
    if threads_per_task < 1:
        raise ValueError(f"invalid parameter `threads_per_task`: expected an integer ≥ 1, got {threads_per_task}")
    spec_path = Path(spec)
    text = spec_path.read_text(encoding="utf-8")
    base_dir = str(spec_path.resolve().parent)
    if out is None:
        out = Path("results") / _spec_name(text)
    out = Path(out)
    exp = ExperimentRun(text, base_dir, str(out))
    pending = exp.pending()
    summary = RunSummary(total=exp.total, already_done=exp.total - len(pending))
    client = _default_client(client)
    address = getattr(getattr(client, "scheduler", None), "address", "?")
    where = f"Dask ({address})" if client is not None else "this process"
    if not quiet:
        print(f"{exp.name}: {exp.total} cells, on {where} → {out}", file=sys.stderr)
    progress = _Progress(exp.total, summary.already_done, quiet)
    keys = {index: key for index, key, _d, _f in pending}
    batches = _batches(pending, batch_size)
    start = time.monotonic()

    def take(results) -> bool:
        """Records one task's results; True when the run should stop (``stop_after``)."""
        for index, record, error in results:
            if record is not None:
                try:
                    exp.write(record)
                    summary.completed += 1
                except (OSError, ValueError) as e:
                    summary.failures.append((keys[index], str(e)))
            else:
                summary.failures.append((keys[index], error))
            progress.advance()
        return stop_after is not None and summary.completed >= stop_after

    try:
        if client is None:
            for batch in batches:
                if take(experiment_run_cells(text, base_dir, batch, threads_per_task)):
                    break
        else:
            from distributed import as_completed

            futures = [
                client.submit(_run_batch, text, base_dir, batch, threads_per_task, pure=False) for batch in batches
            ]
            batch_of = {f.key: b for f, b in zip(futures, batches)}
            try:
                for fut in as_completed(futures):
                    try:
                        results = fut.result()
                    except Exception as e:  # a task that failed (e.g. its worker died too often)
                        msg = f"Dask task failed: {type(e).__name__}: {e}"
                        results = [(i, None, msg) for i in batch_of[fut.key]]
                    if take(results):
                        break
            finally:
                # Interrupted, stopped or failed: no task is left running on the cluster.
                client.cancel([f for f in futures if not f.done()])
                del futures
    finally:
        progress.close()
        exp.finish()
    order = {key: index for index, key, _d, _f in pending}
    summary.failures.sort(key=lambda f: order.get(f[0], 0))
    if not quiet:
        print(
            f"{summary.total} cells: {summary.already_done} already recorded, {summary.completed} run now, "
            f"{len(summary.failures)} failed; {time.monotonic() - start:.1f} s",
            file=sys.stderr,
        )
    return summary


def main(argv=None) -> int:
    """``python -m boostlab.experiment SPEC [--dask ADDRESS] [--out DIR]``: exit status 0 when
    every cell is recorded, 1 when cells failed (rerun to retry them), 2 for a usage problem."""
    p = argparse.ArgumentParser(prog="python -m boostlab.experiment", description=(run.__doc__ or "\n").splitlines()[0])
    p.add_argument("spec", help="the experiment spec (TOML)")
    p.add_argument("--out", "-o", help="results directory (default results/<spec name>)")
    p.add_argument("--dask", metavar="ADDRESS", help="Dask scheduler address (default: run in this process)")
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="cells per task (default 32)")
    p.add_argument("--threads-per-task", type=int, default=1, help="threads of each task (default 1)")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    p.add_argument("--stop-after", type=int, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    client = None
    if a.dask:
        try:
            from distributed import Client
        except ImportError:
            print("error: --dask needs the `distributed` package: pip install 'boostlab[dask]'", file=sys.stderr)
            return 2
        try:
            client = Client(a.dask, timeout="30s")
        except OSError as e:
            print(f"error: cannot reach the Dask scheduler at {a.dask}: {e}", file=sys.stderr)
            return 2
    try:
        s = run(
            a.spec,
            a.out,
            client,
            batch_size=a.batch_size,
            threads_per_task=a.threads_per_task,
            quiet=a.quiet,
            stop_after=a.stop_after,
        )
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            client.close()
    groups: dict = {}
    for key, msg in s.failures:
        groups.setdefault(msg, []).append(key)
    for msg, keys in list(groups.items())[:20]:
        more = f" and {len(keys) - 1} more cells" if len(keys) > 1 else ""
        print(f"failed: {keys[0]}{more}: {msg}", file=sys.stderr)
    if s.failures:
        print(f"error: {len(s.failures)} cells failed (rerun the same command to retry them)", file=sys.stderr)
        return 1
    if a.stop_after is not None and not s.is_complete:
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
