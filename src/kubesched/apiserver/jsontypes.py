"""JSON as the API server reads and writes it."""

JsonObject = dict[str, object]
"""A JSON object: a request body or its options decoded, or a document built to answer with."""
