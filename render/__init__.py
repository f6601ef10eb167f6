"""Ground truth: a headless OpenGL renderer of puzzles at a judge station, and the corpus."""
