"""ssvmbench's Hydra launchers (Hydra takes launchers only from the ``hydra_plugins``
namespace): ``hydra/launcher=local|joblib|slurm`` of ``ssvmbench run -m``."""
