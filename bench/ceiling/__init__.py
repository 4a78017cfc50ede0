"""The raw-SQL ceiling of `make bench`: the least a Django view can do for an event and for the
two reads, on the same PostgreSQL, served by the same gunicorn setup (bench/README.md)."""
