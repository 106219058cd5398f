"""PyTorch: its backend, ops and ``torch.optim``'s optimizers (imported when a run needs them)."""
