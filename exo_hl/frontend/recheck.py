"""Former home of the incremental re-checker, now ``effects.recheck``.

Rewrite results are re-checked below the rewrites and the facade, so the
re-checker lives in ``effects``. This name stays an alias of that module
(the same module object, so patching one patches the other) so that code
importing ``exo_hl.frontend.recheck`` keeps working.
"""
import sys

from ..effects import recheck as _recheck

sys.modules[__name__] = _recheck
