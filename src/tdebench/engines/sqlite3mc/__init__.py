"""SQLite3 Multiple Ciphers (``apsw-sqlite3mc``): one SQLite 3.54 library, plain or with one of its page ciphers
(ChaCha20-Poly1305, AES-128/256-CBC, SQLCipher 4, Ascon-128, AEGIS)."""
