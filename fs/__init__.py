"""brainfs.fs"""
