"""brainfs.cache"""
