"""Tasks: joint feature maps, losses, oracles and metrics (one module per output structure)."""
