"""Reading the authors' raw files and writing dataset folders.

- ``raw``: find and load raw files.
- ``memory``: flat memory for the image-streaming commands.
- ``read``: the one raw reader: raw files -> typed records + problems (used by ``validate`` and ``build``).
- ``build``: records -> Parquet shards + manifest.
- ``fingerprints``: per-image sha256 and perceptual hashes (pHash, dHash, wHash; PDQ when pdqhash is there).
- ``croissant``: the build's Croissant 1.0 metadata, rendered from the manifest.
- ``eval_yaml``: the build's ``eval.yaml``: its Hub benchmark tasks, one per config and metric family.
- ``mm_eval``: the build's ``metadata.json``: per config its prompt templates as rendered, their tier, the scripts.
- ``output``: safe output folders (marker, locked swap) and ``claim_output``, the one rule of every ``--out``.
- ``writes``: the one way every command writes a file: no link followed, exclusive temporaries, atomic replace.
- ``load``: ``load_dataset`` on a folder or Hub repo.
- ``fetch``: download raw files pinned by sha256 (``raw_files.json``); ``against_release`` for manifest and card.
- ``cli``: ``fetch-raw`` (``build`` is a release command, in ``cards.cli``).
"""
