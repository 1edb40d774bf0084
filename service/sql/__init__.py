"""SQL adapter: wire plan <-> SQL text, pure functions with no I/O.

``sql_to_plan`` turns a query into the naive, faithful wire plan the cost model
optimises; ``plan_to_sql`` renders any wire plan back to SQL for Spark or
DuckDB. Both raise ``SqlError`` for input they cannot translate faithfully.
"""

from service.sql.errors import SqlError
from service.sql.to_plan import sql_to_plan
from service.sql.to_sql import plan_to_sql

__all__ = ["SqlError", "plan_to_sql", "sql_to_plan"]
