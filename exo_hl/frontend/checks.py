"""Former home of the static checks, now ``effects.wellformed``.

The checks are discharged by the effect analysis and are run on rewrite
results as well as on fresh code, so they live in ``effects``. This name
stays an alias of that module (the same module object) so that code
importing ``exo_hl.frontend.checks`` keeps working.
"""
import sys

from ..effects import wellformed as _wellformed

sys.modules[__name__] = _wellformed
