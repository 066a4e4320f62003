"""Everything a batch needs, fetched and prepared before it is submitted: ``ssvmbench data
fetch PRESET|PAPER…`` loads each data setting the presets' runs use once, on the submitting
machine, so that the data files are downloaded and checked and their derived features cached
(:func:`ssvmbench.common.paths.cache_dir`) before any task starts; an array's tasks then find
them instead of all downloading at once."""

import time

from omegaconf import OmegaConf

from ssvmbench.batch.jobs import is_hydra_override
from ssvmbench.common import hydra_internals
from ssvmbench.data import load_split
from ssvmbench.papers import presets
from ssvmbench.run.compose import config, parse_overrides

SIZES = ("full", "smoke")


def data_settings(names):
    """The distinct data settings (``{name: ..., option: ...}``) the runs of the presets
    ``names`` (or papers' prefixes) use at both sizes, in the order they come."""
    settings = {}
    for name in presets.expand(names):
        for size in SIZES:
            for step in presets.commands(name, size, "OUT")[:-1]:
                words = [word for word in step[2:-1] if _is_data_word(word)]
                overrides = parse_overrides(words)
                for combination in hydra_internals.sweep_combinations(overrides):
                    data = OmegaConf.to_container(config(combination).data, resolve=True)
                    data.pop("subset", None)            # the same files, loaded in full
                    settings.setdefault(repr(sorted(data.items())), data)
    return list(settings.values())


def _is_data_word(word):
    key = word.lstrip("+~").split("=", 1)[0]
    return not is_hydra_override(word) and (key == "data" or key.startswith("data."))


def stage(names, root=None, say=print):
    """Load every data setting of the presets ``names`` once (downloading what is missing
    unless the setting says ``download: false``; ``root``: the data root to use instead of
    each setting's); says one line per setting. Returns how many there were."""
    settings = data_settings(names)
    for data in settings:
        start = time.perf_counter()
        options = {key: value for key, value in data.items() if key != "name"}
        if root is not None:
            options["root"] = str(root)
        split = load_split(data["name"], **options)
        say(f"staged data={data['name']} ({split.variant}): {split.train.n} training and "
            f"{split.test.n} test examples, {time.perf_counter() - start:.1f} s")
    return len(settings)
