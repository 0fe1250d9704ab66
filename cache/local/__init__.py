"""The working set: what a mount holds on local disk (blobs, the catalog and its journal, the preload pack) and how writes reach the bucket."""
