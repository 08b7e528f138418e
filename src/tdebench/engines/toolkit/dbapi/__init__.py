"""Servers reached through a Python DB-API driver, whose SQL is translated from the canonical ``postgres`` family
(external targets and the local MySQL engine): the kinds of server (kinds), driver-level work (drivers), SQL
translation (translate), schema and load in the server's dialect (schema) and the server's own encryption status
(status)."""
