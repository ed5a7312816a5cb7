"""A folder export's access list names principals as `<source>:user:<id>` or
`<source>:group:<id>`. Anything else matched nobody: "bob" in a deny lapsed for the person
whose alias is folder:user:bob, and the row was imported as if it screened him."""

from __future__ import annotations

import pytest

from connectors.folder.source import parse_acl


@pytest.mark.parametrize("key", ["allow", "deny"])
@pytest.mark.parametrize("principal", ["bob", "folder:bob", "folder:person:bob", "user:bob"])
def test_a_principal_out_of_form_is_bad_metadata(key: str, principal: str) -> None:
    with pytest.raises(ValueError, match=f"acl.{key}"):
        parse_acl({"default": "public", key: ["folder:user:alice", principal]})


def test_principals_in_form_are_read_lower_case() -> None:
    acl = parse_acl({"default": "public", "deny": [" Folder:User:Bob "], "allow": []})
    assert acl is not None and acl.deny == {"folder:user:bob"}
