"""The oracle record: which hinge oracle a primal solver calls, max, top-K or exp (Pillutla
et al., NeurIPS 2018, Section 2, Definition 1), chosen with ``oracle=max|topk|exp``,
``oracle.K``, ``oracle.mu``, ``oracle.ties``; validated once, with the work arrays its calls
take. Below every task and solver: the seam between them (the chain's oracles themselves are
:mod:`ssvmbench.tasks.chain_oracles`)."""

from dataclasses import dataclass

from ssvmbench.common.errors import UserError, number
from ssvmbench.tasks.scratch import exp_buffers, topk_buffers, viterbi_scratch

KINDS = {"max": 0, "topk": 1, "exp": 2}
TOPK_CASIMIR_TIES = 3   # the compiled kind of the top-K oracle with oracle.ties=casimir
TIES = ("scan",      # ours: the best predecessor's list first, then the others by label
        "casimir")   # the Casimir authors' viterbi.pyx: larger previous label, then rank
MAX_K = 1000


@dataclass(frozen=True)
class Oracle:
    """A validated oracle choice: ``name`` in :data:`KINDS`, ``K`` (top-K), ``mu``
    (smoothing of top-K and exp) and ``ties``, the order among tied labelings of the top-K
    oracle (:data:`TIES`)."""

    name: str = "max"
    K: int = 1
    mu: float = 0.0
    ties: str = "scan"

    def __post_init__(self):
        if self.name not in KINDS:
            raise UserError(f"oracle={self.name}: choose one of {list(KINDS)}")
        K, mu = number("oracle.K", self.K), number("oracle.mu", self.mu)
        if self.name == "topk" and not (K.is_integer() and 1 <= K <= MAX_K):
            raise UserError(f"oracle.K={self.K} must be a whole number in [1, {MAX_K}]: the "
                            "top-K oracle keeps K partial labelings per token and label, its "
                            "time and memory grow with K (Casimir uses K = 5)")
        if self.name != "max" and not mu > 0:
            raise UserError(f"oracle.mu={self.mu} must be > 0 for oracle={self.name}")
        if not mu >= 0:
            raise UserError(f"oracle.mu={self.mu} must be >= 0 (the smoothing of top-K and exp)")
        if self.ties not in TIES:
            raise UserError(f"oracle.ties={self.ties}: choose one of {list(TIES)} (the order "
                            "among tied labelings of the top-K oracle)")
        if self.ties != "scan" and self.name != "topk":
            raise UserError(f"oracle.ties={self.ties} orders the top-K oracle's ties; "
                            f"oracle={self.name} has none to order")
        object.__setattr__(self, "K", int(K))
        object.__setattr__(self, "mu", 0.0 if self.name == "max" else mu)  # max: unsmoothed

    @property
    def kind(self):
        """The compiled oracle code: :data:`KINDS`, or :data:`TOPK_CASIMIR_TIES`."""
        return TOPK_CASIMIR_TIES if self.ties == "casimir" else KINDS[self.name]

    @property
    def call(self):
        """``(kind, K, mu)``: what the compiled oracle calls take."""
        return self.kind, self.K, self.mu

    def label(self):
        """Parts of a method name for plots: none for the max oracle."""
        if self.name == "max":
            return []
        return [self.name] + ([f"K{self.K}"] if self.name == "topk" else []) + [
            f"mu{self.mu:g}"] + ([f"ties={self.ties}"] if self.ties != "scan" else [])

    def buffers(self, max_len, L):
        """Scratch for :func:`~ssvmbench.tasks.chain_oracles.hinge_oracle` (the unused oracles'
        parts are tiny)."""
        K = self.K if self.name == "topk" else 1
        exp_len = max_len if self.name == "exp" else 1
        return (viterbi_scratch(max_len, L), topk_buffers(max_len, L, K),
                exp_buffers(exp_len, L))
