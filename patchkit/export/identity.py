"""Who authors, commits and signs off an exported commit.

An identity is one line, ``Name <email>``: a name without line breaks, control characters or
angle brackets, and one address. Anything else (an imported author spread over lines, which
would become forged ``Signed-off-by:`` or ``Reviewed-by:`` trailers) is no identity."""

from __future__ import annotations

from dataclasses import dataclass

from patchkit.errors import ConfigError, shown
from patchkit.trust.names import one_line_identity


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    @property
    def is_a_person(self) -> bool:
        """An address at ``localhost`` is a machine's, never a person's: it signs and credits
        nothing upstream."""
        return not self.email.lower().endswith(("@localhost", ".localhost"))

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"

    @classmethod
    def parse(cls, text: str) -> Identity:
        match = one_line_identity(text)
        if not match:
            raise ConfigError(
                f"{shown(text)} is not an identity of the form 'Name <email>' on one line",
                hint="pass --identity 'Your Name <you@example.com>' (the DCO sign-off uses it)",
            )
        return cls(match.group("name"), match.group("email"))
