"""Former home of the call and data type rules, now ``core_ir.typerules``.

The rules work on plain IR and are needed below the frontend (the
re-checker in ``effects``, the rewrites), so they live in ``core_ir``. This
name stays an alias of that module (the same module object) so that code
importing ``exo_hl.frontend.typecheck`` keeps working.
"""
import sys

from ..core_ir import typerules as _typerules

sys.modules[__name__] = _typerules
