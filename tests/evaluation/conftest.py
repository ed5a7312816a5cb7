"""Fixtures for the evaluation tests: the root `client` fixture serves the app exactly as
create_app builds it; nothing here adds a router, so a router dropped from app/api.py fails
these tests.
"""
