"""brainfs.dream"""
