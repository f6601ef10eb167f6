"""ONNX models with their training code and model cards."""
