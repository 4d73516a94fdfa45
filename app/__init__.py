"""The Roofline app's own code (Streamlit), beside its pages: ``streamlit_app.py`` is the entry point, ``pages/`` the
pages, and this package what they share. The engine, :mod:`roofcore`, never imports it (nor Streamlit): every
number, table and note comes from the engine (:mod:`roofcore.views` for what pages show); this package holds only
what needs Streamlit or a session.

Modules: :mod:`.state` (every session key, typed), :mod:`.memo` (results kept per session or shared per
analysis), :mod:`.messages` (engine text shown as alerts, the error guard), :mod:`.markdown` (escaping),
:mod:`.page` (what every page does first), :mod:`.workload` (the bundled example, uploads and the analysis,
cached per content), :mod:`.keys` (content keys), :mod:`.sidebar` (the shared sidebar), :mod:`.tables` (grid
settings), :mod:`.device_form` (your own devices), :mod:`.planner` (the Planner's starting points),
:mod:`.login` (the login gate), :mod:`.runs` (saved runs and share links).
"""
