"""The run's key server (docs/key-management.md): a private OpenBao, or the user's own, read only."""
