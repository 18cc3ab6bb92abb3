"""bbopt's decisions for other tools: a warm decision service (:mod:`bbopt.interop.serve`, with
its client :mod:`bbopt.interop.client`) and both sides of Batsim's scheduler protocol
(:mod:`bbopt.interop.batsim`). DESIGN.md, "Layout": the interop faces beside the CLI.
"""
