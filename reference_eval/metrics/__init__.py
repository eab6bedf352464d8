"""Metrics: the papers' scores, one module per paper metric, each citing the section that defines it.

- ``recognition``: CogBench's Recognition Score (Description task).
- ``cognition``: CogBench's Cognition Score (Description task).
- ``vqa``: CogBench's VQA accuracy, with its two answer extractors.
- ``codis``: CODIS's Acc_p, Acc_q and context awareness.
- ``captioning``: traditional captioning metrics of the Description task (CogBench Appendix E).
- ``output_variability``: a CODIS model's output variability (CODIS Section 4.2).
- ``answer_bias``: a CODIS model's answer bias: word-pair frequencies (CODIS Section 5.2).
- ``aggregate``: pooling overall and per category.
- ``intervals``: confidence intervals and paired tests over images (units per image).
- ``paired_many``: the paired permutation test of ``intervals`` for many pairs over the same images at once.
- ``small_sample``: the Korn-Graubard interval, paired t differences, minimum detectable difference.
- ``circular``: the circular-VQA definitions.
- ``invariance``: the invariance probe's flip rate, invariant accuracy and scores per image variant.
- ``agreement``: two judges' agreement (Cohen's kappa, flips, Kendall's tau).
- ``human_agreement``: a judge against people's labels (kappa, Gwet's AC1, PABAK, constant judges, BCa intervals).
- ``panel_agreement``: a judge panel's agreement (Krippendorff's alpha, pairwise kappa, effective number of judges).
"""
