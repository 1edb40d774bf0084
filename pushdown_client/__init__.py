"""The pushdown service's typed Python client and its Spark runner, installable without the service.

``PushdownClient`` calls a running service over HTTP with the standard library only, or, without a URL, any
``Transport`` (the service's own runs the service in this process: ``service.client.in_process_client()``);
``run_sql`` (``pushdown_client.spark_runner``, needs PySpark) runs an answer on a SparkSession so that Spark keeps
the placement; ``optimize_dataframe`` and ``run_dataframe`` (``pushdown_client.dataframe``) do it for a DataFrame
pipeline (docs/dataframe.md). The service re-exports the client and the runner as ``service.client`` and
``service.spark_runner``, with the in-process transport as the default of a client without a URL.
"""

from pushdown_client.client import (
    Answer,
    CostJson,
    FunctionSpec,
    Mode,
    PushdownClient,
    PushdownError,
    SparkTargetJson,
    Transport,
    optimize_request,
)
from pushdown_client.dataframe import SparkConnectUnsupported, optimize_dataframe, run_dataframe

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "CostJson",
    "FunctionSpec",
    "Mode",
    "PushdownClient",
    "PushdownError",
    "SparkConnectUnsupported",
    "SparkTargetJson",
    "Transport",
    "optimize_dataframe",
    "optimize_request",
    "run_dataframe",
]
