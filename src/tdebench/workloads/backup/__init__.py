"""Backup workload: backup/restore durations with and without compression, and whether backups are encrypted."""
