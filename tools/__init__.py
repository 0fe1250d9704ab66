"""Tools around the product that are not the mount: the sample-data generator (``brainfs
sample``, ``brainfs demo``, the benchmarks) and the naive mount (``brainfs mount --naive``,
the benchmarks' baseline)."""
