"""judgecam: a camera that judges twisty puzzles at a speedcubing judge station."""

__version__ = "0.1.0"
