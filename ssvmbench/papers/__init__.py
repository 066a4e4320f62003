"""The three papers, above everything but the doors: presets (one per figure or table,
``configs/experiment/``, read by ``presets``), the automatic checks of their claims
(``claims``), ``reproduce`` (runs, figures, report as one batch), ``staging`` (data fetched
before a batch), the report and its page (``report``, ``report_page``), and methods added
to the papers' figures with how they compare (``added``, ``comparison``). A new check of a
paper's claim goes in ``claims``; a new report section in ``report``. May import every
layer below the doors."""
