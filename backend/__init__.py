"""brainfs.backend"""
