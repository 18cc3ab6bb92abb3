"""An example bbopt plug-in: the ``widest-first`` policy and the ``widest`` backend of the
window model (see docs/runs.md, "Plug-ins")."""
