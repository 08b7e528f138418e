"""`--workload load`: TPC-H through client INSERT batches vs the bulk path, with and without keys during the load."""
