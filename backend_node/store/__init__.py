"""The CWB-format corpus store: VRT reader, encoder and partitioner, memory-mapped reader."""
