"""CRUD workload: SELECT / INSERT / DELETE batches on a wide Persons table (see docs/workloads/crud.md)."""
