"""Local fakes of outside services (real HTTP servers on 127.0.0.1)."""
