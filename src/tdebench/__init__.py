"""tdebench: what encryption at rest costs a database, with proof the data is encrypted."""

__version__ = "0.1.0"
