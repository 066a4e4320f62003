"""Figures and tables from run logs, beside the plugin kit and the estimators: curves over
seeds and their suboptimality reference (``curves``), the drawing (``figures``, ``html``,
``layout``, ``styles``, ``ticks``), the names curves carry (``names``), SAP's tables
(``sap_tables``), the plot options (``options``) and a plot's folder (``folder``). A new
figure kind goes in ``figures``. May import every layer up to batch; not the papers (a
preset's names and paper rows are handed in) nor the doors."""
