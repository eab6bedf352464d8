"""Why does my number differ? Two scorings explained stage by stage (``cogbench explain``), a run beside the papers.

- ``stages``: the pipeline's stages (items > prompt > image > generation > output > parse > judge > metric), compared per item.
- ``explain``: B - A split into the stages' shares by switching A's units to B's in pipeline order, exact.
- ``explain_text``: the explanation as Markdown and JSON.
- ``published_gap``: ``explain --published``: a run beside a papers' row, with the known protocol differences.
- ``explain_inputs``: A and B read and verified (run folders, details datasets, ``.eval_results`` files).
- ``explain_api``: ``explain``, named ``cogbench.explain``.
- ``report_section``: ``report``'s section on two runs of one model.
- ``cli``: ``explain``.
"""
