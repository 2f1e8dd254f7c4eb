"""Shared helpers for rewrites: the common skeleton every primitive follows.

This module only gathers the helpers, which live by role: ``_locate``
(cursors, patterns and strings -> paths and nodes), ``_check`` (shared
safety checks), ``_build`` (new IR at a path), ``_forward`` (how paths
move), ``_reject`` (every ``SchedulingError``). Rewrites keep importing it
as ``from . import _common as C``; new helpers go into the module of their
role and are re-exported here.

Every rewrite module reads the same way::

    def my_rewrite(proc, target, ...):
        # 1. locate: turn the user's target (cursor or pattern) into a path
        path, stmt = C.resolve_loop(proc, target, "my_rewrite")
        # 2. check: the safety condition (effects/), else
        #    raise C.reject(proc, stmt, "my_rewrite: why not")
        # 3. build: the new IR, sharing unchanged subtrees
        new_ir = C.replace_stmts_at(proc.ir(), path, new_stmts)
        # 4. record: provenance (re-checks the result like fresh code), and
        #    how old cursors map onto the result
        return derive(proc, new_ir, "my_rewrite",
                      forward=C.forward_replace(path, len(new_stmts)))

Paths follow ``exo_hl.cursors``: a statement path is a tuple of
``(field, index)`` steps starting with ``('body', i)``.

Forward functions map a statement path of the old procedure to the new
one, and raise ``InvalidCursorError`` for statements that no longer exist.
The ``forward_*`` helpers below cover the usual shapes (insert, delete,
replace, wrap, unwrap, move) and compose with ``forward_compose``. A
rewrite that keeps every statement where it was passes ``forward=None``.
"""
from __future__ import annotations

from ..core_ir.paths import Path
from ..cursors import (GapCursor, InvalidCursorError, get_expr, get_list,
                       get_stmt)
from ..frontend.fragment import names_at
from ._build import (insert_stmts_at, ranges_at, replace_block_at,
                     replace_stmts_at, simplify_at)
from ._check import (MOVES, Moved, bounds_depend_on, check_moved,
                     check_unchanged_by, config_fields_written, is_count,
                     names_in_use)
from ._forward import (Forward, forward_compose, forward_delete,
                       forward_exprs, forward_lists,
                       forward_fission, forward_hoist, forward_insert,
                       forward_move, forward_replace, forward_replace_block,
                       forward_replace_by_new,
                       forward_table, forward_unwrap, forward_wrap)
from ._locate import (Block, Buffer, check_identifier, directly_after,
                      directly_inside, parse_expr_at, resolve_alloc_dim,
                      resolve_alloc, resolve_block, resolve_buffer,
                      resolve_expr,
                      resolve_loop, resolve_pair, resolve_position,
                      resolve_stmt, to_cursor)
from ._reject import (_prefix, _proc_error, reject, scheduling_error,
                      stmt_text)

__all__ = [
    "Path", "Forward", "stmt_text", "reject", "scheduling_error",
    "to_cursor", "resolve_stmt", "resolve_position", "resolve_loop", "resolve_pair",
    "directly_inside", "directly_after", "resolve_block", "resolve_expr",
    "resolve_buffer", "resolve_alloc", "resolve_alloc_dim", "check_identifier", "Block",
    "Buffer", "names_at", "parse_expr_at", "replace_block_at",
    "replace_stmts_at", "insert_stmts_at", "ranges_at", "simplify_at",
    "forward_replace_block", "forward_replace", "forward_fission",
    "forward_hoist", "forward_insert", "forward_delete", "forward_wrap",
    "forward_unwrap", "forward_move", "forward_table", "forward_compose",
    "forward_exprs", "forward_lists", "forward_replace_by_new",
    "config_fields_written", "check_unchanged_by", "bounds_depend_on",
    "Moved", "MOVES", "check_moved",
    "is_count", "InvalidCursorError", "get_stmt", "get_list", "get_expr",
    "GapCursor", "_prefix", "_proc_error",
]
