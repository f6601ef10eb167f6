"""Pure functions from BGR images (+ calibration) to observations, each with a confidence."""
