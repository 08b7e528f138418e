"""The check of one loaded instance before any trial: the DBMS's own encryption status, the at-rest scan (canaries
and the data's known plaintext in every file), the label it earns and, when it passed, the threat model's first
pass. An encrypted config that is not encrypted is refused (the run measures nothing it cannot trust)."""

from __future__ import annotations

from typing import Any

from tdebench.api.engine import Instance
from tdebench.api.events import RunListener
from tdebench.api.workload import Workload
from tdebench.errors import RunFailed, TdebenchError
from tdebench.results.labels import label_status
from tdebench.verify.atrest import verify_at_rest
from tdebench.verify.threats import ThreatModel


def check_instance(label: str, instance: Instance, workload: Workload, threats: ThreatModel,
                   ui: RunListener) -> tuple[dict[str, Any], RunFailed | None]:
    """(verification.json's entry for ``label``, the refusal to raise once the entry is written, or None)."""
    if not workload.verify_after_load:  # plaintext until its trials switch it: the workload scans then
        return ({"engine": instance.config.engine, "passed": True, "encryption": str(instance.config.spec),
                 "deferred": f"the {workload.name} workload scans after each switch (measurements and samples/)"},
                None)
    if instance.scannable:
        ui.message(f"verifying encryption at rest for {label}")
    else:  # a server whose files tdebench cannot read: only its own word
        ui.message(f"checking the encryption status that {label}'s server reports: {instance.scan_note}")
    entry: dict[str, Any] = {"engine": instance.config.engine, "encryption": str(instance.config.spec)}
    failure: TdebenchError | None = None
    try:
        entry["status"] = instance.encryption_status()
        instance.check_encrypted(workload.table_names())
        if instance.scannable:
            markers = threats.new_markers(label)
            entry.update(verify_at_rest(instance, markers, known_plaintext=workload.known_plaintext))
        else:  # the server's files are out of reach: its own status, checked above, is all there is
            entry.update(passed=True, at_rest="not possible", note=instance.scan_note)
    except TdebenchError as exc:
        failure = exc
        entry.update(passed=False, error=exc.one_line())
    labelled = label_status(entry, instance.config.spec.is_plain)
    entry.update(label_status=labelled.status, label_note=labelled.note)
    if entry.get("passed"):
        ui.message(f"threat model of {label}: probing logs, temporary files, users, swap and TLS")
        entry["threats"] = threats.assess(label, instance, entry)
    if entry.get("passed") and labelled.flagged:
        ui.message(f"WARNING: {labelled.warning(label, str(instance.config.spec))}")
    return entry, None if entry.get("passed") else _refusal(label, instance, entry, failure)


def _refusal(label: str, instance: Instance, entry: dict[str, Any], failure: TdebenchError | None) -> RunFailed:
    if failure is not None:  # its own problem and fix, said once
        return RunFailed(f"encryption check failed for {label}: {failure.problem}",
                         f"{failure.fix or 'do not trust this configuration'} (details in verification.json)")
    what = f"{entry.get('marker_hits', 0)} marker hits in {entry.get('files_with_hits')}"
    if instance.config.spec.is_plain and instance.scannable:
        what = f"the plain twin shows no plaintext, so the scanner cannot be trusted ({what})"
    return RunFailed(f"at-rest verification failed for {label}: {what}",
                     "do not trust this configuration; see verification.json")
