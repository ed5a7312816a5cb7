"""The console: server-rendered pages for the conflicts partner and compliance."""
