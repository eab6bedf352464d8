"""How every number is shown: one rounding rule for the command line, report.md and the site.

A value is rounded half away from zero on its decimal text: the shortest text that reads back as the same
float (``repr``, what scores.json holds), so 31.25 shows as 31.3 and 0.125 as 0.13 (two decimals), as a
person rounds the number they read. Python's own format rounds the binary value half to even (31.2) and
JavaScript's ``toFixed`` rounds ties up (31.3): the site is given these texts, never rounding itself.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, localcontext


def fixed(value: float, digits: int = 1, sign: bool = False) -> str:
    """``value`` with ``digits`` decimals by the rule above; ``sign``: "+" before a value not below zero."""
    number = float(value)
    if not math.isfinite(number):
        return f"{number:{'+' if sign else ''}}"
    with localcontext() as context:
        context.prec = 400  # every float's shortest text, quantized at any digits asked
        rounded = Decimal(repr(number)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{rounded:{'+' if sign else ''}f}"
