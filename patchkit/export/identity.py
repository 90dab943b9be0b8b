"""Who authors, commits and signs off an exported commit."""

from __future__ import annotations

import re
from dataclasses import dataclass

from patchkit.errors import ConfigError, shown

IDENTITY = re.compile(r"^\s*(?P<name>[^<>]*?)\s*<(?P<email>[^<>\s]+@[^<>\s]+)>\s*$")


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"

    @classmethod
    def parse(cls, text: str) -> Identity:
        match = IDENTITY.match(text)
        if not match or not match.group("name"):
            raise ConfigError(
                f"{shown(text)} is not an identity of the form 'Name <email>'",
                hint="pass --identity 'Your Name <you@example.com>' (the DCO sign-off uses it)",
            )
        return cls(match.group("name"), match.group("email"))
