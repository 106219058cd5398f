"""TensorFlow: its backend, ops and ``keras.optimizers`` (imported when a run needs them)."""
