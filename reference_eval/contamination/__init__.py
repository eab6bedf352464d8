"""Is a training corpus contaminated with the benchmark's images? ``cogbench leak-scan`` (docs/contamination.md).

- ``corpus``: a corpus as a stream: image folders, WebDataset tar shards, Parquet with images or with hashes.
- ``search``: Hamming range search of corpus hashes against the benchmark's (faiss binary indexes), hex decoding.
- ``thresholds``: the calibrated thresholds and transform profiles, with their provenance.
- ``calibration``: the thresholds measured: harmless transforms of the benchmark's images, cross pairs, distractors.
- ``scan``: ``leak_scan``: every corpus image against the build's fingerprints, in batches, the closest kept.
- ``leak_report``: leak-scan.json, leak-scan.md and leak-scan.html (both images side by side, the site's style).
- ``cli``: ``cogbench leak-scan CORPUS...``.
"""
