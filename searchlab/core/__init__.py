"""The core layer: records, the store and cache, sensors, expressions, threads, signals, the
OpenCL seam. It imports nothing above it (no run, domain or registry module), so every other
layer may build on it (issue 21, item 3: the folders show the layers)."""
