"""Spark's own row counts for a run, mapped onto the answer's plan and sent to ``POST /feedback/{request_id}``.

Standard library and PySpark only, so it runs wherever the client's Spark runner does (an orchestrator's
environment without the service): ``spark`` reads the status store, ``graph`` holds its plan graph, ``mapping``
maps it onto the answer's nodes, ``runner`` copies, maps and sends. The service stores and learns from what is
sent (``service.feedback``).
"""
