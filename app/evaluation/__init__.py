"""Evaluation: relevance sets, metrics, runs over the real search path, the rating page."""
