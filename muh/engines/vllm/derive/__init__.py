"""Derive, for a ``deploy`` block: the engine's flags checked, its tuning numbers with their rules, the
tuning points reached or dead, all in a ``VllmPlan`` that codegen only renders.

``rules`` (numbers from the hardware block), ``tuning`` (knob, rebind and point tables), ``engine``
(a release's exact CLI, from ``data/``), ``flags`` (spec settings → argv), ``edits`` (anchored
sites), ``plan`` (the resolved model), ``build_plan`` (deploy block → plan), which runs one module per
part of the block: ``serve``, ``knobs`` (the ``tune`` block), ``moe``, ``run``, ``conditional``, ``evidence``,
``points`` (``context``: what they share).
"""
