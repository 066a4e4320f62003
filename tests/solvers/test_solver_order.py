"""+solver.order=FILE: a solver visits the examples of a file in turn instead of drawing them
(how scripts/peer_bcfwstruct.sh runs ours in the BCFW authors' order)."""

import numpy as np
import pytest
from omegaconf import OmegaConf

from ssvmbench.common.errors import UserError
from ssvmbench.data.synthetic import random_chains
from ssvmbench.solvers import make_solver
from ssvmbench.tasks.chain_task import ChainTask

TASK = ChainTask(random_chains(20, 3, 6, lengths=(1, 5), seed=4))
LAM = 0.05


def weights(name, seed, order=None, passes=3):
    options = {"iterates": ["raw", "wavg"], **({"order": str(order)} if order else {})}
    solver = make_solver(name, TASK, LAM, options, seed)
    solver.run_until(passes * TASK.n)
    return np.concatenate([w for _, w, _ in solver.iterates()])


@pytest.mark.parametrize("name", ["bcfw", "ssg", "sap"])
def test_a_replayed_order_is_the_run_that_drew_it(tmp_path, name):
    """The order a seed draws (uniform, a pass at a time), written to a file and replayed
    under another seed, gives that seed's run bit for bit; another order does not."""
    rng = np.random.default_rng(7)
    drawn = np.concatenate([rng.integers(0, TASK.n, size=TASK.n) for _ in range(3)])
    path = tmp_path / "order.txt"
    np.savetxt(path, drawn, fmt="%d")
    options = {"sampling": "uniform"} if name == "sap" else {}
    solver = make_solver(name, TASK, LAM, {**options, "iterates": ["raw"]}, 7)
    solver.run_until(3 * TASK.n)
    own = solver.iterates()[0][1]
    replay = make_solver(name, TASK, LAM, {"iterates": ["raw"], "order": str(path)}, 123)
    replay.run_until(3 * TASK.n)
    assert np.array_equal(replay.iterates()[0][1], own)
    np.savetxt(path, drawn[::-1], fmt="%d")
    other = make_solver(name, TASK, LAM, {"iterates": ["raw"], "order": str(path)}, 7)
    other.run_until(3 * TASK.n)
    assert not np.array_equal(other.iterates()[0][1], own)


def test_an_order_used_up_or_out_of_range_is_refused(tmp_path):
    path = tmp_path / "order.txt"
    path.write_text(" ".join(str(i % TASK.n) for i in range(TASK.n + 3)))
    solver = make_solver("bcfw", TASK, LAM, {"order": str(path)}, 0)
    solver.run_until(TASK.n)
    with pytest.raises(UserError, match="used up after 1.15 passes"):
        solver.run_until(2 * TASK.n)      # 3 indices left for the second pass
    path.write_text(f"0 1 {TASK.n}")
    with pytest.raises(UserError, match=f"0..{TASK.n - 1}"):
        make_solver("bcfw", TASK, LAM, {"order": str(path)}, 0)
    with pytest.raises(UserError, match="cannot read"):
        make_solver("bcfw", TASK, LAM, {"order": str(tmp_path / "missing.txt")}, 0)


def test_only_a_sampling_solver_takes_an_order():
    cfg = OmegaConf.create({"solver": {"name": "bcfw", "passes": 1, "order": "x.txt"}})
    assert "order" in read_solver_names(cfg)
    cfg.solver.name = "fw"
    with pytest.raises(UserError, match="solver.order: not an option of solver fw"):
        read_solver_names(cfg)


def read_solver_names(cfg):
    from ssvmbench.solvers import solver_class
    options = OmegaConf.to_container(cfg.solver)
    options.pop("passes")
    solver_class(options.pop("name")).check_option_names(list(options))
    return options


def test_a_run_replays_an_order_end_to_end(data_root, tmp_path):
    """``ssvmbench run … +solver.order=FILE`` (the warm-up on two examples leaves the order
    alone): seed 0 in the order seed 5 draws logs seed 5's run."""
    from ssvmbench import api
    common = ["solver=bcfw", "data=ocr", f"data.root={data_root}", "+data.subset=0.02",
              "lambda=0.01", "solver.passes=2"]
    own, attrs = api.run(common + ["seed=5"], tmp_path / "own")
    n = attrs["n"]
    rng = np.random.default_rng(5)
    path = tmp_path / "order.txt"
    np.savetxt(path, np.concatenate([rng.integers(0, n, size=n) for _ in range(2)]), fmt="%d")
    replay, _ = api.run(common + ["seed=0", f"+solver.order={path}"], tmp_path / "replay")
    assert len(own) == len(replay) == 4                     # raw and wavg, 2 passes
    assert np.array_equal(own["primal"].to_numpy(), replay["primal"].to_numpy())
    assert np.array_equal(own["dual"].to_numpy(), replay["dual"].to_numpy())
