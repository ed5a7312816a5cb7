"""Emit-time gates: citations checked against the live source, answers against retrievals."""
