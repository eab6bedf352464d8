"""Labelling: people's labels of judged units, collected blind (``cogbench label``, ``cogbench labels``).

- ``labels_format``: the labels file, the sample and its blinding key (schemas ``labels``, ``labelling_sample``,
  ``labelling_key``), read back checked.
"""
