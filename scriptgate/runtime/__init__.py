"""What a tool is and how one call or one batch runs (no RestrictedPython here)."""
