"""Both sides of Batsim's scheduler protocol (the JSON protocol of Batsim 4.x over ZeroMQ).

:mod:`~bbopt.interop.batsim.scheduler`: a bbopt policy as Batsim's scheduler (a REP socket that
Batsim connects to). :mod:`~bbopt.interop.batsim.server`: bbopt's simulator as Batsim (a REQ
socket that connects to a Batsim scheduler such as pybatsim's), writing bbopt's usual outputs.
:mod:`~bbopt.interop.batsim.protocol`: the messages both share, and their checks.
"""
