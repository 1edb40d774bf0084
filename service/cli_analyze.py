"""``pushdown analyze``: analyze a table with Spark, with a progress bar, and store its statistics as a new version."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from service.cli_input import fail
from service.deep_json import dumps_at_any_depth
from service.errors import InputError
from service.settings import Settings


def analyze(
    path: Annotated[str, typer.Argument(help="A file or directory Spark reads (with --format table: a table name).")],
    name: Annotated[str, typer.Option("--name", help="Name the statistics are stored and referenced under.")],
    fmt: Annotated[str, typer.Option("--format", help="parquet, csv, orc, json, or table")] = "parquet",
    sample_rows: Annotated[
        int | None, typer.Option(min=0, help="Rows to sample (default: PUSHDOWN_ANALYZE_SAMPLE_ROWS or 100000)")
    ] = None,
    master: Annotated[str | None, typer.Option(help="Spark master (default: PUSHDOWN_SPARK_MASTER)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored summary as JSON.")] = False,
) -> None:
    """Analyze a table with Spark (statistics, containers, a sample) and store it as a new version."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from service.analyze import AnalyzeRequest, analyze_and_store, spark_session
    from service.jobs import error_message
    from service.statistics import StatisticsStore, check_name

    settings = Settings()
    try:
        check_name(name, "--name")
        request = AnalyzeRequest(
            name=name,
            path=None if fmt == "table" else path,
            table=path if fmt == "table" else None,
            format="parquet" if fmt == "table" else fmt,
            sample_rows=settings.analyze_sample_rows if sample_rows is None else sample_rows,
            histogram_buckets=settings.analyze_histogram_buckets,
            mcv_count=settings.analyze_mcv_count,
            seed=settings.analyze_seed,
        )
        store = StatisticsStore.from_settings(settings)
        if fmt != "table" and "://" not in path and not Path(path).exists():
            raise InputError("path_not_found", f"no file or directory at {path}", "PATH")
    except InputError as exc:
        fail(exc.message, exc.path)
    except ValueError as exc:
        fail(str(exc), "--format" if "format" in str(exc) else "$")
    err = Console(stderr=True)
    columns = (
        TextColumn("{task.description:<11}"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TextColumn("{task.fields[rows]:>12,} rows"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=not as_json) as bar:
        task = bar.add_task("starting", total=100, rows=0)

        def report(stage: str, rows: int, percent: float) -> None:
            bar.update(task, description=stage, completed=percent, rows=rows)

        try:
            summary = analyze_and_store(spark_session(master or settings.spark_master), request, store, report)
        except Exception as exc:  # Spark's errors (missing path, bad format) as one line, no JVM trace
            typer.echo(f"error: analyze failed: {error_message(exc)}", err=True)
            raise typer.Exit(1) from None
    if as_json:
        typer.echo(dumps_at_any_depth(summary, indent=2))
        return
    stored = store.get(name, summary["version"])
    stats = stored.stats if stored is not None else {}
    table = Table(
        title=f"{name} v{summary['version']}: {summary['row_count']:,} rows, "
        f"{summary['sample_rows']:,} sampled, {len(stats.get('containers', []))} containers, "
        f"{summary['duration_s']:.1f} s"
    )
    for header in ("column", "type", "nulls", "ndv", "min", "max"):
        table.add_column(header)
    for col in stats.get("columns", []):
        cs = stats.get("column_stats", {}).get(col["name"], {})
        table.add_row(col["name"], col["type"], *(str(cs.get(k, "-")) for k in ("null_count", "ndv", "min", "max")))
    Console().print(table)
