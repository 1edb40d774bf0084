"""HTTP layer: the FastAPI app, its routes, wire models and error mapping."""
