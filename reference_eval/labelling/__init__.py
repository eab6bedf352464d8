"""Labelling: people's labels of judged units, collected blind (``cogbench label``, ``cogbench labels``).

- ``labels_format``: the labels file, the sample and its blinding key (schemas ``labels``, ``labelling_sample``,
  ``labelling_key``), read back checked.
- ``sample``: the units of judged runs, drawn stratified with a seed; sample.json and the blinding key's contents.
- ``page``: ``label``: the static page (``assets/``) written, the key outside it.
- ``dataset``: ``labels dataset``: checked labels unblinded with the key, as Parquet + card for the Hub.
- ``cli``: ``label`` and ``labels`` (``check``, ``dataset``).
"""
