"""What server engines share: process ownership and cleanup (process), running as the service user (asuser),
memory caps (memcap), filesystem encryption (fsencrypt) and exposure probes (exposure). Imports no engine."""
