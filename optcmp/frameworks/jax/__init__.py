"""JAX: its backend, ops and optax's optimizers (imported when a run needs them)."""
