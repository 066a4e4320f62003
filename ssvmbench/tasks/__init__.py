"""Tasks: joint feature maps, losses, oracles and metrics (one module per output structure)."""

from ssvmbench.data.boxes import BoxDataset
from ssvmbench.errors import UserError


def make_task(dataset, loss="normalized_hamming"):
    """The task of a split: :class:`~ssvmbench.tasks.chain.ChainTask` for sequences (with the
    chosen ``loss``), :class:`~ssvmbench.tasks.boxes.BoxTask` for candidate boxes (1 - IoU)."""
    from ssvmbench.tasks.boxes import BoxTask
    from ssvmbench.tasks.chain import ChainTask

    if isinstance(dataset, BoxDataset):
        if loss not in ("normalized_hamming", *BoxTask.LOSSES):
            raise UserError(f"loss={loss} is for sequences; box localization uses its "
                            f"task loss {BoxTask.LOSSES[0]} (drop the loss= override)")
        return BoxTask(dataset)
    return ChainTask(dataset, loss)
