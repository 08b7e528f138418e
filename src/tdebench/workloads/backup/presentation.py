"""How a backup run is shown: backup and restore times and sizes, and whether each backup is encrypted
(tdebench.api.presentation)."""

from __future__ import annotations

from tdebench.api.presentation import Presentation, Section, StepGroup

TEST = "backup"
BACKUPS_NOTE = ("Encrypted = no canary marker and no known plaintext of the data found anywhere in the backup "
                "(compressed backups are decompressed for the scan). Restore = the backup put back in place of the "
                "data and the server running on it again, row counts checked.")

PRESENTATION = Presentation(
    title="Backup and restore",
    layout="steps",
    metrics={"tool_cpu": "CPU of the backup tools (mariadb-backup, pg_dump, gzip, …)"},
    step_groups=(StepGroup(TEST, "Backup and restore", ("elapsed", "bytes", "server_cpu", "tool_cpu")),),
    sections=(Section("backups", "Backups", test=TEST, note=BACKUPS_NOTE),),
)
