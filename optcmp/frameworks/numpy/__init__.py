"""numpy: the host framework; its backend and the ops the problems evaluate with."""
