"""The puzzle domain: geometry, notation, state, limits and the verdict. Pure Python, no I/O."""
