"""Adapting the embedding model to the firm's own corpus (``ewall model adapt``)."""
