"""Tasks: joint feature maps, losses, oracles and metrics (one module per output structure)."""

from ssvmbench.data.boxes import BoxDataset
from ssvmbench.data.matchings import MatchingDataset
from ssvmbench.data.sequences import HashedChainDataset
from ssvmbench.errors import Incompatible


def make_task(dataset, loss="normalized_hamming"):
    """The task of a split: :class:`~ssvmbench.tasks.chain.ChainTask` for sequences (with the
    chosen ``loss``), :class:`~ssvmbench.tasks.boxes.BoxTask` for candidate boxes (1 - IoU),
    :class:`~ssvmbench.tasks.matching.MatchingTask` for word alignments (asymmetric
    Hamming); hashed sequences get :class:`~ssvmbench.tasks.hashed_chain.HashedChainTask`."""
    from ssvmbench.tasks.boxes import BoxTask
    from ssvmbench.tasks.chain import ChainTask
    from ssvmbench.tasks.hashed_chain import HashedChainTask
    from ssvmbench.tasks.matching import MatchingTask

    for data_type, task_type, what in ((BoxDataset, BoxTask, "box localization"),
                                       (MatchingDataset, MatchingTask, "word alignment")):
        if isinstance(dataset, data_type):
            if loss not in ("normalized_hamming", *task_type.LOSSES):
                raise Incompatible(f"loss={loss} is for sequences; {what} uses its task loss "
                                f"{task_type.LOSSES[0]} (drop the loss= override)")
            return task_type(dataset)
    if isinstance(dataset, HashedChainDataset):
        return HashedChainTask(dataset, loss)
    return ChainTask(dataset, loss)
