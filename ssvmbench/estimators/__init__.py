"""scikit-learn estimators on any solver, beside plotting and the plugin kit: the estimator
classes (``estimator``, public as ``ssvmbench.estimator``; ``ChainSSVM``) and scikit-learn's
optional base classes and input checks (``sklearn_support``). May import every layer up to
batch; not plotting, the plugin kit, the papers or the doors."""
