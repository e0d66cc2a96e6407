"""vLLM tuning emitters: the general plugin, MoE config files, anchored edits, and the flag check."""
