"""Reading the authors' raw files and writing dataset folders.

``raw`` finds and loads raw files, ``read`` turns them into typed records, ``build`` writes Parquet shards and the
manifest, ``load`` reads a built folder or Hub repo back through ``load_dataset``, ``fetch`` downloads the raw files.
"""
