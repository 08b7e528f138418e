"""Whether the evidence supports a config's encryption label: ``confirmed``, ``overridden`` or ``unverifiable``.

Recorded per config at verification time (verification.json ``configs.<label>.label_status`` and
``label_note``, copied into manifest.json ``configs[]``), so every view of a run can show it:

* ``confirmed``: the server's status (and, for servers tdebench runs, the at-rest scan) supports the label;
* ``unverifiable``: encryption is confirmed but a part of the label is not reported by the server, e.g. the key
  length on MariaDB (its key file sets it, and no SQL shows it); the label says what was not verified;
* ``overridden``: the server contradicts the label or cannot confirm it, and ``--override-encryption-check``
  kept it anyway. Shown as "overridden, not confirmed" everywhere; such a run still exits 0 (the override was
  asked for) but warns on the console while it runs and at its end.

External targets write the status themselves (``tdebench.engines.toolkit.dbapi.status.label_status``, same words);
for the other engines it follows from the at-rest verification. Runs written before this existed have none:
:func:`label_status` derives it from what verification.json holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CONFIRMED, OVERRIDDEN, UNVERIFIABLE = "confirmed", "overridden", "unverifiable"
NOT_CHECKED = "not checked"
NOT_CONFIRMED = "not confirmed"
TEXT = {OVERRIDDEN: "overridden, not confirmed", NOT_CHECKED: "not checked", NOT_CONFIRMED: "not confirmed"}
STATUSES = (CONFIRMED, UNVERIFIABLE, OVERRIDDEN, NOT_CONFIRMED, NOT_CHECKED)


@dataclass(frozen=True)
class LabelStatus:
    """A config's label status and why (``note``); ``text`` is what a view prints beside the label."""

    status: str
    note: str = ""

    @property
    def confirmed(self) -> bool:
        return self.status == CONFIRMED

    @property
    def flagged(self) -> bool:
        """True when views must mark the label: overridden, unverifiable or not confirmed (not: unchecked)."""
        return self.status in (OVERRIDDEN, UNVERIFIABLE, NOT_CONFIRMED)

    @property
    def text(self) -> str:
        """``overridden, not confirmed`` / ``unverifiable: key length`` / ``confirmed``."""
        if self.status == UNVERIFIABLE:
            what = self.note.split(" not reported")[0] if " not reported" in self.note else ""
            return f"unverifiable: {what}" if what else UNVERIFIABLE
        return TEXT.get(self.status, self.status)

    def decorate(self, name: str) -> str:
        """``name`` with the status in parentheses when the label is :attr:`flagged`."""
        return f"{name} ({self.text})" if self.flagged else name

    def warning(self, config: str, encryption: str) -> str:
        """One line for the console and the report's warnings (empty unless :attr:`flagged`)."""
        if not self.flagged:
            return ""
        if self.status == OVERRIDDEN:
            return (f"config '{config}' is labelled {encryption}, but the label is OVERRIDDEN, NOT CONFIRMED: "
                    f"{self.note or 'the server does not confirm it'}")
        if self.status == UNVERIFIABLE:
            return (f"config '{config}' is labelled {encryption}, but part of the label is UNVERIFIABLE: "
                    f"{self.note or 'not reported by the server'}")
        return f"config '{config}' ({encryption}): label {self.text}" + (f": {self.note}" if self.note else "")


def label_status(entry: dict[str, Any] | None, plain: bool = False) -> LabelStatus:
    """The label status of one verification.json entry (derived for entries that do not record it).

    Runs without verification (e.g. imported logs) are ``not checked``, which views leave unmarked: their
    verification section already says so.
    """
    if not isinstance(entry, dict) or not entry:
        return LabelStatus(NOT_CHECKED)
    for source in (entry, entry.get("status") if isinstance(entry.get("status"), dict) else {}):
        if source.get("label_status") in STATUSES:
            return LabelStatus(str(source["label_status"]), str(source.get("label_note") or ""))
    on_disk = entry.get("encrypted_on_disk")
    if entry.get("passed") is False:
        return LabelStatus(NOT_CONFIRMED, str(entry.get("error") or ""))
    if isinstance(on_disk, bool):  # the at-rest scan of a server tdebench runs
        return (LabelStatus(CONFIRMED) if on_disk != plain else
                LabelStatus(NOT_CONFIRMED, "the at-rest scan " + ("found ciphertext only" if plain else
                                                                  "found plaintext")))
    return LabelStatus(NOT_CHECKED)


def manifest_label_status(entry: dict[str, Any] | None) -> LabelStatus | None:
    """The status a manifest ``configs[]`` entry records, if any."""
    if isinstance(entry, dict) and entry.get("label_status") in STATUSES:
        return LabelStatus(str(entry["label_status"]), str(entry.get("label_note") or ""))
    return None


__all__ = ["CONFIRMED", "NOT_CHECKED", "NOT_CONFIRMED", "OVERRIDDEN", "STATUSES", "UNVERIFIABLE", "LabelStatus",
           "label_status", "manifest_label_status"]
