"""The README's PySpark example runs as printed, against a real server, on the shared Spark session."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from api.app import create_app

README = Path(__file__).resolve().parents[2] / "README.md"


def example() -> str:
    text = README.read_text()
    section = text[text.index("### PySpark") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_pyspark_example_runs(spark: Any, serve: Any, make_settings: Any, tmp_path: Path) -> None:
    code = example()
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    spark.createDataFrame(
        [(i, i % 50 if i % 13 else None, f"note {i}" if i % 7 else None) for i in range(2000)],
        "id INT, cid INT, note STRING",
    ).createOrReplaceTempView("orders")
    spark.createDataFrame(
        [(i, f"name {i}", "EU" if i % 5 == 0 else "US") for i in range(50)], "id INT, name STRING, region STRING"
    ).createOrReplaceTempView("customers")
    spark.sql("DROP TABLE IF EXISTS scored_orders")
    with serve(create_app(make_settings(data_dir=tmp_path))) as url:
        code = code.replace("http://localhost:8000", url)
        code = code.replace(
            'run.save_as_table("scored_orders")', f'run.save_as_table("scored_orders", path="{tmp_path / "out"}")'
        )
        scope: dict[str, Any] = {"score_comment": lambda note: note is not None and len(note) % 2 == 0}
        exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 (our own README)
    run = scope["run"]
    assert run.answer["spark"]["barriers"] == ["score(o.note)"]
    written = spark.table("scored_orders")
    assert written.columns == ["id", "name"]
    assert (
        written.count()
        == spark.sql(
            "SELECT o.id FROM orders o JOIN customers c ON o.cid = c.id WHERE c.region = 'EU' AND score(o.note)"
        ).count()
    )
    spark.sql("DROP TABLE IF EXISTS scored_orders")
