"""Query engines over CWB-format partitions: ``native`` (numpy) and ``cwb`` (real CQP)."""
