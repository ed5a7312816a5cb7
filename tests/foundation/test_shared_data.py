"""Missing outside inputs fail under CI=true and skip only on a developer's machine."""

from __future__ import annotations

import pytest

from tests.shared_data import in_ci, require


@pytest.mark.parametrize("value", ["true", "1", "yes", "TRUE"])
def test_missing_input_fails_in_ci(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    assert in_ci()
    with pytest.raises(pytest.fail.Exception, match="CI"):
        require(False, "../shared/corpus")


@pytest.mark.parametrize("value", [None, "", "false", "0"])
def test_missing_input_skips_on_a_developer_machine(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert not in_ci()
    with pytest.raises(pytest.skip.Exception):
        require(False, "../shared/corpus")


def test_present_input_neither_fails_nor_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    require(True, "../shared/corpus")
