"""Who owns a run and who is asking. With a login (OpenID Connect), a user is the pair (issuer, subject): the ID
token's ``iss`` (the provider) and ``sub`` (the user's id there, unique and stable per issuer). An e-mail address is
never an identity: two providers may both vouch for ``ada@example.com``, and a provider that does not verify
addresses lets anyone claim one. The e-mail is kept only as the label lists show, and only when the provider says
it is verified (``email_verified``).

Runs saved before identities were stored (roofcore's first run database) carry only the text the app had then,
usually the e-mail: a *legacy* owner. Such a run is nobody's until a user whose provider verified that same e-mail
signs in; :meth:`RunStore.claim <roofcore.store.RunStore.claim>` then binds it to that user's (issuer, subject),
once: from then on it is theirs alone, whatever other provider vouches for the address later.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, or_, true

from ..errors import InputError
from ..safetext import clean
from .schema import RunRow

#: the longest issuer (a URL) and subject the store keeps (OpenID Connect: ``sub`` is at most 255 ASCII characters)
ISSUER_LIMIT, SUBJECT_LIMIT, LABEL_LIMIT = 500, 255, 320


@dataclass(frozen=True)
class Owner:
    """A run's owner: ``issuer`` and ``subject`` (both ``None``: a legacy owner, known only by ``label``), and
    ``label``, what lists show (the verified e-mail, else the name at the provider's host)."""

    issuer: str | None
    subject: str | None
    label: str = ""

    def __post_init__(self) -> None:
        if (self.issuer is None) != (self.subject is None):
            raise ValueError("an owner has both an issuer and a subject, or neither (a legacy owner)")
        if not self.label:
            object.__setattr__(self, "label", self.subject or "")

    @property
    def legacy(self) -> bool:
        """Saved before identities were stored: no issuer and subject, only a label (see the module's docstring)."""
        return self.subject is None

    def __str__(self) -> str:
        return self.label


def _true(value: object) -> bool:
    """``email_verified``: a JSON true (some providers send the string "true")."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def owner_from_claims(claims: Mapping[str, object], provider: str | None = None) -> tuple[Owner, str | None]:
    """The owner a signed-in user is, from their ID token's claims (Streamlit's ``st.user``), and their verified
    e-mail (``None`` unless ``email_verified`` is true). ``provider``: the app's name for the provider, the issuer
    when the claims carry none (a provider that answers only its userinfo endpoint)."""
    where = "sign-in"
    sub = claims.get("sub")
    if sub is None or not str(sub).strip():
        raise InputError(where=where, text="the identity provider sent no subject (the `sub` claim), so runs "
                         "cannot be told apart by user. Hint: use an OpenID Connect provider (the `openid` scope).")
    iss = claims.get("iss") or (f"streamlit-provider:{provider}" if provider else None)
    if not iss:
        raise InputError(where=where, text="the identity provider sent no issuer (the `iss` claim).")
    subject = clean(sub, "subject (sub)", SUBJECT_LIMIT, where=where)
    issuer = clean(iss, "issuer (iss)", ISSUER_LIMIT, where=where)
    email = None
    if _true(claims.get("email_verified")) and isinstance(claims.get("email"), str):  # unverified: never used
        email = clean(claims["email"], "e-mail", LABEL_LIMIT, required=False, where=where) or None
    if email:
        label = email
    else:
        name = claims.get("name") if isinstance(claims.get("name"), str) else None
        host = urllib.parse.urlsplit(issuer).hostname or issuer
        label = f"{clean(name, 'name', 200, required=False, where=where) or subject} at {host}"
    return Owner(issuer, subject, label[:LABEL_LIMIT]), email


@dataclass(frozen=True)
class Viewer:
    """Who is asking. ``login=False`` (no login configured): everyone who can reach the app sees and deletes every
    run. With a login, ``user`` is the signed-in :class:`Owner`: they see their own runs, runs shared with the
    project and runs saved without an owner (by a pipeline); delete their own and ownerless ones; never see another
    user's private run. ``email``: their verified e-mail, which takes over legacy runs (:meth:`RunStore.claim`)."""

    user: Owner | None = None
    login: bool = False
    email: str | None = None

    def __post_init__(self) -> None:
        if self.login and (not isinstance(self.user, Owner) or self.user.legacy):
            raise ValueError("a signed-in viewer needs a user: an Owner with an issuer and a subject")

    @classmethod
    def signed_in(cls, claims: Mapping[str, object], provider: str | None = None) -> Viewer:
        """The viewer an ID token's claims describe (see :func:`owner_from_claims`)."""
        owner, email = owner_from_claims(claims, provider)
        return cls(owner, login=True, email=email)

    def owns(self, owner: Owner | None) -> bool:
        return (self.login and owner is not None and not owner.legacy and self.user is not None
                and (owner.issuer, owner.subject) == (self.user.issuer, self.user.subject))

    def can_see(self, owner: Owner | None, visibility: str) -> bool:
        return not self.login or visibility == "project" or owner is None or self.owns(owner)

    def can_delete(self, owner: Owner | None, visibility: str) -> bool:
        """Whether the rule lets this viewer delete the run (a protected run is refused anyway: RunStore.delete)."""
        return not self.login or owner is None or self.owns(owner)

    def visible(self) -> ColumnElement[bool]:
        """The same rule as :meth:`can_see`, as a SQL condition on :class:`RunRow`."""
        if not self.login or self.user is None:  # a signed-in viewer has a user (__post_init__)
            return true()
        return or_(RunRow.visibility == "project", RunRow.owner.is_(None),
                   and_(RunRow.owner_issuer == self.user.issuer, RunRow.owner_subject == self.user.subject))


EVERYONE = Viewer()  #: no login: the CLI with a database URL, or an app without [auth]


def row_owner(r: RunRow) -> Owner | None:
    """A stored run's owner (``None``: saved without one)."""
    if r.owner is None and r.owner_subject is None:
        return None
    if r.owner_subject is None or r.owner_issuer is None:
        return Owner(None, None, r.owner or "")
    return Owner(r.owner_issuer, r.owner_subject, r.owner or r.owner_subject)


__all__ = ["EVERYONE", "Owner", "Viewer", "owner_from_claims", "row_owner"]
