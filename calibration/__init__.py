"""Colour schemes, camera intrinsics and rig geometry: measured, saved and validated."""
